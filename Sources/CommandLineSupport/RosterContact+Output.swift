import XMPPClient

extension RosterContact {
    /// One line for `roster list` and roster events:
    /// `bob@example.com  both  "Bob"  [Friends, Work]`; the subscription
    /// reads `none, pending` while our request is unanswered, and the name
    /// and groups are left out when empty.
    public var line: String {
        var line = "\(jid)  \(subscription.rawValue)" + (isPendingOut ? ", pending" : "")
        if let name { line += "  \"\(TerminalText.printable(name))\"" }
        if !groups.isEmpty { line += "  [\(groups.map(TerminalText.printable).joined(separator: ", "))]" }
        return line
    }

    /// The contact as a JSON object: `jid`, `subscription`, `pending`,
    /// `groups`, and `name` when set.
    public var json: JSONValue {
        .fields([
            "jid": .string(jid.description), "subscription": .string(subscription.rawValue),
            "pending": .bool(isPendingOut), "name": name.map(JSONValue.string),
            "groups": .array(groups.map(JSONValue.string)),
        ])
    }
}
