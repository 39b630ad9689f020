import COpenSSL

/// The SHA-256 digest of a certificate's DER encoding, as `openssl x509
/// -fingerprint -sha256` prints it and as users compare it by eye.
///
/// The server logs its own at start; a client pins it with
/// ``TLSVerification/pinned(_:)``.
public struct CertificateFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// Wraps 32 digest bytes; `nil` for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == HashFunction.sha256.outputByteCount else { return nil }
        self.bytes = bytes
    }

    /// Parses 64 hex digits, in either case, optionally separated by colons
    /// (`AB:CD:…`) or spaces; `nil` for anything else.
    public init?(hex text: String) {
        var digits: [UInt8] = []
        for character in text.utf8
        where character != UInt8(ascii: ":") && character != UInt8(ascii: " ") {
            guard let value = Hex.digitValue(character) else { return nil }
            digits.append(value)
        }
        guard digits.count == 2 * HashFunction.sha256.outputByteCount else { return nil }
        self.bytes = stride(from: 0, to: digits.count, by: 2).map {
            digits[$0] << 4 | digits[$0 + 1]
        }
    }

    /// The fingerprint of a certificate given in DER.
    public init(certificateDER: [UInt8]) {
        self.bytes = HashFunction.sha256.hash(certificateDER)
    }

    /// The fingerprint of the first certificate in `pem`.
    ///
    /// - Throws: `TLSError` (`.invalidConfiguration`) if `pem` holds no
    ///   certificate.
    public init(certificatePEM pem: String) throws(TLSError) {
        let certificate = try X509Certificates.readFirst(pem: pem)
        defer { X509_free(certificate) }
        self.init(certificate: certificate)
    }

    /// The fingerprint of an OpenSSL `X509`.
    init(certificate: OpaquePointer) {
        self.init(certificateDER: X509Certificates.der(certificate))
    }

    /// Uppercase hex pairs joined by colons.
    public var description: String {
        bytes.map { Hex.encode([$0], uppercase: true) }.joined(separator: ":")
    }
}

/// Reading and encoding OpenSSL `X509` certificates.
enum X509Certificates {
    /// The DER encoding of `certificate`.
    ///
    /// The corresponding C function is `i2d_X509`.
    static func der(_ certificate: OpaquePointer) -> [UInt8] {
        let length = Int(i2d_X509(certificate, nil))
        // A certificate that was parsed or signed always encodes.
        precondition(length > 0, "i2d_X509 failed")
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            var cursor = buffer.baseAddress
            initialized = Int(i2d_X509(certificate, &cursor))
        }
    }

    /// Parses the first certificate of `pem`; the caller frees it.
    static func readFirst(pem: String) throws(TLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        let bio = try MemoryBIO.reading(pem)
        defer { BIO_free(bio) }
        return try readFirst(from: bio, describing: "PEM text")
    }

    /// Parses the first certificate of the PEM file at `path`; the caller
    /// frees it.
    ///
    /// The corresponding C function is `BIO_new_file`.
    static func readFirst(path: String) throws(TLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let bio = BIO_new_file(path, "r") else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot read \(path)")
        }
        defer { BIO_free(bio) }
        return try readFirst(from: bio, describing: path)
    }

    /// The corresponding C function is `PEM_read_bio_X509`.
    private static func readFirst(from bio: OpaquePointer, describing source: String)
        throws(TLSError) -> OpaquePointer
    {
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "no PEM certificate in \(source)")
        }
        return certificate
    }
}

/// OpenSSL memory BIOs for PEM text.
enum MemoryBIO {
    /// A read-only BIO over a copy of `text`; the caller frees it.
    ///
    /// The corresponding C functions are `BIO_new` and `BIO_write`.
    static func reading(_ text: String) throws(TLSError) -> OpaquePointer {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot allocate a BIO")
        }
        var text = text
        let written = text.withUTF8 { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
        guard written == text.utf8.count else {
            BIO_free(bio)
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot buffer PEM text")
        }
        return bio
    }

    /// Runs `write` on a fresh memory BIO and returns what it wrote, or
    /// `nil` if `write` returned a value other than 1.
    ///
    /// The corresponding C function is `BIO_get_mem_data`.
    static func text(_ write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        var data: UnsafeMutablePointer<CChar>?
        let length = swiftlet_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return nil }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
