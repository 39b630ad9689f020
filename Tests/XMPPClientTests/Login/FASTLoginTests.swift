import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

@testable import XMPPClient

/// XEP-0484 (FAST) on the client against a scripted server: the saved
/// token logs in, the server's new one replaces it, and a refused token is
/// dropped for one SCRAM login with the saved keys, never a loop.
@Suite(.timeLimit(.clientSuite))
struct FASTLoginTests {
    let keys: SCRAMClientKeys
    let credentials: SCRAMCredentials

    init() throws {
        keys = try scramKeys(password: "secret", hashFunction: .sha256)
        credentials = try SASL2Script.credentials(for: keys)
    }

    /// A saved login with the keys and `token` for HT-SHA-256-EXPR.
    private func saved(token: String) -> ClientSecret {
        .saved(
            SavedLogin(
                mechanism: .scramSHA256, keys: keys,
                fastToken: FASTToken(
                    token: token, mechanism: .sha256Exporter, expiry: Date(timeIntervalSinceNow: 86_400))))
    }

    /// Answers a FAST `<authenticate/>` for `token` with success, issuing
    /// `next`; throws unless the request proves `token` on this channel.
    private static func acceptToken(
        _ token: String, next: String?, on stream: ScriptedStream
    ) throws -> Element {
        let request = try stream.receive()
        let key = Array(token.utf8)
        let binding = try #require(stream.channelBindings[.tlsExporter])
        guard request[attribute: "mechanism"] == "HT-SHA-256-EXPR", request.child("fast", namespace: NS.fast) != nil,
            try SASL2Script.initialResponse(request)
                == HashedToken.initiatorMessage(.sha256Exporter, username: "alice", token: key, channelBinding: binding)
        else { throw TestFailure("not a FAST login with \(token): \(request)") }
        try stream.send(
            SASL2Script.success(
                additionalData: HashedToken.responderMessage(.sha256Exporter, token: key, channelBinding: binding),
                token: next))
        return request
    }

    /// Starts TLS and offers SASL2 on a new connection.
    private static func open(_ server: ScriptedServer) throws -> ScriptedStream {
        let stream = try server.accept()
        try stream.startTLS()
        try stream.openStream(features: SASL2Script.features())
        return stream
    }

    @Test func theTokenLogsInAndTheNewOneIsUsedOnReconnect() async throws {
        let server = try ScriptedServer()
        async let requests = server.play { server in
            let first = try Self.open(server)
            let request = try Self.acceptToken("tok-1", next: "tok-2", on: first)
            try first.serveSession()
            let second = try Self.open(server)
            _ = try Self.acceptToken("tok-2", next: nil, on: second)
            try second.serveSession()
            return request
        }
        let client = try XMPPClient(configuration: server.configuration(saved(token: "tok-1")))
        try await client.connect()
        #expect(await client.loginDetails == .fastExporter)
        #expect(await client.savedLogin?.fastToken?.token == "tok-2")
        #expect(await client.savedLogin?.keys == keys)
        await client.disconnect()
        try await client.connect()
        #expect(await client.loginDetails?.usedToken == true)
        await client.disconnect()
        // A token login asks for no other token: the server rotates it.
        #expect(try await requests.child("request-token", namespace: NS.fast) == nil)
    }

    @Test func aServerThatDoesNotKnowTheTokenIsRefused() async throws {
        let server = try ScriptedServer()
        let answered = Task {
            try await server.play { server in
                let stream = try Self.open(server)
                _ = try stream.receive()
                // A responder message for another token.
                try stream.send(SASL2Script.success(additionalData: Array(repeating: 7, count: 32)))
                return stream.clientCloses()
            }
        }
        let client = try XMPPClient(configuration: server.configuration(saved(token: "tok-1")))
        await #expect(throws: XMPPClientError.unsupportedServer("the server did not prove it knows the FAST token")) {
            try await client.connect()
        }
        #expect(try await answered.value)
    }

    @Test func aRefusedTokenGivesWayToTheKeysOnTheSameStream() async throws {
        let server = try ScriptedServer()
        let credentials = credentials
        async let requests = server.play { server in
            let stream = try Self.open(server)
            let fast = try stream.receive()
            try stream.send(SASL2Script.failure("credentials-expired"))
            let scram = try stream.receive()
            let final = try SASL2Script.scram(
                scram, on: stream, credentials: credentials, bindings: stream.channelBindings,
                advertisement: .init(
                    mechanisms: SASL2Script.allMechanisms, channelBindings: SASL2Script.bothBindings))
            try stream.send(SASL2Script.success(additionalData: final, token: "tok-new"))
            try stream.serveSession()
            return [fast, scram]
        }
        let client = try XMPPClient(configuration: server.configuration(saved(token: "tok-old")))
        try await client.connect()
        #expect(await client.loginDetails == .scramPlus)
        #expect(await client.savedLogin?.fastToken?.token == "tok-new")
        await client.disconnect()
        let sent = try await requests
        #expect(sent[0].child("fast", namespace: NS.fast) != nil)
        #expect(sent[1].child("fast", namespace: NS.fast) == nil)
        #expect(sent[1].child("request-token", namespace: NS.fast) != nil)
    }

    @Test func aRefusedTokenThenRefusedKeysEndTheLogin() async throws {
        let server = try ScriptedServer()
        let played = Task {
            try await server.play { server in
                let stream = try Self.open(server)
                var attempts = 0
                for _ in 0..<2 {
                    guard (try? stream.receive())?.name == "authenticate" else { break }
                    attempts += 1
                    try stream.send(SASL2Script.failure("not-authorized"))
                }
                return (attempts, stream.clientCloses(), try server.connectionArrives(within: 1000))
            }
        }
        let client = try XMPPClient(configuration: server.configuration(saved(token: "tok-old")))
        await #expect(throws: XMPPClientError.notAuthorized) { try await client.connect() }
        let (attempts, closed, reconnected) = try await played.value
        #expect(attempts == 2)
        #expect(closed)
        #expect(!reconnected)
        #expect(await client.savedLogin?.fastToken == nil)
    }

    @Test func aRefusedTokenOnAStreamThatEndsLogsInOnceMoreOnANewOne() async throws {
        let server = try ScriptedServer()
        let credentials = credentials
        async let second = server.play { server in
            let first = try Self.open(server)
            _ = try first.receive()
            try first.send(SASL2Script.failure("not-authorized"))
            try first.end()
            let stream = try Self.open(server)
            let request = try stream.receive()
            let final = try SASL2Script.scram(
                request, on: stream, credentials: credentials, bindings: stream.channelBindings,
                advertisement: .init(
                    mechanisms: SASL2Script.allMechanisms, channelBindings: SASL2Script.bothBindings))
            try stream.send(SASL2Script.success(additionalData: final))
            try stream.serveSession()
            return request
        }
        let client = try XMPPClient(configuration: server.configuration(saved(token: "tok-old")))
        try await client.connect()
        #expect(await client.loginDetails?.mechanism == "SCRAM-SHA-256-PLUS")
        #expect(await client.savedLogin?.fastToken == nil)
        await client.disconnect()
        #expect(try await second.child("fast", namespace: NS.fast) == nil)
    }

    @Test func logOutInvalidatesTheToken() async throws {
        let server = try ScriptedServer()
        async let invalidation = server.play { server in
            let first = try Self.open(server)
            _ = try Self.acceptToken("tok-1", next: "tok-2", on: first)
            try first.serveSession()
            let second = try Self.open(server)
            let request = try Self.acceptToken("tok-2", next: nil, on: second)
            return (request, second.clientCloses())
        }
        let client = try XMPPClient(configuration: server.configuration(saved(token: "tok-1")))
        try await client.connect()
        try await client.logOut()
        #expect(await client.savedLogin?.fastToken == nil)
        #expect(await client.state == .disconnected(nil))
        let (request, closed) = try await invalidation
        #expect(request.child("fast", namespace: NS.fast)?[attribute: "invalidate"] == "true")
        #expect(request.child("bind", namespace: NS.bind2) == nil)
        #expect(request.child("request-token", namespace: NS.fast) == nil)
        #expect(closed)
    }
}
