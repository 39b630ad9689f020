import Testing
import XMPPCore
import XMPPServer
import XMPPStorage
import XMPPTestSupport

/// What the server stores reads back: a stanza the wire accepted is kept
/// so that it parses again, and a stored one that does not (a damaged row)
/// is logged and dealt with rather than silently skipped (security review H4).
@Suite struct StoredStanzaTests {
    /// A server with romeo logged in and juliet registered but offline.
    private func romeoAndOfflineJuliet(config: ServerConfig = ServerConfig()) throws -> (TestServer, TestClient) {
        let server = try TestServer(config: config)
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw", resource: "orchard")
        return (server, romeo)
    }

    /// Juliet logs in, comes online, and gets what was kept for her.
    private func julietComesOnline(_ server: TestServer) throws -> [Element] {
        let juliet = server.connect()
        try juliet.login("juliet", "pw", resource: "balcony")
        juliet.send("<presence/>")
        return juliet.receiveElements().filter { $0.name == "message" }
    }

    /// Runs `job` on the test server's stores.
    private func withStores<Value: Sendable>(
        _ server: TestServer, _ job: @escaping @Sendable (Stores) throws -> Value
    ) throws -> Value {
        var outcome: Result<Value, any Error>?
        server.context.storage.run(on: server.loop, job) { outcome = $0 }
        server.loop.run()
        return try #require(outcome).get()
    }

    @Test func aMessageWithAsManyAttributesAsTheWireAllowsIsDeliveredOnceStampedWithFrom() throws {
        let (server, romeo) = try romeoAndOfflineJuliet()
        // 64 attributes, the stream's limit; the router adds a 65th, `from`.
        let extra = (0..<61).map { " a\($0)='\($0)'" }.joined()
        romeo.send("<message to='juliet@localhost' type='chat' id='wide'\(extra)><body>many</body></message>")
        #expect(romeo.receiveElements().isEmpty, "stored without an error")
        let delivered = try julietComesOnline(server)
        #expect(delivered.map { $0[attribute: "id"] } == ["wide"])
        #expect(delivered.first?[attribute: "a60"] == "60")
        #expect(delivered.first?.attributes.count == 65)
        #expect(try withStores(server) { try $0.offline.count(for: "juliet") } == 0)
    }

    @Test func anAttributeThatGrowsSixfoldWhenEscapedIsDelivered() throws {
        let (server, romeo) = try romeoAndOfflineJuliet()
        // Just under the stream's 16 KiB token limit; stored, each `'` is `&apos;`.
        let quotes = String(repeating: "'", count: 15_000)
        romeo.send("<message to='juliet@localhost' type='chat' id='quoted' x=\"\(quotes)\"><body>q</body></message>")
        #expect(romeo.receiveElements().isEmpty, "stored without an error")
        let delivered = try julietComesOnline(server)
        #expect(delivered.map { $0[attribute: "id"] } == ["quoted"])
        #expect(delivered.first?[attribute: "x"] == quotes)
    }

    @Test func aChildInTheStreamsNamespaceIsDelivered() throws {
        let (server, romeo) = try romeoAndOfflineJuliet()
        // Stored as `<stream:x/>`, the prefix the client scope binds.
        romeo.send(
            "<message to='juliet@localhost' type='chat' id='streamy'><body>hi</body>"
                + "<x xmlns='http://etherx.jabber.org/streams'/></message>")
        #expect(romeo.receiveElements().isEmpty, "stored without an error")
        let delivered = try julietComesOnline(server)
        #expect(delivered.map { $0[attribute: "id"] } == ["streamy"])
        #expect(delivered.first?.child("x", namespace: NS.streams) != nil)
    }

    @Test func aDamagedOfflineMessageIsLoggedAndDeletedAndTheOthersAreDelivered() throws {
        let (server, romeo) = try romeoAndOfflineJuliet()
        romeo.send("<message to='juliet@localhost' type='chat' id='before'><body>1</body></message>")
        let damagedID = try withStores(server) { stores in
            _ = try stores.offline.store(
                "<message><body>cut off", from: "romeo@localhost", timestamp: 0, for: "juliet",
                quota: OfflineQuota(messages: 10))
            return try stores.offline.messages(for: "juliet").last?.id ?? 0
        }
        romeo.send("<message to='juliet@localhost' type='chat' id='after'><body>2</body></message>")
        let delivered = try julietComesOnline(server)
        #expect(delivered.map { $0[attribute: "id"] } == ["before", "after"])
        #expect(try withStores(server) { try $0.offline.count(for: "juliet") } == 0, "the damaged row is gone too")
        let logged = server.logLines.lines.filter { $0.contains("offline message \(damagedID) for juliet does not parse") }
        #expect(logged.count == 1)
        #expect(!server.logLines.lines.contains { $0.contains("cut off") }, "the row's content is not logged")
    }

    @Test func theBacklogReaderReadsWhatParseReadsDamagedRowsIncluded() throws {
        let rows = [
            "<message to='a@b'><body>1</body></message>",
            "<message><body>cut off",  // leaves a shared parser inside an element
            "<message to='a@b'><body>2</body></message>",
            "<message/><x>",  // one stanza, then an element left open
            "<message to='a@b'><body>3 &lt;/x&gt;</body></message>",
            "not xml at all",
            "<message><!--",  // leaves a shared parser inside a comment
            "<message to='a@b'><body>4 --&gt;</body></message>",
            "<message to='a@b' x='\(String(repeating: "y", count: 70_000))'><body>5</body></message>",
            "</stream:stream>",
            "<message to='a@b'><body>6</body></message>",
            "<message to='a@b'><body>7</body></message>",
        ]
        let reader = StoredStanzaReader()
        let read = rows.map { reader.parse($0) }
        #expect(read == rows.map { StoredStanza.parse($0) })
        #expect(read.compactMap { $0?.childText("body") } == ["1", "2", "3 </x>", "4 -->", "5", "6", "7"])
    }

    @Test func aBacklogGoesOutInFewWritesInOrderCountedByStreamManagement() throws {
        let (server, romeo) = try romeoAndOfflineJuliet()
        let filler = String(repeating: "z", count: 400)
        for index in 1...300 {
            romeo.send("<message to='juliet@localhost' type='chat'><body>\(index) \(filler)</body></message>")
        }
        #expect(romeo.receiveElements().isEmpty, "stored without an error")
        let juliet = server.connect()
        try juliet.login("juliet", "pw", resource: "balcony")
        juliet.send("<enable xmlns='urn:xmpp:sm:3'/>")
        #expect(try juliet.receiveOne().name == "enabled")
        let writesBefore = juliet.transport.writeCount
        juliet.send("<presence/>")
        let elements = juliet.receiveElements()
        let messages = elements.filter { $0.name == "message" }
        let numbers = messages.compactMap { $0.childText("body")?.split(separator: " ").first.map(String.init) }
        #expect(numbers == (1...300).map(String.init))
        #expect(messages.allSatisfy { $0.child("delay", namespace: NS.delay) != nil })
        // About 150 KB: three 64 KiB writes, then what follows the backlog.
        let writes = juliet.transport.writeCount - writesBefore
        #expect(writes <= 6, "\(writes) writes")
        // Every stanza was counted: acknowledging them all keeps the stream.
        let stanzas = elements.count { ["message", "presence", "iq"].contains($0.name) }
        juliet.send("<a xmlns='urn:xmpp:sm:3' h='\(stanzas)'/>")
        #expect(juliet.receiveElements().isEmpty)
        #expect(!juliet.isClosed)
        juliet.send("<a xmlns='urn:xmpp:sm:3' h='\(stanzas + 1)'/>")
        #expect(juliet.receive().streamErrorCondition == "undefined-condition", "one more was never sent")
    }

    @Test func aDamagedPendingSubscriptionRequestIsLoggedAndSentPlain() throws {
        let (server, romeo) = try romeoAndOfflineJuliet()
        romeo.send("<presence type='subscribe' to='juliet@localhost'><status>let me in</status></presence>")
        _ = romeo.receiveElements()
        try withStores(server) { stores in
            guard var item = try stores.roster.item("romeo@localhost", of: "juliet"), item.pendingInRequest != nil else {
                throw TestFailure("no pending request kept")
            }
            item.pendingInRequest = "<presence type='subscribe'><status>cut off"
            _ = try stores.roster.put(item, of: "juliet")
        }
        let juliet = server.connect()
        try juliet.login("juliet", "pw", resource: "balcony")
        juliet.send("<presence/>")
        let requests = juliet.receiveElements().filter { $0.name == "presence" && $0[attribute: "type"] == "subscribe" }
        #expect(requests.count == 1)
        #expect(requests.first?[attribute: "from"] == "romeo@localhost")
        #expect(requests.first?.child("status") == nil)
        #expect(server.logLines.lines.contains {
            $0.contains("pending subscription request of romeo@localhost to juliet@localhost does not parse")
        })
    }

    @Test func messagesBeyondTheByteQuotaAreRefusedWithResourceConstraint() throws {
        var config = ServerConfig()
        config.limits.offlineQuotaSize = 800  // two of these messages as stored, not three
        let (server, romeo) = try romeoAndOfflineJuliet(config: config)
        let body = String(repeating: "x", count: 200)
        for index in 1...3 {
            romeo.send("<message to='juliet@localhost' type='chat' id='m\(index)'><body>\(body)</body></message>")
        }
        let errors = romeo.receiveElements()
        #expect(errors.map { $0[attribute: "id"] } == ["m3"])
        #expect(errors.first?.errorCondition == "resource-constraint")
        #expect(try withStores(server) { try $0.offline.count(for: "juliet") } == 2)
    }
}
