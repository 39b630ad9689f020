import XMPPCore

extension TLSSession {
    /// Seals `plaintext`; returns the records to write to the socket.
    func seal(_ plaintext: [UInt8]) throws(TLSError) -> [UInt8] {
        try send(plaintext: plaintext)
        return takeOutput()
    }

    /// Opens records read from the socket; returns the plaintext and the
    /// records TLS wants sent back (handshake messages, alerts), if any.
    func open(_ ciphertext: UnsafeRawBufferPointer) throws(TLSError) -> (plaintext: [UInt8], reply: [UInt8]) {
        let plaintext = try receive(ciphertext: ciphertext)
        return (plaintext, takeOutput())
    }
}
