import XMPPCore

/// A user's avatar image: the bytes of a vCard `<PHOTO/>` (XEP-0054,
/// XEP-0153) or of an XEP-0084 data item, with what both protocols say
/// about it.
struct AvatarImage: Equatable {
    /// The image.
    let bytes: [UInt8]
    /// Its media type, such as `image/png`.
    let type: String
    /// The SHA-1 of the bytes in lowercase hex: the XEP-0153 `<photo/>`
    /// and the XEP-0084 item id.
    let hash: String

    /// The image `bytes` of media type `type`, or of the type its first
    /// bytes show when `type` is nil, empty or not an `image/` type.
    ///
    /// COMPAT: profanity 0.13 declares its XEP-0084 avatars `img/png`.
    init(bytes: [UInt8], type: String?) {
        self.bytes = bytes
        self.type = type.flatMap { $0.hasPrefix("image/") ? $0 : nil } ?? Self.sniffedType(of: bytes) ?? "image/png"
        self.hash = Hex.encode(HashFunction.sha1.hash(bytes))
    }

    /// The photo of a vCard: `<PHOTO><TYPE/><BINVAL/></PHOTO>`; nil when it
    /// has none, or only an `<EXTVAL/>` link, or its base64 does not decode.
    init?(vCard: Element) {
        guard let photo = vCard.child("PHOTO", namespace: NS.vcard),
            let binval = photo.childText("BINVAL", namespace: NS.vcard),
            let bytes = Self.decode(binval), !bytes.isEmpty
        else { return nil }
        self.init(bytes: bytes, type: photo.childText("TYPE", namespace: NS.vcard))
    }

    /// Decodes base64 that may be wrapped in lines (XEP-0153 photos often
    /// are), or nil when it is not base64.
    static func decode(_ text: String) -> [UInt8]? {
        try? Base64.decode(utf8: text.utf8.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) })
    }

    /// The image as a vCard `<PHOTO/>`.
    var vCardPhoto: Element {
        Element(
            "PHOTO", namespace: NS.vcard,
            children: [
                .element(Element("TYPE", namespace: NS.vcard, children: [.text(type)])),
                .element(Element("BINVAL", namespace: NS.vcard, children: [.text(Base64.encode(bytes))])),
            ])
    }

    /// The XEP-0084 §4.2 metadata `<info/>` of the image, with its size
    /// in pixels when its header tells it.
    var info: Element {
        var info = Element(
            "info", namespace: NS.avatarMetadata,
            attributes: ["id": hash, "bytes": String(bytes.count), "type": type])
        if let (width, height) = dimensions {
            info[attribute: "width"] = String(width)
            info[attribute: "height"] = String(height)
        }
        return info
    }

    /// The width and height in pixels of a PNG, GIF or JPEG image, read
    /// from its header; nil for other formats or a truncated header.
    var dimensions: (width: Int, height: Int)? {
        func bigEndian(_ offset: Int) -> Int { Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
        if bytes.starts(with: Self.png), bytes.count >= 24 {
            // The IHDR chunk comes first: 4-byte width and height at 16 and 20.
            return (bigEndian(18) | bigEndian(16) << 16, bigEndian(22) | bigEndian(20) << 16)
        }
        if bytes.starts(with: Self.gif), bytes.count >= 10 {
            return (Int(bytes[6]) | Int(bytes[7]) << 8, Int(bytes[8]) | Int(bytes[9]) << 8)
        }
        guard bytes.starts(with: Self.jpeg) else { return nil }
        // JPEG: walk the segments to a start-of-frame marker (SOF0–SOF15
        // but DHT C4, JPG C8, DAC CC), whose height and width follow its
        // length and precision.
        var offset = 2
        while offset + 9 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                return (bigEndian(offset + 7), bigEndian(offset + 5))
            }
            offset += 2 + bigEndian(offset + 2)
        }
        return nil
    }

    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let gif: [UInt8] = Array("GIF8".utf8)
    private static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF]

    /// The media type the first bytes of an image show, if one Swiftlet knows.
    private static func sniffedType(of bytes: [UInt8]) -> String? {
        if bytes.starts(with: png) { return "image/png" }
        if bytes.starts(with: gif) { return "image/gif" }
        if bytes.starts(with: jpeg) { return "image/jpeg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return "image/webp"
        }
        return nil
    }
}
