#ifndef SWIFTLET_COPENSSL_SHIM_H
#define SWIFTLET_COPENSSL_SHIM_H
// OpenSSL: digests, HMAC, PBKDF2 and randomness for SASL; ES256 signatures
// for push provider tokens; TLS for the server and the client. Macros Swift
// cannot import get a static inline wrapper here.
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <string.h>

// TLS (Sources/XMPPCore/TLS). Option bits are built with a macro Swift
// cannot import, so they are re-exported as constants.
static const uint64_t swiftlet_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const uint64_t swiftlet_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t swiftlet_SSL_OP_CIPHER_SERVER_PREFERENCE = SSL_OP_CIPHER_SERVER_PREFERENCE;

static inline int swiftlet_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int swiftlet_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long swiftlet_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline int swiftlet_SSL_CTX_add0_chain_cert(SSL_CTX *ctx, X509 *certificate) {
    return (int)SSL_CTX_add0_chain_cert(ctx, certificate);
}

static inline int swiftlet_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline int swiftlet_SSL_get_extms_support(SSL *ssl) {
    return (int)SSL_get_extms_support(ssl);
}

static inline long swiftlet_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

static inline void swiftlet_BIO_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}

static inline void swiftlet_BIO_clear_retry_flags(BIO *bio) {
    BIO_clear_retry_flags(bio);
}

static inline EVP_PKEY *swiftlet_EVP_EC_gen(const char *curve) {
    return EVP_EC_gen(curve);
}
#endif
