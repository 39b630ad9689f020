/// A TLS channel-binding type that a `-PLUS` mechanism can bind to, named as
/// in the GS2 header's `p=` (RFC 5802 §6 and §7).
public enum ChannelBindingType: String, Sendable, Hashable, CaseIterable {
    /// The first TLS Finished message (RFC 5929 §3); TLS 1.2 and earlier only.
    case tlsUnique = "tls-unique"
    /// A hash of the server's certificate (RFC 5929 §4).
    case tlsServerEndPoint = "tls-server-end-point"
    /// A TLS exporter value (RFC 9266), for TLS 1.3.
    case tlsExporter = "tls-exporter"
}

/// The GS2 header that opens a client-first message (RFC 5802 §7
/// `gs2-header`): the channel-binding flag and the optional authorization
/// identity, e.g. `n,,` or `y,a=juliet@example.com,` or `p=tls-exporter,,`.
struct GS2Header: Hashable {
    /// The client's channel-binding stance (RFC 5802 §6).
    enum ChannelBindingFlag: Hashable {
        /// `n`: the client does not support channel binding.
        case unsupported
        /// `y`: the client supports it but thinks the server does not.
        case notOfferedByServer
        /// `p=name`: the client binds to the channel with this type, which
        /// may be one we do not know.
        case bound(name: String)
    }

    var flag: ChannelBindingFlag
    var authorizationIdentity: String?
    /// The header as sent, trailing comma included: the start of `c=`.
    var bytes: [UInt8]

    /// Builds the header a client sends.
    init(flag: ChannelBindingFlag, authorizationIdentity: String?) {
        self.flag = flag
        self.authorizationIdentity = authorizationIdentity
        var bytes: [UInt8]
        switch flag {
        case .unsupported: bytes = Array("n".utf8)
        case .notOfferedByServer: bytes = Array("y".utf8)
        case .bound(let name): bytes = Array("p=\(name)".utf8)
        }
        bytes.append(comma)
        if let authorizationIdentity {
            bytes += Array("a=".utf8) + SASLName.encode(authorizationIdentity)
        }
        bytes.append(comma)
        self.bytes = bytes
    }

    /// Parses the header at the start of a client-first message.
    ///
    /// - Returns: The header and the rest of the message
    ///   (`client-first-message-bare`), or `nil` if the header is malformed.
    static func parse(_ message: [UInt8]) -> (header: GS2Header, bare: ArraySlice<UInt8>)? {
        guard let firstComma = message.firstIndex(of: comma),
            let secondComma = message[(firstComma + 1)...].firstIndex(of: comma)
        else { return nil }
        let flagPart = message[..<firstComma]
        let authzidPart = message[(firstComma + 1)..<secondComma]

        let flag: ChannelBindingFlag
        if flagPart.elementsEqual("n".utf8) {
            flag = .unsupported
        } else if flagPart.elementsEqual("y".utf8) {
            flag = .notOfferedByServer
        } else if flagPart.starts(with: "p=".utf8), flagPart.count > 2,
            flagPart.dropFirst(2).allSatisfy(isChannelBindingNameByte)
        {
            flag = .bound(name: String(decoding: flagPart.dropFirst(2), as: UTF8.self))
        } else {
            return nil
        }

        var authorizationIdentity: String?
        if !authzidPart.isEmpty {
            guard authzidPart.starts(with: "a=".utf8),
                let name = SASLName.decode(authzidPart.dropFirst(2))
            else { return nil }
            authorizationIdentity = name
        }
        var header = GS2Header(flag: flag, authorizationIdentity: authorizationIdentity)
        header.bytes = Array(message[...secondComma])
        return (header, message[(secondComma + 1)...])
    }

    /// `cb-name = 1*(ALPHA / DIGIT / "." / "-")` (RFC 5802 §7).
    private static func isChannelBindingNameByte(_ byte: UInt8) -> Bool {
        isAlpha(byte) || (0x30...0x39).contains(byte) || byte == 0x2E || byte == 0x2D
    }
}

/// One `name=value` attribute of a SCRAM message (RFC 5802 §5.1).
struct SCRAMAttribute {
    /// The one-letter name, an ASCII letter.
    var name: UInt8
    /// The bytes after `=`.
    var value: ArraySlice<UInt8>

    /// Splits a comma-separated attribute list, or returns `nil` if any part
    /// is not `ALPHA "=" value`.
    static func parseList(_ bytes: ArraySlice<UInt8>) -> [SCRAMAttribute]? {
        var attributes: [SCRAMAttribute] = []
        for part in bytes.split(separator: comma, omittingEmptySubsequences: false) {
            guard part.count >= 2, isAlpha(part[part.startIndex]),
                part[part.startIndex + 1] == UInt8(ascii: "=")
            else { return nil }
            attributes.append(
                SCRAMAttribute(name: part[part.startIndex], value: part.dropFirst(2)))
        }
        return attributes
    }

    /// Whether this attribute is named `letter`.
    func `is`(_ letter: Unicode.Scalar) -> Bool {
        name == UInt8(ascii: letter)
    }
}

/// Usernames and authorization identities inside SCRAM messages (RFC 5802
/// §5.1 `saslname`): `,` is written `=2C` and `=` is written `=3D`.
enum SASLName {
    /// Escapes a name for a SCRAM message.
    static func encode(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for byte in name.utf8 {
            switch byte {
            case comma: bytes += Array("=2C".utf8)
            case UInt8(ascii: "="): bytes += Array("=3D".utf8)
            default: bytes.append(byte)
            }
        }
        return bytes
    }

    /// Unescapes a name, or returns `nil` if it is empty, is not UTF-8,
    /// contains NUL, or has `=` not starting `=2C` or `=3D` (RFC 5802 §5.1:
    /// "the server MUST fail the authentication" then).
    static func decode(_ value: ArraySlice<UInt8>) -> String? {
        var bytes: [UInt8] = []
        var index = value.startIndex
        while index < value.endIndex {
            let byte = value[index]
            guard byte != 0 else { return nil }
            if byte == UInt8(ascii: "=") {
                let escape = value[(index + 1)...].prefix(2)
                if escape.elementsEqual("2C".utf8) {
                    bytes.append(comma)
                } else if escape.elementsEqual("3D".utf8) {
                    bytes.append(byte)
                } else {
                    return nil
                }
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        guard !bytes.isEmpty else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Value syntax shared by SCRAM's client and server.
enum SCRAMSyntax {
    /// Whether `value` is a valid nonce: one or more printable ASCII
    /// characters other than `,` (RFC 5802 §7 `printable`).
    static func isNonce(_ value: some Collection<UInt8>) -> Bool {
        !value.isEmpty && value.allSatisfy { (0x21...0x7E).contains($0) && $0 != comma }
    }

    /// Parses a positive decimal number without leading zeros (RFC 5802 §7
    /// `posit-number`), or returns `nil`; at most nine digits, so it fits.
    static func positiveNumber(_ value: some Collection<UInt8>) -> Int? {
        guard let first = value.first, (0x31...0x39).contains(first), value.count <= 9,
            value.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// A fresh nonce: 18 random bytes in base64, 24 printable characters.
    static func makeNonce() -> String {
        Base64.encode(Crypto.randomBytes(count: 18))
    }

    /// `a XOR b` for two equally long byte strings.
    static func xor(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        precondition(a.count == b.count)
        return zip(a, b).map { $0 ^ $1 }
    }
}

private let comma = UInt8(ascii: ",")

private func isAlpha(_ byte: UInt8) -> Bool {
    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
}
