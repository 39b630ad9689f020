#ifndef SWIFTLET_COPENSSL_SHIM_H
#define SWIFTLET_COPENSSL_SHIM_H
// OpenSSL: digests, HMAC, PBKDF2 and randomness for SASL; TLS for the server
// and the client. Macros Swift cannot import get a static inline wrapper here.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#endif
