import COpenSSL

/// The one BIO between OpenSSL and a ``TLSSession``, for both directions,
/// reading and writing the session's own buffers.
///
/// Two memory BIOs would each keep a buffer as large as the largest flight
/// that ever passed through it (a certificate chain, a burst of stanzas) for
/// as long as the connection lives. Here OpenSSL reads the caller's
/// ciphertext in place during ``withInput(_:_:)``, and only a record left
/// unfinished at its end is copied and kept; what OpenSSL writes collects in
/// an array that ``takeOutput()`` hands over whole. An idle session keeps
/// neither.
///
/// Not `Sendable`, like its session. OpenSSL owns the `BIO *` (the `SSL *`
/// frees it); its data pointer is this object, unretained, so the session
/// keeps this object alive for as long as the `SSL *`.
final class CiphertextBIO {
    /// The `BIO *`, to give to `SSL_set_bio` as both read and write BIO.
    let bio: OpaquePointer
    /// Ciphertext from the peer that an earlier ``withInput(_:_:)`` left
    /// unread: part of a record OpenSSL did not ask for yet.
    private var unread: [UInt8] = []
    /// The caller's ciphertext during ``withInput(_:_:)``; what of it was read.
    private var input = UnsafeRawBufferPointer(start: nil, count: 0)
    private var inputRead = 0
    /// Ciphertext OpenSSL wrote for the peer, not yet taken.
    private var output: [UInt8] = []

    /// Creates the BIO; OpenSSL fails here only when out of memory.
    init() {
        guard let bio = BIO_new(Self.method.pointer) else { fatalError("OpenSSL is out of memory") }
        self.bio = bio
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Ciphertext bytes from the peer that OpenSSL has not read yet.
    var pendingInputCount: Int { unread.count + input.count - inputRead }

    /// Ciphertext bytes waiting to be written to the peer.
    var pendingOutputCount: Int { output.count }

    /// Runs `body` with `ciphertext` readable by OpenSSL after anything left
    /// from before; what OpenSSL did not read is kept for the next call.
    func withInput<Result>(_ ciphertext: UnsafeRawBufferPointer, _ body: () throws(TLSError) -> Result)
        throws(TLSError) -> Result
    {
        input = ciphertext
        inputRead = 0
        defer {
            if inputRead < input.count { unread += input[inputRead...] }
            input = UnsafeRawBufferPointer(start: nil, count: 0)
            inputRead = 0
        }
        return try body()
    }

    /// Removes and returns the ciphertext waiting for the peer.
    func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    // MARK: - OpenSSL's side

    /// Copies up to `capacity` unread bytes to `destination`; 0 when there
    /// are none.
    fileprivate func read(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        if !unread.isEmpty {
            let count = min(capacity, unread.count)
            unread.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress!, byteCount: count) }
            if count == unread.count { unread = [] } else { unread.removeFirst(count) }
            return count
        }
        let count = min(capacity, input.count - inputRead)
        guard count > 0 else { return 0 }
        destination.copyMemory(from: input.baseAddress! + inputRead, byteCount: count)
        inputRead += count
        return count
    }

    fileprivate func write(_ bytes: UnsafeRawBufferPointer) {
        output += bytes
    }

    /// The object behind a `BIO *` of this kind.
    fileprivate static func of(_ bio: OpaquePointer?) -> CiphertextBIO {
        Unmanaged<CiphertextBIO>.fromOpaque(BIO_get_data(bio)!).takeUnretainedValue()
    }

    /// The `BIO_METHOD`, made once per process and never freed.
    private static let method = Method()

    /// `@unchecked Sendable`: OpenSSL never changes a `BIO_METHOD` once its
    /// callbacks are set, and they are set before anyone can see it.
    private struct Method: @unchecked Sendable {
        let pointer: OpaquePointer

        init() {
            let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
            guard let method = BIO_meth_new(type, "swiftlet ciphertext") else {
                fatalError("OpenSSL is out of memory")
            }
            BIO_meth_set_create(method) { bio in
                BIO_set_init(bio, 1)
                return 1
            }
            BIO_meth_set_write_ex(method) { bio, data, length, written in
                CiphertextBIO.of(bio).write(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: length))
                written?.pointee = length
                return 1
            }
            BIO_meth_set_read_ex(method) { bio, data, capacity, read in
                swiftlet_BIO_clear_retry_flags(bio)
                let count = CiphertextBIO.of(bio).read(into: UnsafeMutableRawPointer(data!), capacity: capacity)
                read?.pointee = count
                // Nothing to read means "wait for more", not end of stream.
                if count == 0 { swiftlet_BIO_set_retry_read(bio) }
                return count > 0 ? 1 : 0
            }
            BIO_meth_set_ctrl(method) { bio, command, _, _ in
                switch command {
                case BIO_CTRL_FLUSH: 1
                case BIO_CTRL_PENDING: CiphertextBIO.of(bio).pendingInputCount
                case BIO_CTRL_WPENDING: CiphertextBIO.of(bio).pendingOutputCount
                default: 0
                }
            }
            pointer = method
        }
    }
}
