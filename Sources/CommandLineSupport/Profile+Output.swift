import XMPPClient

extension Profile {
    /// The profile for people, one part per line; parts not set are left
    /// out, and an empty profile says so.
    public var lines: String {
        var lines: [String] = []
        if let fullName { lines.append("name: " + TerminalText.printable(fullName)) }
        if let nickname { lines.append("nickname: " + TerminalText.printable(nickname)) }
        if let email { lines.append("email: " + TerminalText.printable(email)) }
        if let avatar { lines.append("avatar: \(TerminalText.printable(avatar.type)), \(avatar.data.count) bytes, sha1 \(avatar.hash)") }
        return lines.isEmpty ? "(no profile)" : lines.joined(separator: "\n")
    }

    /// The profile as one JSON object; the avatar as its type, size and hash.
    public var json: JSONValue {
        let fields: [String: JSONValue?] = [
            "name": fullName.map(JSONValue.string), "nickname": nickname.map(JSONValue.string),
            "email": email.map(JSONValue.string), "avatarType": avatar.map { .string($0.type) },
            "avatarSize": avatar.map { .integer($0.data.count) }, "avatarHash": avatar.map { .string($0.hash) },
        ]
        return .object(fields.compactMapValues { $0 })
    }
}
