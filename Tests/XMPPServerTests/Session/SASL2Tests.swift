import Foundation
import Synchronization
import Testing
import XMPPCore
@testable import XMPPServer
import XMPPStorage
import XMPPTestSupport

/// XEP-0388 (SASL2), XEP-0386 (Bind 2), XEP-0484 (FAST), XEP-0440
/// channel binding and XEP-0474 downgrade protection on the server,
/// through an in-memory TLS connection.
@Suite struct SASL2Tests {
    static let userAgent = "d4565fa7-4d72-4749-b3d3-740edbf87770"

    private func server() throws -> TestServer {
        let server = try TestServer()
        try server.addUser("juliet", password: "r0meo")
        return server
    }

    /// A connection over TLS, its stream open; returns the client and the features.
    private func secured(_ server: TestServer, maximumVersion: TLSVersion = .tls1_3) throws -> (TestClient, Element) {
        let client = server.connect()
        try client.openStream()
        return (client, try client.startTLS(maximumVersion: maximumVersion))
    }

    private static func texts(_ element: Element?, _ name: String) -> [String] {
        element?.elements.filter { $0.name == name }.map(\.text) ?? []
    }

    /// What the features advertise, as a SCRAM client checks it (XEP-0474).
    private static func advertisement(_ features: Element, sasl2: Bool) -> SCRAMDowngradeProtection.Advertisement {
        let list = sasl2 ? features.child("authentication", namespace: NS.sasl2) : features.child("mechanisms", namespace: NS.sasl)
        let types = features.child("sasl-channel-binding", namespace: NS.saslChannelBinding)?.elements
            .compactMap { $0[attribute: "type"] }
        return .init(mechanisms: texts(list, "mechanism"), channelBindings: types)
    }

    /// A SCRAM login over SASL2 with `inline` inside `<authenticate/>`;
    /// returns `<success/>`, its server signature checked.
    private func scramLogin(
        _ client: TestClient, features: Element, mechanism: SASLMechanism = .scramSHA256Plus,
        binding: ChannelBindingType = .tlsExporter, password: String = "r0meo", inline: String
    ) throws -> Outcome {
        let channelBinding: SCRAMClient.ChannelBinding =
            mechanism.usesChannelBinding
            ? .bound(binding, data: try #require(client.channelBindings[binding])) : .unsupported
        var scram = try SCRAMClient(
            mechanism: mechanism, username: "juliet", secret: .password(password), channelBinding: channelBinding)
        scram.advertisement = Self.advertisement(features, sasl2: true)
        client.send(
            "<authenticate xmlns='urn:xmpp:sasl:2' mechanism='\(mechanism.rawValue)'><initial-response>"
                + Base64.encode(scram.clientFirstMessage) + "</initial-response>\(inline)</authenticate>")
        let challenge = try client.receiveOne()
        guard challenge.name == "challenge", challenge.namespace == NS.sasl2 else { return Outcome(first: challenge, after: []) }
        let final = try scram.receiveServerFirst(try Base64.decode(challenge.text))
        #expect(scram.advertisementVerified, "the server-first message carries a matching h=")
        client.send("<response xmlns='urn:xmpp:sasl:2'>\(Base64.encode(final))</response>")
        let outcomes = client.receiveElements()
        let outcome = try #require(outcomes.first)
        if outcome.name == "success" {
            try scram.receiveServerFinal(try Base64.decode(try #require(outcome.childText("additional-data", namespace: NS.sasl2))))
        }
        return Outcome(first: outcome, after: Array(outcomes.dropFirst()))
    }

    /// What answered a login: `<success/>` or `<failure/>`, and what came
    /// after it (the features of the authenticated stream, then anything
    /// a resumed session had waiting).
    private struct Outcome {
        var first: Element
        var after: [Element]
    }

    private static func userAgentElement(_ id: String = userAgent) -> String {
        "<user-agent id='\(id)'><software>tests</software></user-agent>"
    }

    private static let bindRequest =
        "<bind xmlns='urn:xmpp:bind:0'><tag>Tests</tag><enable xmlns='urn:xmpp:carbons:2'/>"
        + "<enable xmlns='urn:xmpp:sm:3' resume='true'/><inactive xmlns='urn:xmpp:csi:0'/></bind>"

    // MARK: - Advertisement

    @Test func tlsStreamAdvertisesSASL2BindingAndChannelBindingTypes() throws {
        let (_, features) = try secured(try server())
        let legacy = Self.texts(features.child("mechanisms", namespace: NS.sasl), "mechanism")
        #expect(legacy == ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"])
        let authentication = try #require(features.child("authentication", namespace: NS.sasl2))
        #expect(Self.texts(authentication, "mechanism") == legacy)
        let inline = try #require(authentication.child("inline", namespace: NS.sasl2))
        let bindFeatures = inline.child("bind", namespace: NS.bind2)?.child("inline", namespace: NS.bind2)?.elements
            .compactMap { $0[attribute: "var"] }
        #expect(Set(bindFeatures ?? []) == [NS.carbons, NS.csi, NS.sm])
        #expect(inline.child("sm", namespace: NS.sm) != nil)
        #expect(Self.texts(inline.child("fast", namespace: NS.fast), "mechanism") == ["HT-SHA-256-EXPR", "HT-SHA-256-ENDP", "HT-SHA-256-NONE"])
        let types = features.child("sasl-channel-binding", namespace: NS.saslChannelBinding)?.elements.compactMap { $0[attribute: "type"] }
        #expect(types == ["tls-exporter", "tls-server-end-point"])
    }

    /// The offer depends on the stream's encryption only: the same on a
    /// restarted server, with or without the account, over TLS 1.2 (with
    /// the extended master secret) and 1.3, so a client that pinned what
    /// it saw finds it again.
    @Test func offerIsTheSameAcrossServersAccountsAndTLSVersions() throws {
        let (_, first) = try secured(try server())
        let (_, restarted) = try secured(try TestServer())
        let (_, tls12) = try secured(try server(), maximumVersion: .tls1_2)
        #expect(first == restarted)
        #expect(first == tls12)
    }

    @Test func plaintextStreamOffersNeitherSASL2NorPlus() throws {
        let client = try server().connect()
        let features = try client.openStream()
        #expect(features.child("authentication", namespace: NS.sasl2) == nil)
        #expect(features.child("sasl-channel-binding", namespace: NS.saslChannelBinding) == nil)
        #expect(Self.texts(features.child("mechanisms", namespace: NS.sasl), "mechanism") == ["SCRAM-SHA-256", "SCRAM-SHA-1"])
        client.send("<authenticate xmlns='urn:xmpp:sasl:2' mechanism='SCRAM-SHA-256'/>")
        #expect(client.receive().streamErrorCondition == "policy-violation")
    }

    // MARK: - SCRAM-PLUS, both profiles

    @Test(arguments: [(SASLMechanism.scramSHA256Plus, ChannelBindingType.tlsExporter), (.scramSHA1Plus, .tlsServerEndPoint)])
    func legacySASLWithChannelBindingAndDowngradeHash(_ mechanism: SASLMechanism, _ binding: ChannelBindingType) throws {
        let (client, features) = try secured(try server())
        var scram = try SCRAMClient(
            mechanism: mechanism, username: "juliet", secret: .password("r0meo"),
            channelBinding: .bound(binding, data: try #require(client.channelBindings[binding])))
        scram.advertisement = Self.advertisement(features, sasl2: false)
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='\(mechanism.rawValue)'>\(Base64.encode(scram.clientFirstMessage))</auth>")
        let final = try scram.receiveServerFirst(try Base64.decode(client.receiveOne().text))
        #expect(scram.advertisementVerified)
        client.send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Base64.encode(final))</response>")
        let success = try client.receiveOne()
        #expect(success.name == "success")
        try scram.receiveServerFinal(try Base64.decode(success.text))
    }

    /// RFC 5802 §6: a client that could bind says 'y' when it saw no
    /// -PLUS; over TLS we offered them, so someone removed them.
    @Test func strippedPlusOfferIsDetected() throws {
        let (client, _) = try secured(try server())
        var scram = try SCRAMClient(mechanism: .scramSHA256, username: "juliet", secret: .password("r0meo"), channelBinding: .notOfferedByServer)
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-256'>\(Base64.encode(scram.clientFirstMessage))</auth>")
        let failure = try client.receiveOne()
        #expect(failure.name == "failure")
        #expect(failure.elements.first?.name == "not-authorized")
        _ = scram
    }

    /// slixmpp picks -PLUS and binds with tls-unique, which we do not
    /// offer: refused, and retried with another mechanism, without
    /// counting against the stream's attempts or the login throttle.
    @Test func plusWithAnUnofferedBindingIsRefusedUncounted() throws {
        let (client, _) = try secured(try server())
        for _ in 0..<6 {
            let scram = try SCRAMClient(
                mechanism: .scramSHA1Plus, username: "juliet", secret: .password("r0meo"),
                channelBinding: .bound(.tlsUnique, data: [1, 2, 3]))
            client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1-PLUS'>\(Base64.encode(scram.clientFirstMessage))</auth>")
            #expect(try client.receiveOne().child("malformed-request", namespace: NS.sasl) != nil)
        }
        #expect(!client.isClosed)
        #expect(client.session.sasl.failures == 0)
    }

    @Test func wrongChannelBindingDataFails() throws {
        let (client, features) = try secured(try server())
        var scram = try SCRAMClient(
            mechanism: .scramSHA256Plus, username: "juliet", secret: .password("r0meo"),
            channelBinding: .bound(.tlsExporter, data: Array(repeating: 0, count: 32)))
        scram.advertisement = Self.advertisement(features, sasl2: true)
        client.send("<authenticate xmlns='urn:xmpp:sasl:2' mechanism='SCRAM-SHA-256-PLUS'><initial-response>\(Base64.encode(scram.clientFirstMessage))</initial-response></authenticate>")
        let final = try scram.receiveServerFirst(try Base64.decode(client.receiveOne().text))
        client.send("<response xmlns='urn:xmpp:sasl:2'>\(Base64.encode(final))</response>")
        let failure = try client.receiveOne()
        #expect(failure.name == "failure" && failure.namespace == NS.sasl2)
        #expect(failure.child("not-authorized", namespace: NS.sasl) != nil)
        #expect(failure.child("text", namespace: NS.sasl2) == nil, "no hint whether the user exists")
    }

    // MARK: - SASL2 and Bind 2

    @Test func sasl2WithBind2BindsAndEnablesInOneRoundTrip() throws {
        let server = try server()
        let (client, features) = try secured(server)
        let login = try scramLogin(client, features: features, inline: Self.userAgentElement() + Self.bindRequest)
        let success = login.first
        #expect(success.name == "success")
        let identifier = try JID(try #require(success.childText("authorization-identifier", namespace: NS.sasl2)))
        #expect(identifier.bare.description == "juliet@localhost")
        #expect(identifier.resourcepart?.hasPrefix("Tests/") == true)
        let enabled = success.child("bound", namespace: NS.bind2)?.child("enabled", namespace: NS.sm)
        #expect(enabled?[attribute: "resume"] == "true")
        #expect(login.after.map(\.name) == ["features"])
        #expect(login.after.first?.child("bind", namespace: NS.bind) == nil, "bound already")
        #expect(client.session.state[Carbons.Enabled.self])
        #expect(client.session.state[ClientStateIndication.Inactive.self])
        #expect(client.session.streamManagement?.resumptionID != nil)
        client.send("<iq type='get' id='ping'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(try client.receiveOne()[attribute: "type"] == "result")
    }

    @Test func sasl2WithoutBindLeavesBindingToTheClient() throws {
        let (client, features) = try secured(try server())
        let login = try scramLogin(client, features: features, mechanism: .scramSHA1, inline: "")
        #expect(login.first.childText("authorization-identifier", namespace: NS.sasl2) == "juliet@localhost")
        #expect(login.after.first?.child("bind", namespace: NS.bind) != nil)
        #expect(try client.bind("desk").description == "juliet@localhost/desk")
    }

    @Test func sameUserAgentGetsTheSameResourceAndReplacesItsOldSession() throws {
        let server = try server()
        let (first, firstFeatures) = try secured(server)
        let one = try scramLogin(first, features: firstFeatures, inline: Self.userAgentElement() + Self.bindRequest).first
        _ = first.receiveElements()
        let (second, secondFeatures) = try secured(server)
        let two = try scramLogin(second, features: secondFeatures, inline: Self.userAgentElement() + Self.bindRequest).first
        #expect(one.childText("authorization-identifier", namespace: NS.sasl2) == two.childText("authorization-identifier", namespace: NS.sasl2))
        #expect(first.receive().streamErrorCondition == "conflict")
        let (third, thirdFeatures) = try secured(server)
        let other = try scramLogin(third, features: thirdFeatures, inline: Self.userAgentElement(UUID().uuidString) + Self.bindRequest).first
        #expect(other.childText("authorization-identifier", namespace: NS.sasl2) != two.childText("authorization-identifier", namespace: NS.sasl2))
    }

    /// XEP-0388 §3.5: during an exchange only its elements; an abort
    /// with no exchange is no SASL2 either.
    @Test func otherTrafficDuringAnExchangeEndsTheStream() throws {
        let (client, _) = try secured(try server())
        let scram = try SCRAMClient(mechanism: .scramSHA256, username: "juliet", secret: .password("r0meo"))
        client.send("<authenticate xmlns='urn:xmpp:sasl:2' mechanism='SCRAM-SHA-256'><initial-response>\(Base64.encode(scram.clientFirstMessage))</initial-response></authenticate>")
        #expect(try client.receiveOne().name == "challenge")
        client.send("<iq type='get' id='reg'><query xmlns='jabber:iq:register'/></iq>")
        #expect(client.receive().streamErrorCondition == "policy-violation")

        let (other, _) = try secured(try server())
        other.send("<abort xmlns='urn:xmpp:sasl:2'/>")
        #expect(other.receive().streamErrorCondition == "unsupported-stanza-type")
    }

    @Test func failedLoginIgnoresInlineRequests() throws {
        let server = try server()
        let (client, features) = try secured(server)
        let failure = try scramLogin(client, features: features, password: "wrong", inline: Self.userAgentElement() + Self.bindRequest).first
        #expect(failure.name == "failure")
        #expect(client.session.jid == nil)
        #expect(!client.isClosed, "the client may try again")
        let retry = try scramLogin(client, features: features, inline: Self.bindRequest).first
        #expect(retry.name == "success")
    }

    @Test func resumptionInsideSASL2() throws {
        let server = try server()
        let (client, features) = try secured(server)
        let success = try scramLogin(client, features: features, inline: Self.userAgentElement() + Self.bindRequest).first
        let full = try #require(success.childText("authorization-identifier", namespace: NS.sasl2))
        let previd = try #require(success.child("bound", namespace: NS.bind2)?.child("enabled", namespace: NS.sm)?[attribute: "id"])
        _ = client.receiveElements()
        client.dropConnection()
        let romeo = server.connect()
        try server.addUser("romeo", password: "pw")
        try romeo.login("romeo", "pw")
        romeo.send("<message to='\(full)' type='chat' id='m1'><body>still there?</body></message>")

        let (back, backFeatures) = try secured(server)
        let login = try scramLogin(
            back, features: backFeatures,
            inline: Self.userAgentElement() + "<resume xmlns='urn:xmpp:sm:3' previd='\(previd)' h='0'/>" + Self.bindRequest)
        let resumed = login.first
        #expect(resumed.child("resumed", namespace: NS.sm)?[attribute: "previd"] == previd)
        #expect(resumed.childText("authorization-identifier", namespace: NS.sasl2) == full)
        #expect(resumed.child("bound", namespace: NS.bind2) == nil, "a resumed session is bound already")
        let rest = login.after + back.receiveElements()
        #expect(rest.first?.name == "features")
        #expect(rest.contains { $0.name == "message" && $0.childText("body") == "still there?" })
    }

    @Test func failedResumptionStillBinds() throws {
        let (client, features) = try secured(try server())
        let success = try scramLogin(
            client, features: features, inline: "<resume xmlns='urn:xmpp:sm:3' previd='gone' h='0'/>" + Self.bindRequest).first
        #expect(success.child("failed", namespace: NS.sm)?.child("item-not-found", namespace: NS.stanzas) != nil)
        #expect(success.child("bound", namespace: NS.bind2) != nil)
    }

    // MARK: - FAST

    /// Logs in with SCRAM asking for a token; returns the token.
    private func tokenFromPasswordLogin(_ server: TestServer, mechanism: FASTMechanism = .sha256Exporter) throws -> String {
        let (client, features) = try secured(server)
        let success = try scramLogin(
            client, features: features,
            inline: Self.userAgentElement() + "<request-token xmlns='urn:xmpp:fast:0' mechanism='\(mechanism.rawValue)'/>").first
        let token = try #require(success.child("token", namespace: NS.fast))
        let expiry = try #require(token[attribute: "expiry"].flatMap(DateTimeProfile.milliseconds(from:)))
        #expect(abs(Double(expiry) / 1000 - Date().addingTimeInterval(21 * 86400).timeIntervalSince1970) < 60)
        return try #require(token[attribute: "token"])
    }

    /// A FAST login; returns the outcome, the server's proof checked on success.
    private func fastLogin(
        _ server: TestServer, token: String, mechanism: FASTMechanism = .sha256Exporter, userAgent: String = userAgent,
        extra: String = ""
    ) throws -> Element {
        let (client, _) = try secured(server)
        let binding = mechanism.channelBinding.flatMap { client.channelBindings[$0] } ?? []
        let message = HashedToken.initiatorMessage(mechanism, username: "juliet", token: Array(token.utf8), channelBinding: binding)
        client.send(
            // Wrapped in whitespace, as the XEP-0388 examples write it.
            "<authenticate xmlns='urn:xmpp:sasl:2' mechanism='\(mechanism.rawValue)'><initial-response>\n  \(Base64.encode(message))"
                + "\n</initial-response>\(Self.userAgentElement(userAgent))<fast xmlns='urn:xmpp:fast:0'/>\(extra)</authenticate>")
        let outcome = try #require(client.receiveElements().first)
        if outcome.name == "success" {
            let proof = try Base64.decode(try #require(outcome.childText("additional-data", namespace: NS.sasl2)))
            #expect(proof == HashedToken.responderMessage(mechanism, token: Array(token.utf8), channelBinding: binding))
        }
        return outcome
    }

    @Test(arguments: FASTMechanism.allCases)
    func fastTokenLogsInInOneRoundTrip(_ mechanism: FASTMechanism) throws {
        let server = try server()
        let token = try tokenFromPasswordLogin(server, mechanism: mechanism)
        let success = try fastLogin(server, token: token, mechanism: mechanism, extra: Self.bindRequest)
        #expect(success.name == "success")
        #expect(success.child("bound", namespace: NS.bind2) != nil)
        #expect(success.child("token", namespace: NS.fast) == nil, "young tokens are not rotated")
        #expect(try fastLogin(server, token: token, mechanism: mechanism).name == "success", "still valid")
    }

    @Test func tokenIsBoundToItsMechanismClientAndValue() throws {
        let server = try server()
        let token = try tokenFromPasswordLogin(server, mechanism: .sha256Exporter)
        #expect(try fastLogin(server, token: token, mechanism: .sha256None).child("not-authorized", namespace: NS.sasl) != nil)
        #expect(try fastLogin(server, token: token, userAgent: UUID().uuidString).child("credentials-expired", namespace: NS.sasl) != nil)
        #expect(try fastLogin(server, token: token + "x").child("not-authorized", namespace: NS.sasl) != nil)
    }

    @Test func invalidatedTokenNoLongerLogsIn() throws {
        let server = try server()
        let token = try tokenFromPasswordLogin(server)
        let (client, _) = try secured(server)
        let binding = try #require(client.channelBindings[.tlsExporter])
        let message = HashedToken.initiatorMessage(.sha256Exporter, username: "juliet", token: Array(token.utf8), channelBinding: binding)
        client.send(
            "<authenticate xmlns='urn:xmpp:sasl:2' mechanism='HT-SHA-256-EXPR'><initial-response>\(Base64.encode(message))"
                + "</initial-response>\(Self.userAgentElement())<fast xmlns='urn:xmpp:fast:0' invalidate='true'/>"
                + "<request-token xmlns='urn:xmpp:fast:0' mechanism='HT-SHA-256-EXPR'/></authenticate>")
        let success = try #require(client.receiveElements().first)
        #expect(success.name == "success")
        #expect(success.child("token", namespace: NS.fast) == nil, "logging out, even when asking for another")
        #expect(try fastLogin(server, token: token).child("credentials-expired", namespace: NS.sasl) != nil)
    }

    @Test func passwordChangeInvalidatesTokens() throws {
        let server = try server()
        let token = try tokenFromPasswordLogin(server)
        var done: Result<Bool, any Error>?
        server.context.accounts.changePassword(username: "juliet", password: "new", on: server.loop) { done = $0 }
        server.loop.run()
        #expect(try done?.get() == true)
        #expect(try fastLogin(server, token: token).child("credentials-expired", namespace: NS.sasl) != nil)
    }

    /// The password changes between the challenge and the proof: the old
    /// password's proof still verifies against the challenge, but the
    /// login completes with nothing, no session and no token.
    @Test func passwordChangedDuringTheExchangeLeavesTheOldOneNothing() throws {
        let server = try server()
        let (client, features) = try secured(server)
        var scram = try SCRAMClient(
            mechanism: .scramSHA256Plus, username: "juliet", secret: .password("r0meo"),
            channelBinding: .bound(.tlsExporter, data: try #require(client.channelBindings[.tlsExporter])))
        scram.advertisement = Self.advertisement(features, sasl2: true)
        client.send(
            "<authenticate xmlns='urn:xmpp:sasl:2' mechanism='SCRAM-SHA-256-PLUS'><initial-response>\(Base64.encode(scram.clientFirstMessage))"
                + "</initial-response>\(Self.userAgentElement())<request-token xmlns='urn:xmpp:fast:0' mechanism='HT-SHA-256-EXPR'/>"
                + Self.bindRequest + "</authenticate>")
        let final = try scram.receiveServerFirst(try Base64.decode(client.receiveOne().text))
        var done: Result<Bool, any Error>?
        server.context.accounts.changePassword(username: "juliet", password: "new", on: server.loop) { done = $0 }
        server.loop.run()
        #expect(try done?.get() == true)
        client.send("<response xmlns='urn:xmpp:sasl:2'>\(Base64.encode(final))</response>")
        let events = client.receive()
        #expect(!events.contains { if case .element(let element) = $0 { element.name == "success" } else { false } })
        #expect(events.streamErrorCondition == "not-authorized")
        #expect(server.context.sessions.sessions(of: try JID("juliet@localhost")).isEmpty)
    }

    @Test func oldTokenIsRotatedAndTheNewOneReplacesIt() throws {
        let offset = Mutex(0.0)
        let clock = WallClock { Date().addingTimeInterval(offset.withLock { $0 }) }
        let server = try TestServer(clock: clock)
        try server.addUser("juliet", password: "r0meo")
        let token = try tokenFromPasswordLogin(server)
        offset.withLock { $0 = 11 * 86400 }
        let rotated = try fastLogin(server, token: token)
        let first = try #require(rotated.child("token", namespace: NS.fast)?[attribute: "token"])
        #expect(first != token)
        // The client may not have received it: the old token still works,
        // and brings a newer one, which replaces the unused first.
        let again = try fastLogin(server, token: token)
        let second = try #require(again.child("token", namespace: NS.fast)?[attribute: "token"])
        #expect(try fastLogin(server, token: first).name == "failure", "an unused token is replaced by the next")
        #expect(try fastLogin(server, token: second).name == "success")
        #expect(try fastLogin(server, token: token).name == "failure", "using the new one retires the old")
    }

    @Test func expiredTokensAreForgottenHourly() throws {
        let offset = Mutex(0.0)
        let server = try TestServer(clock: WallClock { Date().addingTimeInterval(offset.withLock { $0 }) })
        try server.addUser("juliet", password: "r0meo")
        _ = try tokenFromPasswordLogin(server)
        let count = { () throws -> Int in
            var rows: Result<[FastTokenRecord], any Error>?
            server.context.storage.run(on: server.loop, { stores in
                try stores.fastTokens.tokens(of: "juliet", userAgent: Self.userAgent, at: .distantPast)
            }) { rows = $0 }
            server.loop.run()
            return try rows?.get().count ?? -1
        }
        #expect(try count() == 1)
        offset.withLock { $0 = 22 * 86400 }
        server.loop.advance(by: FASTTokenExpiry.interval)
        #expect(try count() == 0)
    }

    @Test func fastNeedsAUserAgent() throws {
        let server = try server()
        let (client, _) = try secured(server)
        let message = HashedToken.initiatorMessage(.sha256None, username: "juliet", token: Array("t".utf8), channelBinding: [])
        client.send("<authenticate xmlns='urn:xmpp:sasl:2' mechanism='HT-SHA-256-NONE'><initial-response>\(Base64.encode(message))</initial-response></authenticate>")
        let failure = try client.receiveOne()
        #expect(failure.child("malformed-request", namespace: NS.sasl) != nil)
        #expect(failure.childText("text", namespace: NS.sasl2)?.contains("user-agent") == true)
    }
}
