import Testing
import XMPPCore
import XMPPTestSupport

/// Logging in to a real server over real loopback sockets: STARTTLS with
/// a verified certificate, SCRAM-SHA-256 and PLAIN (RFC 6120 §5 to §7),
/// in-band registration (XEP-0077) and ping (XEP-0199).
@Suite(.timeLimit(.minutes(1)))
struct LiveLoginTests {
    @Test func registerThenLoginWithSCRAMSHA256OverSTARTTLS() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let client = try server.connect()
            let plainFeatures = try client.openStream()
            #expect(plainFeatures.child("starttls", namespace: NS.tls) != nil)
            let features = try client.startTLS(trusting: server.certificatePEM)
            let mechanisms = features.child("mechanisms", namespace: NS.sasl)?.elements.map(\.text) ?? []
            #expect(mechanisms.contains("SCRAM-SHA-256"))
            #expect(mechanisms.contains("PLAIN"), "PLAIN is offered once TLS is on")

            #expect(try client.login("romeo", "montague", resource: "orchard") == "romeo@localhost/orchard")
            let pong = try client.ping()
            #expect(pong[attribute: "type"] == "result", "\(pong.xml)")
            #expect(pong[attribute: "from"] == "localhost", "\(pong.xml)")
        }
    }

    @Test func aCertificateForAnotherNameIsRejected() throws {
        try LiveServer.run { server in
            let client = try server.connect()
            try client.openStream()
            // The same certificate, trusted as a root, but not issued for
            // this name: proves the harness checks the SAN for real.
            let error = #expect(throws: TLSError.self) {
                try client.startTLS(trusting: server.certificatePEM, hostname: "example.org")
            }
            #expect(error?.kind == .certificateRejected)
        }
    }

    @Test func plainLoginOverTLS() throws {
        try LiveServer.run { server in
            try server.register("juliet", "capulet")
            let client = try server.connectWithTLS()
            #expect(try client.login("juliet", "capulet", mechanism: .plain) == "juliet@localhost/live")
            #expect(try client.ping()[attribute: "type"] == "result")
        }
    }

    @Test func plainWithoutTLSIsRefusedAndTheStreamStaysOpen() throws {
        try LiveServer.run { server in
            try server.register("juliet", "capulet")
            let client = try server.connect()
            let features = try client.openStream()
            let mechanisms = features.child("mechanisms", namespace: NS.sasl)?.elements.map(\.text) ?? []
            #expect(!mechanisms.isEmpty, "SCRAM is offered before TLS on a loopback-only server")
            #expect(!mechanisms.contains("PLAIN"))

            let refusal = try client.authenticate("juliet", "capulet", mechanism: .plain)
            #expect(refusal.name == "failure" && refusal.namespace == NS.sasl, "\(refusal.xml)")
            #expect(refusal.elements.map(\.name) == ["encryption-required"], "\(refusal.xml)")
            // The same connection goes on: STARTTLS, then PLAIN works.
            try client.startTLS(trusting: server.certificatePEM)
            try client.login("juliet", "capulet", mechanism: .plain)
            #expect(try client.ping()[attribute: "type"] == "result")
        }
    }

    @Test func aWrongPasswordIsNotAuthorizedAndTheStreamStaysOpen() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let client = try server.connectWithTLS()
            let failure = try client.authenticate("romeo", "capulet", mechanism: .scramSHA256)
            #expect(failure.name == "failure" && failure.namespace == NS.sasl, "\(failure.xml)")
            #expect(failure.elements.map(\.name) == ["not-authorized"], "\(failure.xml)")
            #expect(client.isOpen)
            // A retry on the same stream succeeds.
            try client.login("romeo", "montague")
            #expect(try client.ping()[attribute: "type"] == "result")
            #expect(!server.log.lines.contains { $0.contains("capulet") }, "no password in the log")
        }
    }

    @Test(.enabled(if: LiveSocket.ipv6LoopbackWorks, "IPv6 loopback (::1) is not available here"))
    func loginOverIPv6Loopback() throws {
        try LiveServer.run { server in
            let ipv6 = try #require(server.ipv6, "the server should listen on [::1]:0 when IPv6 loopback works")
            try server.register("romeo", "montague")
            let client = try server.connectWithTLS(to: ipv6)
            #expect(client.socket.localAddress.hasPrefix("[::1]:"))
            try client.login("romeo", "montague")
            #expect(try client.ping()[attribute: "type"] == "result")
            try server.waitForLog(containing: "\(client.socket.localAddress): bound romeo@localhost/live")
        }
    }
}
