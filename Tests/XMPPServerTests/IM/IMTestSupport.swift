import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A server with romeo (orchard) and juliet (balcony), both logged in and
/// not yet available; `extraFeatures` are installed after the standard
/// ones, and the server's wall clock is `clock`.
func romeoAndJuliet(
    config: ServerConfig = ServerConfig(), clock: WallClock = .system, extraFeatures: [any ServerFeature] = []
) throws -> (TestServer, TestClient, TestClient) {
    let server = try TestServer(config: config, clock: clock, extraFeatures: extraFeatures)
    try server.addUser("romeo", password: "pw")
    try server.addUser("juliet", password: "pw")
    let romeo = server.connect()
    try romeo.login("romeo", "pw", resource: "orchard")
    let juliet = server.connect()
    try juliet.login("juliet", "pw", resource: "balcony")
    return (server, romeo, juliet)
}

/// Romeo and juliet subscribed to each other (`both`), each having fetched
/// the roster and sent initial presence, with nothing left to read.
func romeoAndJulietAsContacts(config: ServerConfig = ServerConfig()) throws -> (TestServer, TestClient, TestClient) {
    let (server, romeo, juliet) = try romeoAndJuliet(config: config)
    for client in [romeo, juliet] {
        client.send("<iq type='get' id='roster'><query xmlns='jabber:iq:roster'/></iq>")
        client.send("<presence/>")
    }
    romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
    juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
    juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
    romeo.send("<presence type='subscribed' to='juliet@localhost'/>")
    _ = romeo.receive()
    _ = juliet.receive()
    return (server, romeo, juliet)
}

extension Element {
    /// The defined condition of this error stanza (RFC 6120 §8.3.3), or nil.
    var errorCondition: String? {
        child("error")?.elements.first { $0.namespace == NS.stanzas && $0.name != "text" }?.name
    }
}

extension TestClient {
    /// Sends `xml` and returns the reply whose `id` is `id`.
    func request(_ xml: String, id: String) -> Element? {
        send(xml)
        return receiveElements().first { $0[attribute: "id"] == id }
    }
}

/// Romeo and juliet as contacts (`romeoAndJulietAsContacts`), and mercutio,
/// logged in and available, who shares presence with neither.
func romeoJulietAndAStranger(
    config: ServerConfig = ServerConfig()
) throws -> (TestServer, TestClient, TestClient, TestClient) {
    let (server, romeo, juliet) = try romeoAndJulietAsContacts(config: config)
    try server.addUser("mercutio", password: "pw")
    let mercutio = server.connect()
    try mercutio.login("mercutio", "pw", resource: "street")
    mercutio.send("<presence/>")
    _ = mercutio.receive()
    return (server, romeo, juliet, mercutio)
}
