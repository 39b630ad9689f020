import XMPPCore
import XMPPServer
import XMPPTestSupport

/// The group chat service of the test servers.
let conference = "conference.localhost"

extension TestClient {
    /// Sends a join of `room` as `nick` (with `inside` in the `<x/>`, such
    /// as a `<history/>`) and returns everything the server sent back.
    func join(_ room: String, as nick: String, _ inside: String = "") -> [Element] {
        send("<presence to='\(room)@\(conference)/\(nick)'><x xmlns='http://jabber.org/protocol/muc'>\(inside)</x></presence>")
        return receiveElements()
    }

    /// Creates `room` as `nick`: joins it, then accepts the default
    /// configuration (an instant room, XEP-0045 §10.1.2), which unlocks
    /// it; returns what the join got.
    @discardableResult
    func create(_ room: String, as nick: String) -> [Element] {
        let joined = join(room, as: nick)
        _ = request(
            "<iq type='set' id='instant' to='\(room)@\(conference)'><query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'/></query></iq>",
            id: "instant")
        return joined
    }

    /// Sends a groupchat message with `body` to `room`.
    func say(_ body: String, in room: String) {
        send("<message to='\(room)@\(conference)' type='groupchat' id='\(body)'><body>\(body)</body></message>")
    }
}

extension Element {
    /// The `<item/>` of this presence's `<x xmlns='…muc#user'/>`.
    var mucItem: Element? {
        child("x", namespace: NS.mucUser)?.child("item", namespace: NS.mucUser)
    }

    /// The status codes of this stanza's `<x xmlns='…muc#user'/>`, in order.
    var mucStatuses: [String] {
        child("x", namespace: NS.mucUser)?.elements.filter { $0.name == "status" }.compactMap {
            $0[attribute: "code"]
        } ?? []
    }
}

/// Romeo (orchard) and juliet (balcony) logged in and available; romeo
/// created `garden` as `romeo`, juliet joined it as `juliet`, and both
/// have read everything.
func romeoAndJulietInTheGarden(
    config: ServerConfig = ServerConfig(), clock: WallClock = .system
) throws -> (TestServer, TestClient, TestClient) {
    let (server, romeo, juliet) = try romeoAndJuliet(config: config, clock: clock)
    for client in [romeo, juliet] {
        client.send("<presence/>")
        _ = client.receiveElements()
    }
    romeo.create("garden", as: "romeo")
    _ = juliet.join("garden", as: "juliet")
    _ = romeo.receiveElements()
    return (server, romeo, juliet)
}
