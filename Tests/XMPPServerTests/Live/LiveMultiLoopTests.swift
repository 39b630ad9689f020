import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A real server with four event loops (`threads = 4`): connections are
/// handed to the loops in turn. Every account is registered first (one
/// connection each), so that the logged-in clients that follow take
/// consecutive connections and land on every loop, neighbours apart.
@Suite(.timeLimit(.minutes(1)))
struct LiveMultiLoopTests {
    private static let users = ["ada", "ben", "cy", "dot", "eve", "flo"]

    private static func fourLoops(_ config: inout ServerConfig) {
        config.threads = 4
    }

    @Test func everyClientReachesEveryOtherAcrossLoops() throws {
        try LiveServer.run(configure: Self.fourLoops) { server in
            try server.waitForLog(containing: "4 event loops")
            for user in Self.users { try server.register(user, "secret") }
            var clients: [String: LiveClient] = [:]
            for user in Self.users { clients[user] = try server.loggedInClient(user, "secret") }
            for sender in Self.users {
                for recipient in Self.users where recipient != sender {
                    try clients[sender]!.send(
                        "<message to='\(recipient)@localhost/live' type='chat'><body>\(sender) to \(recipient)</body></message>")
                }
            }
            for recipient in Self.users {
                var bodies: Set<String> = []
                for _ in 1..<Self.users.count {
                    let message = try clients[recipient]!.nextElement()
                    #expect(message.name == "message")
                    bodies.insert(message.child("body", namespace: NS.client)?.text ?? "")
                }
                let expected = Set(Self.users.filter { $0 != recipient }.map { "\($0) to \(recipient)" })
                #expect(bodies == expected)
            }
        }
    }

    @Test func shutdownEndsTheStreamsOfEveryLoop() throws {
        try LiveServer.run(configure: Self.fourLoops) { server in
            for user in Self.users.prefix(4) { try server.register(user, "secret") }
            let clients = try Self.users.prefix(4).map { try server.loggedInClient($0, "secret") }
            server.server.shutdown()
            for client in clients {
                let events = try client.readUntilClosed()
                #expect(events.streamErrorCondition == "system-shutdown", "\(events)")
            }
        }
    }

    @Test func bindingAFullJIDTakenOnAnotherLoopEndsTheFirstSession() throws {
        try LiveServer.run(configure: Self.fourLoops) { server in
            try server.register("romeo", "montague")
            let first = try server.loggedInClient("romeo", "montague", resource: "phone")
            let second = try server.connectWithTLS()
            #expect(try second.login("romeo", "montague", resource: "phone") == "romeo@localhost/phone")
            #expect(try first.readUntilClosed().streamErrorCondition == "conflict")
            #expect(try second.ping()[attribute: "type"] == "result")
        }
    }
}
