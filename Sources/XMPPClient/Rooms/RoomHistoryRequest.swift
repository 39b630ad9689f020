import Foundation
import XMPPCore

/// How much of a room's recent history to ask for when joining (XEP-0045
/// §7.2.15); the room applies every limit given. The room's full archive
/// is read with ``XMPPClient/roomHistory(of:before:limit:)`` instead.
public struct RoomHistoryRequest: Sendable, Hashable {
    /// At most this many messages.
    public var maxStanzas: Int?
    /// At most this many characters of XML in all.
    public var maxChars: Int?
    /// Only messages from the last this many seconds.
    public var seconds: Int?
    /// Only messages after this time.
    public var since: Date?

    /// A request with the given limits; none given leaves the amount to
    /// the room.
    public init(maxStanzas: Int? = nil, maxChars: Int? = nil, seconds: Int? = nil, since: Date? = nil) {
        self.maxStanzas = maxStanzas
        self.maxChars = maxChars
        self.seconds = seconds
        self.since = since
    }

    /// No history at all.
    public static let none = RoomHistoryRequest(maxStanzas: 0)

    /// The `<history/>` element of the join request, or `nil` when no
    /// limit is given.
    var element: Element? {
        var attributes: [Attribute] = []
        if let maxChars { attributes.append(Attribute("maxchars", String(maxChars))) }
        if let maxStanzas { attributes.append(Attribute("maxstanzas", String(maxStanzas))) }
        if let seconds { attributes.append(Attribute("seconds", String(seconds))) }
        if let since {
            let milliseconds = Int((since.timeIntervalSince1970 * 1000).rounded())
            attributes.append(Attribute("since", DateTimeProfile.string(millisecondsSince1970: milliseconds)))
        }
        return attributes.isEmpty ? nil : Element("history", namespace: NS.muc, attributes: attributes)
    }
}
