import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A real server with four event loops (`threads = 4`): connections are
/// accepted on the loops in turn, and each moves, once authenticated, to
/// its account's loop (`SessionHomes`). The six users' homes cover all
/// four loops (ada 3, ben 2, cy and eve 1, dot and flo 0), so messages
/// between them cross from every loop to every other.
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

    /// XEP-0198 across loops: each reconnection is accepted on the next
    /// loop, so most land away from the account's, and every one resumes
    /// the session, with the message sent to it while it was detached.
    @Test func aSessionResumesWhicheverLoopTheNewConnectionLandsOn() throws {
        try LiveServer.run(configure: Self.fourLoops) { server in
            try server.register("ada", "secret")
            try server.register("ben", "secret")
            let ben = try server.loggedInClient("ben", "secret")
            var ada = try server.loggedInClient("ada", "secret")
            try ada.send("<enable xmlns='urn:xmpp:sm:3' resume='true'/>")
            let enabled = try ada.nextElement()
            guard enabled.name == "enabled", let id = enabled[attribute: "id"] else {
                throw TestFailure("stream management not enabled: \(enabled.xml)")
            }
            var handled = 0
            for round in 1...4 {
                // Whether the server notices the reset before the message
                // or the resumption does not matter: either way the
                // message waits in the session for the next connection.
                ada.reset()
                try ben.send("<message to='ada@localhost/live' type='chat'><body>round \(round)</body></message>")
                ada = try server.connectWithTLS()
                guard try ada.authenticate("ada", "secret", mechanism: .scramSHA256).name == "success" else {
                    throw TestFailure("ada cannot log in again")
                }
                try ada.openStream()
                try ada.send("<resume xmlns='urn:xmpp:sm:3' previd='\(id)' h='\(handled)'/>")
                let resumed = try ada.nextElement()
                #expect(resumed.name == "resumed", "round \(round): \(resumed.xml)")
                let message = try ada.nextElement()
                #expect(message.child("body", namespace: NS.client)?.text == "round \(round)")
                handled += 1
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
