import XMPPCore

/// A user's public profile: the parts of their vCard (XEP-0054) an app
/// shows, with the avatar whose SHA-1 travels in presence (XEP-0153).
public struct Profile: Sendable, Hashable {
    /// An avatar picture.
    public struct Avatar: Sendable, Hashable {
        /// The image bytes.
        public var data: [UInt8]
        /// The MIME type, such as `image/png`.
        public var type: String

        /// An avatar from its bytes and MIME type.
        public init(data: [UInt8], type: String) {
            self.data = data
            self.type = type
        }

        /// The lowercase hex SHA-1 of the bytes: the XEP-0153 hash that
        /// presence carries, so contacts know when to fetch it again.
        public var hash: String {
            Hex.encode(HashFunction.sha1.hash(data))
        }
    }

    /// `FN`: the name to show.
    public var fullName: String?
    /// `NICKNAME`.
    public var nickname: String?
    /// `EMAIL/USERID`.
    public var email: String?
    /// `PHOTO` (`TYPE` and `BINVAL`).
    public var avatar: Avatar?

    /// A profile from its parts.
    public init(fullName: String? = nil, nickname: String? = nil, email: String? = nil, avatar: Avatar? = nil) {
        self.fullName = fullName
        self.nickname = nickname
        self.email = email
        self.avatar = avatar
    }

    /// Reads a `<vCard xmlns='vcard-temp'/>`; parts it does not know are
    /// ignored, and a photo whose data is not base64 counts as none.
    public init(vCard: Element) {
        func text(_ name: String) -> String? {
            vCard.childText(name, namespace: NS.vcard).flatMap { $0.isEmpty ? nil : $0 }
        }
        fullName = text("FN")
        nickname = text("NICKNAME")
        email = vCard.child("EMAIL", namespace: NS.vcard)?.childText("USERID", namespace: NS.vcard)
        if let photo = vCard.child("PHOTO", namespace: NS.vcard),
            let encoded = photo.childText("BINVAL", namespace: NS.vcard),
            let data = try? Base64.decode(encoded.filter { !$0.isWhitespace }), !data.isEmpty
        {
            avatar = Avatar(data: data, type: photo.childText("TYPE", namespace: NS.vcard) ?? "image/png")
        }
    }

    /// The `<vCard xmlns='vcard-temp'/>` to publish.
    public var vCard: Element {
        func field(_ name: String, _ value: String) -> Element {
            Element(name, namespace: NS.vcard, children: [.text(value)])
        }
        var card = Element("vCard", namespace: NS.vcard)
        if let fullName { card.append(field("FN", fullName)) }
        if let nickname { card.append(field("NICKNAME", nickname)) }
        if let email {
            card.append(Element("EMAIL", namespace: NS.vcard, children: [.element(field("USERID", email))]))
        }
        if let avatar {
            card.append(
                Element(
                    "PHOTO", namespace: NS.vcard,
                    children: [.element(field("TYPE", avatar.type)), .element(field("BINVAL", Base64.encode(avatar.data)))]))
        }
        return card
    }
}
