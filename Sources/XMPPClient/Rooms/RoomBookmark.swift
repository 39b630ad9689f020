import XMPPCore

/// A room the account keeps a bookmark for (XEP-0402), with whether to
/// join it at login.
public struct RoomBookmark: Sendable, Hashable {
    /// The room's bare JID, which is also the bookmark's item id.
    public var room: JID
    /// A name for people.
    public var name: String?
    /// The nickname to join with; the account's localpart when `nil`.
    public var nick: String?
    /// The room's password, if it has one.
    public var password: String?
    /// Whether to join the room at each login.
    public var autojoin: Bool

    /// A bookmark as described by its parts.
    public init(room: JID, name: String? = nil, nick: String? = nil, password: String? = nil, autojoin: Bool = false) {
        self.room = room.bare
        self.name = name
        self.nick = nick
        self.password = password
        self.autojoin = autojoin
    }

    /// Reads one `<item id='room'><conference/></item>` of the bookmarks
    /// node, from a query or a notification; `nil` when it is not a
    /// bookmark.
    init?(item: Element) {
        guard let id = item[attribute: "id"], let room = try? JID(id), room.isBare,
            let conference = item.child("conference", namespace: NS.bookmarks)
        else { return nil }
        self.room = room
        name = conference[attribute: "name"]
        nick = conference.childText("nick", namespace: NS.bookmarks)
        password = conference.childText("password", namespace: NS.bookmarks)
        autojoin = ["true", "1"].contains(conference[attribute: "autojoin"] ?? "")
    }

    /// The `<conference/>` payload (XEP-0402 §3.1).
    var conference: Element {
        var conference = Element("conference", namespace: NS.bookmarks)
        if let name { conference[attribute: "name"] = name }
        if autojoin { conference[attribute: "autojoin"] = "true" }
        if let nick { conference.append(Element("nick", namespace: NS.bookmarks, children: [.text(nick)])) }
        if let password {
            conference.append(Element("password", namespace: NS.bookmarks, children: [.text(password)]))
        }
        return conference
    }
}
