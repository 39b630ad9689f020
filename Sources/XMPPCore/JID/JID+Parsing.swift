/// Splitting a JID and preparing its localpart and resourcepart (RFC 7622
/// §3.1, §3.3, §3.4), with byte-level fast paths for ASCII input.
extension JID {
    /// The limit RFC 7622 §3.2, §3.3 and §3.4 put on each prepared part.
    static let maximumPartLength = 1023

    /// Input longer than this cannot prepare to 1023 bytes or fewer: no
    /// mapping used here shrinks UTF-8 text by more than a factor of three
    /// (fullwidth forms to ASCII, KELVIN SIGN to `k`, Hangul jamo to
    /// syllables). Rejecting it early bounds the work an attacker can cause.
    static let maximumRawPartLength = 4 * maximumPartLength

    /// The fast path of `init(_:)`: splits and prepares a JID with byte
    /// scans. Returns `nil` as soon as a part turns out to contain non-ASCII,
    /// and the caller starts over on the Unicode path. Errors thrown here are
    /// the ones the Unicode path would throw, since every part is checked in
    /// the same order and an ASCII part gets the same answer on both paths.
    static func parseASCII(_ bytes: UnsafeBufferPointer<UInt8>) throws(JIDError) -> JID? {
        // '/' and '@' are single bytes that never occur inside a multi-byte
        // UTF-8 sequence, so a byte search finds the same separators as a
        // scalar search (RFC 7622 §3.1).
        let slash = bytes.firstIndex(of: UInt8(ascii: "/"))
        let headEnd = slash ?? bytes.endIndex
        let at = bytes[..<headEnd].firstIndex(of: UInt8(ascii: "@"))
        var localpart: String?
        if let at {
            guard let prepared = try asciiLocalpart(UnsafeBufferPointer(rebasing: bytes[..<at]))
            else {
                return nil
            }
            localpart = prepared
        }
        let domainStart = at.map { $0 + 1 } ?? bytes.startIndex
        let domainBytes = UnsafeBufferPointer(rebasing: bytes[domainStart..<headEnd])
        guard let domainpart = try asciiDomainpart(domainBytes) else { return nil }
        var resourcepart: String?
        if let slash {
            let resourceBytes = UnsafeBufferPointer(rebasing: bytes[(slash + 1)...])
            guard let prepared = try asciiResourcepart(resourceBytes) else { return nil }
            resourcepart = prepared
        }
        return JID(prepared: localpart, domainpart, resourcepart)
    }

    /// Enforces UsernameCaseMapped plus the localpart exclusions of RFC 7622
    /// §3.3.1.
    static func prepareLocalpart(_ raw: Substring) throws(JIDError) -> String {
        if let ascii = try raw.withContiguousUTF8(asciiLocalpart) { return ascii }
        let prepared: String
        do {
            prepared = try PRECIS.usernameCaseMappedUnicode(raw)
        } catch {
            throw JIDError(.localpart, precisError: error)
        }
        try checkLocalpartExclusions(prepared.utf8)
        guard prepared.utf8.count <= maximumPartLength else { throw JIDError(.localpart, .tooLong) }
        return prepared
    }

    /// Enforces OpaqueString (RFC 7622 §3.4.2).
    static func prepareResourcepart(_ raw: Substring) throws(JIDError) -> String {
        if let ascii = try raw.withContiguousUTF8(asciiResourcepart) { return ascii }
        let prepared: String
        do {
            prepared = try PRECIS.opaqueStringUnicode(raw)
        } catch {
            throw JIDError(.resourcepart, precisError: error)
        }
        guard prepared.utf8.count <= maximumPartLength else {
            throw JIDError(.resourcepart, .tooLong)
        }
        return prepared
    }

    /// The localpart if `bytes` are ASCII, else `nil` (after the size guard,
    /// which applies to both paths).
    private static func asciiLocalpart(_ bytes: UnsafeBufferPointer<UInt8>) throws(JIDError)
        -> String?
    {
        guard bytes.count <= maximumRawPartLength else { throw JIDError(.localpart, .tooLong) }
        let prepared: String?
        do {
            prepared = try PRECIS.asciiUsernameCaseMapped(bytes)
        } catch {
            throw JIDError(.localpart, precisError: error)
        }
        guard let prepared else { return nil }
        // The excluded characters have no case, so the input bytes will do.
        try checkLocalpartExclusions(bytes)
        guard bytes.count <= maximumPartLength else { throw JIDError(.localpart, .tooLong) }
        return prepared
    }

    /// The resourcepart if `bytes` are ASCII, else `nil`.
    private static func asciiResourcepart(
        _ bytes: UnsafeBufferPointer<UInt8>
    ) throws(JIDError) -> String? {
        guard bytes.count <= maximumRawPartLength else { throw JIDError(.resourcepart, .tooLong) }
        let prepared: String?
        do {
            prepared = try PRECIS.asciiOpaqueString(bytes)
        } catch {
            throw JIDError(.resourcepart, precisError: error)
        }
        guard let prepared else { return nil }
        guard bytes.count <= maximumPartLength else { throw JIDError(.resourcepart, .tooLong) }
        return prepared
    }

    /// RFC 7622 §3.3.1: besides what UsernameCaseMapped disallows, a
    /// localpart may not contain `" & ' / : < > @`.
    private static func checkLocalpartExclusions(_ bytes: some Sequence<UInt8>) throws(JIDError) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "/"),
                UInt8(ascii: ":"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"):
                throw JIDError(.localpart, .disallowed(Unicode.Scalar(byte)))
            default:
                continue
            }
        }
    }
}
