import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

@testable import XMPPClient

/// The client's choice of login against a scripted server: SASL2 with the
/// strongest SCRAM and channel binding offered, Bind 2 inline, RFC 6120
/// SASL when SASL2 is not offered, and XEP-0474 catching a trimmed list.
@Suite(.timeLimit(.clientSuite))
struct SASL2LoginTests {
    static let alice = try! JID("alice@localhost/swiftlet.1")

    /// What the server saw of one password login.
    struct Seen: Sendable {
        var header: StreamHeader
        var request: Element
        var session: [Element]
    }

    /// Logs `alice` in with a password against a server offering
    /// `mechanisms` and `channelBindings` over SASL2 (or only RFC 6120
    /// SASL), hashing `advertised` (by default what it offers) in `h=`.
    /// Returns what the server saw and the client's login details.
    private func logIn(
        _ mechanisms: [String] = SASL2Script.allMechanisms,
        channelBindings: [String]? = SASL2Script.bothBindings, sasl2: Bool = true,
        advertised: [String]? = nil, check: (XMPPClient) async throws -> Void = { _ in }
    ) async throws -> Seen {
        let server = try ScriptedServer()
        let credentials = try SCRAMCredentials(password: "secret", hashFunction: .sha256)
        let offersPlus = mechanisms.contains { $0.hasSuffix("-PLUS") }
        async let script = server.play { server in
            let stream = try server.accept()
            try stream.startTLS()
            let header = try stream.openStream(
                features: SASL2Script.features(mechanisms, channelBindings: channelBindings, sasl2: sasl2))
            let request = try stream.receive()
            let final = try SASL2Script.scram(
                request, on: stream, credentials: credentials, bindings: offersPlus ? stream.channelBindings : [:],
                advertisement: .init(mechanisms: advertised ?? mechanisms, channelBindings: channelBindings))
            if sasl2 {
                try stream.send(SASL2Script.success(additionalData: final, token: "tok-1"))
            } else {
                try stream.send("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(Base64.encode(final))</success>")
                stream.restartStream()
                try stream.openStream(
                    features: "<bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/>")
            }
            return Seen(header: header, request: request, session: try stream.serveSession())
        }
        let client = try XMPPClient(configuration: server.configuration(.password("secret")))
        do {
            try await client.connect()
            try await check(client)
        } catch {
            await client.disconnect()
            _ = try? await script
            throw error
        }
        await client.disconnect()
        return try await script
    }

    @Test func scramPlusWithTheTLSExporterAndEverythingInline() async throws {
        let seen = try await logIn { client in
            #expect(await client.loginDetails == .scramPlus)
            #expect(await client.boundJID == SASL2LoginTests.alice)
            #expect(await client.isResumable)
            let login = try #require(await client.savedLogin)
            #expect(login.mechanism == .scramSHA256)
            #expect(login.fastToken?.token == "tok-1")
            #expect(login.fastToken?.mechanism == .sha256Exporter)
        }
        #expect(seen.header[attribute: "from"] == "alice@localhost")
        let request = seen.request
        #expect(request.name == "authenticate" && request.namespace == NS.sasl2)
        #expect(request[attribute: "mechanism"] == "SCRAM-SHA-256-PLUS")
        #expect(try SASL2Script.initialResponse(request).starts(with: Array("p=tls-exporter,,".utf8)))
        let agent = try #require(request.child("user-agent", namespace: NS.sasl2))
        #expect(UUID(uuidString: agent[attribute: "id"] ?? "") != nil)
        #expect(agent.childText("software", namespace: NS.sasl2) == "swiftlet")
        let bind = try #require(request.child("bind", namespace: NS.bind2))
        #expect(bind.childText("tag", namespace: NS.bind2) == "swiftlet")
        #expect(bind.child("enable", namespace: NS.carbons) != nil)
        #expect(bind.child("enable", namespace: NS.sm)?[attribute: "resume"] == "true")
        #expect(request.child("request-token", namespace: NS.fast)?[attribute: "mechanism"] == "HT-SHA-256-EXPR")
        // Nothing done inline is asked for again.
        #expect(!seen.session.contains { $0.namespace == NS.sm && $0.name == "enable" })
        #expect(!seen.session.contains { $0.child("enable", namespace: NS.carbons) != nil })
        #expect(!seen.session.contains { $0.child("bind", namespace: NS.bind) != nil })
    }

    @Test func serverEndPointWhenNoChannelBindingTypesAreListed() async throws {
        let seen = try await logIn(channelBindings: nil) { client in
            #expect(await client.loginDetails?.channelBinding == .tlsServerEndPoint)
        }
        #expect(seen.request[attribute: "mechanism"] == "SCRAM-SHA-256-PLUS")
        #expect(try SASL2Script.initialResponse(seen.request).starts(with: Array("p=tls-server-end-point,,".utf8)))
    }

    @Test func withoutPlusTheClientSaysItCouldBind() async throws {
        let seen = try await logIn(SASL2Script.withoutPlus) { client in
            #expect(
                await client.loginDetails
                    == LoginDetails(
                        profile: .sasl2, mechanism: "SCRAM-SHA-256", channelBinding: nil, downgradeProtected: true,
                        usedToken: false))
        }
        #expect(seen.request[attribute: "mechanism"] == "SCRAM-SHA-256")
        #expect(try SASL2Script.initialResponse(seen.request).starts(with: Array("y,,".utf8)))
    }

    @Test func rfc6120SASLWhenSASL2IsNotOffered() async throws {
        let seen = try await logIn(sasl2: false) { client in
            #expect(
                await client.loginDetails
                    == LoginDetails(
                        profile: .rfc6120, mechanism: "SCRAM-SHA-256", channelBinding: nil, downgradeProtected: false,
                        usedToken: false))
            #expect(await client.boundJID == SASL2LoginTests.alice)
            #expect(await client.savedLogin?.fastToken == nil)
        }
        #expect(seen.request.name == "auth" && seen.request.namespace == NS.sasl)
        #expect(seen.session.contains { $0.child("bind", namespace: NS.bind) != nil })
        #expect(seen.session.contains { $0.namespace == NS.sm && $0.name == "enable" })
    }

    @Test func aDroppedSessionIsResumedInTheLogin() async throws {
        let server = try ScriptedServer()
        let credentials = try SCRAMCredentials(password: "secret", hashFunction: .sha256)
        let advertisement = SCRAMDowngradeProtection.Advertisement(
            mechanisms: SASL2Script.allMechanisms, channelBindings: SASL2Script.bothBindings)
        async let resumed = server.play { server in
            let first = try server.accept()
            try first.startTLS()
            try first.openStream(features: SASL2Script.features())
            var final = try SASL2Script.scram(
                try first.receive(), on: first, credentials: credentials, bindings: first.channelBindings,
                advertisement: advertisement)
            try first.send(SASL2Script.success(additionalData: final))
            // Up to the initial presence, then the connection drops.
            let handled = try first.serveSession { $0.name == "presence" }
                .filter { ["iq", "message", "presence"].contains($0.name) }.count
            try first.end()
            let second = try server.accept()
            try second.startTLS()
            try second.openStream(features: SASL2Script.features())
            let request = try second.receive()
            final = try SASL2Script.scram(
                request, on: second, credentials: credentials, bindings: second.channelBindings,
                advertisement: advertisement)
            try second.send(
                "<success xmlns='urn:xmpp:sasl:2'><additional-data>\(Base64.encode(final))</additional-data>"
                    + "<authorization-identifier>alice@localhost/swiftlet.1</authorization-identifier>"
                    + "<resumed xmlns='urn:xmpp:sm:3' previd='sm-1' h='\(handled)'/></success><stream:features/>")
            return (request, try second.serveSession())
        }
        var configuration = server.configuration(.password("secret"))
        configuration.reconnect.isEnabled = true
        let client = try XMPPClient(configuration: configuration)
        let events = EventRecorder(client)
        try await client.connect()
        try await events.first("a reconnect") {
            if case .connectionState(.reconnecting) = $0 { true } else { nil }
        }
        try await events.first("the second connection") { _ in
            events.all.filter { $0 == .connectionState(.connected(Self.alice)) }.count == 2 ? true : nil
        }
        #expect(await client.isResumable)
        await client.disconnect()
        let (request, session) = try await resumed
        let resume = try #require(request.child("resume", namespace: NS.sm))
        #expect(resume[attribute: "previd"] == "sm-1")
        // Resumed: no roster, no bind, no presence again.
        #expect(!session.contains { $0.name == "iq" })
        #expect(!session.contains { $0.name == "presence" && $0[attribute: "type"] == nil })
    }

    @Test func aTrimmedMechanismListIsCaught() async throws {
        // Someone on the path removed -PLUS from the features; the server's
        // h= hashes the list it sent.
        let server = try ScriptedServer()
        let credentials = try SCRAMCredentials(password: "secret", hashFunction: .sha256)
        let answered = Task {
            try await server.play { server in
                let stream = try server.accept()
                try stream.startTLS()
                try stream.openStream(features: SASL2Script.features(SASL2Script.withoutPlus))
                _ = try SASL2Script.scram(
                    try stream.receive(), on: stream, credentials: credentials, bindings: [:],
                    advertisement: .init(
                        mechanisms: SASL2Script.allMechanisms, channelBindings: SASL2Script.bothBindings))
                return true
            }
        }
        let client = try XMPPClient(configuration: server.configuration(.password("secret")))
        await #expect {
            try await client.connect()
        } throws: { error in
            guard case .unsupportedServer(let why) = error as? XMPPClientError else { return false }
            return why.contains("XEP-0474")
        }
        // The client never sent its proof.
        #expect((try? await answered.value) == nil)
        #expect(await client.loginDetails == nil)
    }
}
