import Foundation
import Testing
@testable import XMPPClient
import XMPPCore
@testable import XMPPServer
import XMPPStorage
import XMPPTestSupport

/// XEP-0357 through the client kit: an app hands over its APNs device
/// token, or enables a push service of its own, and disables it again.
@Suite("Client push", .timeLimit(.clientSuite))
struct ClientPushTests {
    /// The push registrations the server stored for `username`.
    private func registrations(_ fixture: ServerFixture, of username: String) async throws -> [PushRegistration] {
        try await withCheckedThrowingContinuation { answer in
            fixture.server.storage.submit({ stores in try stores.pushRegistrations.registrations(of: username) }) {
                answer.resume(with: $0)
            }
        }
    }

    @Test("the device token goes to the built-in APNs service in hex, and disabling forgets it")
    func applePush() async throws {
        let key = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-push-\(UUID()).p8").path
        defer { try? FileManager.default.removeItem(atPath: key) }
        try SelfSignedCertificate.generate(domain: "localhost").privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        chmod(key, 0o600)
        try await ServerFixture.run(configure: { config in
            config.push.apns.keyFile = key
            config.push.apns.keyID = "ABCDE12345"
            config.push.apns.teamID = "TEAM123456"
            config.push.apns.topic = "org.example.chat"
            config.push.apns.endpoint = "https://127.0.0.1:1"
        }) { server in
            let alice = try await server.registeredClient("alice", resource: "phone")
            try await alice.connect()
            let token: [UInt8] = Array(0..<32)
            try await alice.enableApplePush(deviceToken: token)
            let stored = try await registrations(server, of: "alice")
            #expect(stored.map(\.service) == ["apns.localhost"])
            #expect(stored.map(\.node) == [Hex.encode(token)])

            var refusal: StanzaError.Condition?
            let relay = try JID("p2.siacs.eu")
            do throws(XMPPClientError) {
                try await alice.enablePush(service: relay, node: "n", options: ["secret": "s"])
            } catch .stanzaError(let condition, _) {
                refusal = condition
            } catch {
                Issue.record("unexpected \(error)")
            }
            #expect(refusal == .remoteServerNotFound, "the server does not federate")
            try await alice.disablePush(service: try JID("apns.localhost"))
            #expect(try await registrations(server, of: "alice").isEmpty)
            await alice.disconnect()
        }
    }

    @Test("a push service of the app's own gets the options as publish options")
    func componentPush() async throws {
        try await ServerFixture.run(configure: { config in
            config.components.services = [ServerConfig.Component(domain: "push.localhost", secret: "s3cret")]
        }) { server in
            let alice = try await server.registeredClient("alice", resource: "phone")
            try await alice.connect()
            try await alice.enablePush(service: try JID("push.localhost"), node: "n1", options: ["secret": "xyz"])
            let stored = try #require(try await registrations(server, of: "alice").first)
            #expect(stored.node == "n1")
            let form = try #require(stored.publishOptions.flatMap(StoredStanza.parse).flatMap(DataForm.init))
            #expect(form.formType == NS.pubsubPublishOptions)
            #expect(form.fields.first { $0.name == "secret" }?.values == ["xyz"])
            await alice.disconnect()
        }
    }
}
