import Testing
import XMPPCore
import XMPPTestSupport

/// RFC 6120 §4.7.4: the `xml:lang` of a client's stream header is the
/// default language of its stanzas; the server adds it to those it routes
/// without one.
@Suite struct StreamLanguageTests {
    /// Romeo with a stream in `language` (none when nil), Juliet available.
    private func romeoSpeaking(_ language: String?) throws -> (TestServer, TestClient, TestClient) {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        romeo.language = language
        try romeo.login("romeo", "pw", resource: "orchard")
        let juliet = server.connect()
        try juliet.login("juliet", "pw", resource: "balcony")
        return (server, romeo, juliet)
    }

    @Test func aStanzaWithoutLanguageGetsTheStreamsOne() throws {
        let (_, romeo, juliet) = try romeoSpeaking("de")
        romeo.send("<message to='juliet@localhost/balcony' type='chat'><body>Hallo</body></message>")
        let message = try juliet.receiveOne()
        #expect(message[attribute: "lang", namespace: NS.xml] == "de", "\(message.xml)")
    }

    @Test func aStanzasOwnLanguageIsKept() throws {
        let (_, romeo, juliet) = try romeoSpeaking("de")
        romeo.send("<message to='juliet@localhost/balcony' type='chat' xml:lang='fr'><body>Salut</body></message>")
        #expect(try juliet.receiveOne()[attribute: "lang", namespace: NS.xml] == "fr")
    }

    @Test(arguments: [nil, "<script>", String(repeating: "a", count: 36)])
    func noOrAStrangeLanguageAddsNothing(_ language: String?) throws {
        let (_, romeo, juliet) = try romeoSpeaking(language.map { $0.replacingOccurrences(of: "<", with: "&lt;") })
        romeo.send("<message to='juliet@localhost/balcony' type='chat'><body>Hi</body></message>")
        #expect(try juliet.receiveOne()[attribute: "lang", namespace: NS.xml] == nil)
    }
}
