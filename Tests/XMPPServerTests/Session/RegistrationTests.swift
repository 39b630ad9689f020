import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0077 as XMPPFramework and standard clients use it.
@Suite struct RegistrationTests {
    private let set = { (username: String, password: String) in
        "<iq type='set' id='reg'><query xmlns='jabber:iq:register'><username>\(username)</username><password>\(password)</password></query></iq>"
    }

    @Test func formBeforeAuthentication() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send("<iq type='get' id='f1'><query xmlns='jabber:iq:register'/></iq>")
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "result")
        #expect(reply[attribute: "id"] == "f1")
        let query = reply.child("query", namespace: NS.register)
        #expect(query?.child("username") != nil && query?.child("password") != nil)
    }

    /// XMPPFramework's flow: login fails, register without fetching the
    /// form, then log in on the same stream.
    @Test func registerWithoutTheFormThenLoginOnTheSameStream() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        #expect(throws: (any Error).self) { try client.authenticate("alice", "secret", mechanism: .scramSHA1) }
        client.send(set("alice", "secret"))
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "result")
        #expect(reply[attribute: "id"] == "reg")
        try client.authenticate("alice", "secret", mechanism: .scramSHA1)
        #expect(try client.bind("iPhone").description == "alice@localhost/iPhone")
    }

    @Test func takenUsernameIsConflictWithLegacyCode() throws {
        let server = try TestServer()
        try server.addUser("alice", password: "one")
        let client = server.connect()
        try client.openStream()
        client.send(set("Alice", "two"))
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "error")
        let error = reply.child("error")
        #expect(error?[attribute: "code"] == "409", "XMPPFramework apps read the legacy code")
        #expect(error?.child("conflict", namespace: NS.stanzas) != nil)
        // The original password still works; the new one does not.
        try server.connect().login("alice", "one")
    }

    @Test(arguments: ["", "a b", "a@b", "a,b", "a=b", "a/b", "♚"])
    func invalidUsernameIsNotAcceptable(_ username: String) throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send(set(username, "pw"))
        let error = try client.receiveOne().child("error")
        #expect(error?.child("not-acceptable", namespace: NS.stanzas) != nil || error?.child("bad-request", namespace: NS.stanzas) != nil)
    }

    @Test func emptyPasswordIsNotAcceptable() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send(set("bob", ""))
        #expect(try client.receiveOne().child("error")?.child("not-acceptable", namespace: NS.stanzas) != nil)
    }

    /// Longer passwords could not log in with PLAIN, and the length bound
    /// comes before any PRECIS work on the string.
    @Test func passwordLongerThan1023BytesIsNotAcceptable() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send(set("bob", String(repeating: "\u{0660}", count: 512)))  // 1024 bytes
        let error = try client.receiveOne().child("error")
        #expect(error?.child("not-acceptable", namespace: NS.stanzas) != nil)
        #expect(error?.childText("text", namespace: NS.stanzas)?.contains("1023 bytes") == true)
        client.send(set("bob", String(repeating: "\u{0660}", count: 511)))  // 1022 bytes: fine
        #expect(try client.receiveOne()[attribute: "type"] == "result")
    }

    @Test func closedRegistrationIsNotAdvertisedAndRefused() throws {
        var config = ServerConfig()
        config.registration.mode = .closed
        let server = try TestServer(config: config)
        let client = server.connect()
        let features = try client.openStream()
        #expect(features.child("register", namespace: NS.registerFeature) == nil)
        client.send(set("bob", "pw"))
        #expect(try client.receiveOne().child("error")?.child("not-allowed", namespace: NS.stanzas) != nil)
    }

    @Test func registrationIsThrottledPerAddressButNotOnLoopback() throws {
        var config = ServerConfig()
        config.registration.throttle = .init(2, per: .seconds(3600))
        let server = try TestServer(config: config)
        for index in 0..<2 {
            let client = server.connect(from: "198.51.100.1")
            try client.openStream()
            client.send(set("user\(index)", "pw"))
            #expect(try client.receiveOne()[attribute: "type"] == "result")
        }
        let third = server.connect(from: "198.51.100.1")
        try third.openStream()
        third.send(set("user2", "pw"))
        #expect(try third.receiveOne().child("error")?.child("policy-violation", namespace: NS.stanzas) != nil)
        for index in 0..<5 {
            let local = server.connect(from: "127.0.0.1")
            try local.openStream()
            local.send(set("local\(index)", "pw"))
            #expect(try local.receiveOne()[attribute: "type"] == "result")
        }
    }

    @Test func passwordChangeAfterLogin() throws {
        let server = try TestServer()
        try server.addUser("carol", password: "old")
        let client = server.connect()
        try client.login("carol", "old")
        client.send("<iq type='set' id='pw'><query xmlns='jabber:iq:register'><username>carol</username><password>new</password></query></iq>")
        #expect(try client.receiveOne()[attribute: "type"] == "result")
        let next = server.connect()
        try next.openStream()
        #expect(throws: (any Error).self) { try next.authenticate("carol", "old") }
        try next.authenticate("carol", "new")
    }

    @Test func cannotChangeAnotherUsersPassword() throws {
        let server = try TestServer()
        try server.addUser("carol", password: "pw")
        try server.addUser("dave", password: "pw")
        let client = server.connect()
        try client.login("carol", "pw")
        client.send("<iq type='set' id='pw'><query xmlns='jabber:iq:register'><username>dave</username><password>mine</password></query></iq>")
        #expect(try client.receiveOne().child("error")?.child("not-allowed", namespace: NS.stanzas) != nil)
        try server.connect().login("dave", "pw")
    }

    @Test func accountRemovalEndsTheStream() throws {
        let server = try TestServer()
        try server.addUser("erin", password: "pw")
        let client = server.connect()
        try client.login("erin", "pw")
        client.send("<iq type='set' id='rm'><query xmlns='jabber:iq:register'><remove/></query></iq>")
        let elements = client.receiveElements()
        #expect(elements.first?[attribute: "type"] == "result")
        #expect(elements.last.flatMap(StreamError.init)?.condition == .notAuthorized)
        #expect(client.isClosed)
        let again = server.connect()
        try again.openStream()
        #expect(throws: (any Error).self) { try again.authenticate("erin", "pw") }
    }
}
