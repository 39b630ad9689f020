import Foundation
import XMPPCore

/// Slot ids: 128 random bits in base64url (RFC 4648 §5) without padding,
/// 22 characters of `A-Z a-z 0-9 - _` (XEP-0363 §8: "long randomized parts
/// in their URLs making it impossible to guess the location").
enum UploadSlotID {
    /// A new random id.
    static func make() -> String {
        Base64.encodeURLSafe(Crypto.randomBytes(count: 16))
    }

    /// Whether `text` has the form of a slot id.
    static func isValid(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 22 && text.utf8.allSatisfy { isBase64URL($0) }
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}

/// What a client may name and type its files (XEP-0363 §4), checked when a
/// slot is asked for; anything else is `bad-request`.
enum UploadNaming {
    /// The type served when the client gives none (XEP-0363 §6: "The
    /// service MAY assume application/octet-stream").
    static let defaultContentType = "application/octet-stream"

    /// `name` if it can be a file name on disk and in a URL: 1 to 255 bytes
    /// of UTF-8, no `/`, `\`, control characters, and not `.` or `..`.
    static func checkedFilename(_ name: String) -> String? {
        let bytes = name.utf8
        guard (1...255).contains(bytes.count), name != ".", name != ".." else { return nil }
        let forbidden = name.unicodeScalars.contains { scalar in
            scalar == "/" || scalar == "\\" || scalar.properties.generalCategory == .control
                || scalar.properties.generalCategory == .format && scalar.value >= 0x202A && scalar.value <= 0x202E
        }
        return forbidden ? nil : name
    }

    /// `type` in one canonical form if it is a media type (`type/subtype`,
    /// optionally with parameters, RFC 9110 §8.3.1), at most 255 bytes of
    /// printable ASCII; nil otherwise. The form is lowercase, with `; `
    /// between the parts, so that a PUT's `Content-Type` compares equal to
    /// the slot request's however each spaced it.
    static func checkedContentType(_ type: String) -> String? {
        guard (3...255).contains(type.utf8.count), type.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) else {
            return nil
        }
        let parts = type.lowercased().split(separator: ";", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let essence = parts[0].split(separator: "/", omittingEmptySubsequences: false)
        guard essence.count == 2, essence.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isTokenByte) }),
            parts.dropFirst().allSatisfy({ !$0.isEmpty })
        else { return nil }
        return parts.joined(separator: "; ")
    }

    /// Whether a browser should show the file rather than save it: images
    /// (but SVG, which can carry scripts), audio and video.
    static func isInline(_ contentType: String) -> Bool {
        let essence = contentType.prefix { $0 != ";" }
        guard !essence.hasPrefix("image/svg") else { return false }
        return essence.hasPrefix("image/") || essence.hasPrefix("audio/") || essence.hasPrefix("video/")
    }

    /// `name` percent-encoded for a URL path segment: every byte but the
    /// unreserved characters of RFC 3986 §2.3.
    static func percentEncoded(_ name: String) -> String {
        var encoded = ""
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + Hex.encode([byte], uppercase: true)
            }
        }
        return encoded
    }

    /// The text a percent-encoded path segment stands for; nil if an escape
    /// is broken or the bytes are not UTF-8.
    static func percentDecoded(_ segment: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = segment.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.digitValue),
                let low = iterator.next().flatMap(Hex.digitValue)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// The signature that makes a PUT URL an upload permit, so that the HTTP
/// server authorizes an upload without asking the database.
///
/// A PUT URL is `BASE/upload/<slot id>/<file name>?v=<expiry>.<size>.<mac>`:
/// `expiry` in seconds since 1970, `size` in bytes, `mac` the first 16
/// bytes, in hex, of HMAC-SHA-256 over
///
/// ```
/// swiftlet-upload-1 \n <slot id> \n <file name> \n <size> \n <content type> \n <expiry>
/// ```
///
/// (no spaces; the file name decoded). The key is derived from the
/// server's secret (`<data>/scram-secret`), so URLs survive a restart and
/// nothing else needs storing. The size is in the clear so that a PUT of
/// another size gets a precise answer (400 or 413) rather than 403; the
/// content type is only in the MAC, so a PUT must carry the announced one.
/// The GET URL is the same without the query.
struct UploadSigner: Sendable {
    /// The verdict on a PUT's permit.
    enum Verdict: Equatable {
        /// The permit is ours and unexpired; the body must have `size` bytes.
        case valid(size: Int)
        /// Not of the form `expiry.size.mac`.
        case malformed
        /// Not made by this server for this slot, file name and type.
        case forged
        /// Made by this server, but past its expiry.
        case expired
    }

    private let key: [UInt8]

    /// A signer whose key is derived from `serverSecret` (HMAC-SHA-256 of a
    /// fixed label), so that the secret itself signs nothing directly.
    init(serverSecret: [UInt8]) {
        key = HashFunction.sha256.hmac(key: serverSecret, message: Array("swiftlet upload URL key".utf8))
    }

    /// The `v` query value permitting the upload of `size` bytes of
    /// `contentType`, named `filename`, to `slot`, until `expiry`.
    func permit(slot: String, filename: String, size: Int, contentType: String, expiry: Int) -> String {
        let mac = self.mac(slot: slot, filename: filename, size: size, contentType: contentType, expiry: expiry)
        return "\(expiry).\(size).\(Hex.encode(mac))"
    }

    /// Checks a PUT's permit against what the request carries.
    /// - Parameters:
    ///   - permit: The `v` query value.
    ///   - contentType: The request's `Content-Type`, normalized.
    ///   - now: The current time, in seconds since 1970.
    func verify(permit: Substring, slot: String, filename: String, contentType: String, now: Int) -> Verdict {
        let parts = permit.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expiry = wholeNumber(parts[0]), let size = wholeNumber(parts[1]),
            parts[2].utf8.count == 32, let mac = Hex.decode(parts[2])
        else { return .malformed }
        let expected = self.mac(slot: slot, filename: filename, size: size, contentType: contentType, expiry: expiry)
        guard Crypto.constantTimeEquals(mac, expected) else { return .forged }
        return now < expiry ? .valid(size: size) : .expired
    }

    private func mac(slot: String, filename: String, size: Int, contentType: String, expiry: Int) -> [UInt8] {
        let message = "swiftlet-upload-1\n\(slot)\n\(filename)\n\(size)\n\(contentType)\n\(expiry)"
        return Array(HashFunction.sha256.hmac(key: key, message: Array(message.utf8)).prefix(16))
    }
}
