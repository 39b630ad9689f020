import Testing
import XMPPCore
@testable import XMPPServer
import XMPPNet
import XMPPStorage
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

    /// A submitted data form (XEP-0077 §6) with `fields`.
    private func submitted(_ fields: [String: String], formType: String = NS.register) -> String {
        let values = fields.sorted { $0.key < $1.key }.map { "<field var='\($0.key)'><value>\($0.value)</value></field>" }
        return "<query xmlns='jabber:iq:register'><x xmlns='jabber:x:data' type='submit'>"
            + "<field var='FORM_TYPE' type='hidden'><value>\(formType)</value></field>\(values.joined())</x></query>"
    }

    @Test func theFormIsAlsoADataForm() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send("<iq type='get' id='f1'><query xmlns='jabber:iq:register'/></iq>")
        let query = try #require(try client.receiveOne().child("query", namespace: NS.register))
        let element = try #require(query.child("x", namespace: NS.dataForms))
        let form = try #require(DataForm(element))
        #expect(form.type == "form" && form.formType == NS.register)
        let fields = form.fields.filter { $0.name != "FORM_TYPE" }
        #expect(fields.map(\.name) == ["username", "password"])
        #expect(fields.map(\.type) == ["text-single", "text-private"])
        let required = element.elements.filter { $0.name == "field" && $0.child("required", namespace: NS.dataForms) != nil }
        #expect(required.compactMap { $0[attribute: "var"] } == ["username", "password"])
    }

    @Test func aSubmittedDataFormRegistersAndChangesThePassword() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send("<iq type='set' id='r1'>\(submitted(["username": "Dino", "password": "secret"]))</iq>")
        #expect(try client.receiveOne()[attribute: "type"] == "result")
        let dino = server.connect()
        try dino.login("dino", "secret")
        dino.send("<iq type='set' id='r2'>\(submitted(["username": "dino", "password": "other"]))</iq>")
        #expect(try dino.receiveOne()[attribute: "type"] == "result")
        try server.connect().login("dino", "other")
    }

    @Test func aDataFormWithoutThePasswordOrOfAnotherTypeIsRefused() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send("<iq type='set' id='r1'>\(submitted(["username": "dino"]))</iq>")
        #expect(try client.receiveOne().errorCondition == "not-acceptable")
        client.send("<iq type='set' id='r2'>\(submitted(["username": "dino", "password": "x"], formType: "urn:other"))</iq>")
        #expect(try client.receiveOne().errorCondition == "bad-request")
        client.send("<iq type='set' id='r3'><query xmlns='jabber:iq:register'><username>dino</username></query></iq>")
        #expect(try client.receiveOne().errorCondition == "not-acceptable", "XEP-0077 §3.1: missing information")
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

    /// A taken username costs storage work too, and reveals that the account
    /// exists: conflicts count like new accounts.
    @Test func everyAttemptCountsTakenUsernamesToo() throws {
        var config = ServerConfig()
        config.registration.throttle = .init(2, per: .seconds(3600))
        let server = try TestServer(config: config)
        try server.addUser("alice", password: "pw")
        let client = server.connect(from: "198.51.100.1")
        try client.openStream()
        for _ in 0..<2 {
            client.send(set("alice", "guess"))
            #expect(try client.receiveOne().child("error")?.child("conflict", namespace: NS.stanzas) != nil)
        }
        client.send(set("newname", "pw"))
        #expect(try client.receiveOne().child("error")?.child("policy-violation", namespace: NS.stanzas) != nil)
    }

    /// Requests that all arrive before any storage result comes back still
    /// add up: each takes its place in the count before its job starts.
    @Test func parallelRegistrationsFromOneAddressStopAtTheLimit() throws {
        var config = ServerConfig()
        config.registration.throttle = .init(5, per: .seconds(3600))
        let server = try TestServer(config: config)
        let clients = (0..<20).map { _ in server.connect(from: "198.51.100.7") }
        for client in clients { try client.openStream() }
        for (index, client) in clients.enumerated() { client.deliver(set("user\(index)", "pw")) }
        server.loop.run()
        let replies = try clients.map { try $0.receiveOne() }
        #expect(replies.filter { $0[attribute: "type"] == "result" }.count == 5)
        #expect(replies.filter { $0.child("error")?.child("policy-violation", namespace: NS.stanzas) != nil }.count == 15)
    }

    /// An IPv6 host picks the low 64 bits of its address at will.
    @Test func ipv6AddressesShareTheirSlash64sLimit() throws {
        var config = ServerConfig()
        config.registration.throttle = .init(2, per: .seconds(3600))
        let server = try TestServer(config: config)
        let outcomes = try ["2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8:0:1::1"].enumerated().map {
            index, host in
            let client = server.connect(from: host)
            try client.openStream()
            client.send(set("user\(index)", "pw"))
            return try client.receiveOne()[attribute: "type"]
        }
        #expect(outcomes == ["result", "result", "error", "result"])
    }

    /// The name is looked up before any PBKDF2 work: a taken name never
    /// gets as far as new credentials.
    @Test func takenUsernameCostsNoNewCredentials() throws {
        let loop = ManualLoop()
        let store = CountingAccountStore()
        let accounts = StoredAccounts(storage: InlineStorage(loop: loop, stores: Stores(accounts: store)), iterations: 4096)
        var outcomes: [Bool] = []
        for _ in 0..<3 {
            accounts.register(username: "alice", password: "pw", on: loop) { outcomes.append((try? $0.get()) == true) }
            loop.run()
        }
        #expect(outcomes == [true, false, false])
        #expect(store.createCalls == 1)
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

/// An in-memory account store that counts `createAccount` calls, each of
/// which carries freshly derived credentials.
private final class CountingAccountStore: AccountStore {
    private let accounts = InMemoryAccountStore()
    private(set) var createCalls = 0

    func createAccount(_ username: String, credentials: [SCRAMCredentials]) throws -> Bool {
        createCalls += 1
        return try accounts.createAccount(username, credentials: credentials)
    }

    func credentials(of username: String, for hashFunction: HashFunction) throws -> SCRAMCredentials? {
        try accounts.credentials(of: username, for: hashFunction)
    }

    func replaceCredentials(of username: String, with credentials: [SCRAMCredentials]) throws -> Bool {
        try accounts.replaceCredentials(of: username, with: credentials)
    }

    func deleteAccount(_ username: String) throws -> Bool { try accounts.deleteAccount(username) }
    func accountExists(_ username: String) throws -> Bool { try accounts.accountExists(username) }
    func usernames() throws -> [String] { try accounts.usernames() }
    func accountCount() throws -> Int { try accounts.accountCount() }
}
