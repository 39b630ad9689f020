import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

/// Offline messages survive a crash (XEP-0160 storage, committed before
/// the sender's next stanza is handled): the real `swiftletd` is killed
/// with `SIGKILL` in the middle of a flood of messages to an offline user
/// and restarted on the same data directory.
///
/// A message counts as confirmed once the server has answered a ping sent
/// after it: the server handles a session's stanzas in order, and stores a
/// message before handling the next stanza. Every confirmed message must
/// reach the recipient exactly once and in order; unconfirmed ones may be
/// lost, never doubled.
@Suite(.timeLimit(.minutes(1)))
struct OfflineDurabilityTests {
    /// Messages the sender would send without the kill.
    static let floodSize = 300
    /// The longest pause between the last batch and the kill, in seconds:
    /// long enough to store a part of a batch of 30.
    static let maxKillDelay = 0.01

    @Test func confirmedOfflineMessagesSurviveSIGKILLExactlyOnceInOrder() throws {
        let dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-kill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        try SwiftletdProcess.addUser("romeo", password: "montague", dataDirectory: dataDirectory)
        try SwiftletdProcess.addUser("juliet", password: "capulet", dataDirectory: dataDirectory)

        // Where the flood is cut, and how often it is confirmed: random,
        // and in every failure message so a failure can be replayed. Each
        // batch goes out in one write, and the pause before the kill lets
        // the server be busy storing the last one when it dies.
        let batchSize = Int.random(in: 1...30)
        let killAfter = Int.random(in: 20...(Self.floodSize - 20))
        let killDelay = Double.random(in: 0...Self.maxKillDelay)

        let first = try SwiftletdProcess(dataDirectory: dataDirectory)
        defer { first.kill() }
        let sender = try first.connectWithTLS()
        try sender.login("romeo", "montague")
        var confirmed = 0
        for start in stride(from: 1, through: killAfter, by: batchSize) {
            let batch = start...min(start + batchSize - 1, killAfter)
            let messages = batch.map { "<message to='juliet@localhost' type='chat'><body>flood \($0)</body></message>" }
            try sender.send(messages.joined())
            if batch.upperBound == killAfter { break }
            let pong = try sender.ping()
            try #require(pong[attribute: "type"] == "result", "\(pong.xml)")
            confirmed = batch.upperBound
        }
        Thread.sleep(forTimeInterval: killDelay)
        first.kill()
        sender.reset()

        let second = try SwiftletdProcess(dataDirectory: dataDirectory)
        defer { second.kill() }
        // What went on, for failure messages.
        func report() -> String {
            """
            batches of \(batchSize), SIGKILL \(killDelay) s after message \(killAfter), \(confirmed) confirmed
            --- first run ---
            \(first.output)--- second run ---
            \(second.output)
            """
        }
        // The sender leaves a last message after the restart: delivered in
        // storage order, it marks the end of what the recipient gets.
        let senderAgain = try second.connectWithTLS()
        try senderAgain.login("romeo", "montague")
        try leaveMessage("end 1", from: senderAgain)

        let recipient = try second.connectWithTLS()
        try recipient.login("juliet", "capulet", resource: "balcony")
        let numbers = try offlineFlood(for: recipient, upTo: "end 1", report: report)
        #expect(numbers.count >= confirmed, "received \(numbers)\n\(report())")
        #expect(numbers.count <= killAfter, "received \(numbers)\n\(report())")
        // In order, each once, no gaps: the messages are stored one after
        // another, so a crash leaves a prefix of those sent.
        #expect(numbers == Array(1..<numbers.count + 1), "received \(numbers)\n\(report())")

        // Delivered means removed: the next session gets only what came since.
        try recipient.close()
        try leaveMessage("end 2", from: senderAgain)
        let again = try second.connectWithTLS()
        try again.login("juliet", "capulet", resource: "garden")
        let redelivered = try offlineFlood(for: again, upTo: "end 2", report: report)
        #expect(redelivered.isEmpty, "redelivered \(redelivered)\n\(report())")
    }

    /// A ping sent right after initial presence is answered after the
    /// offline messages that the presence releases: input stays paused
    /// until the storage work of the stanza before it is done (the
    /// contract of `ClientSession.withStorage`).
    @Test func offlineMessagesComeBeforeTheAnswerToTheNextStanza() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            try server.register("juliet", "capulet")
            let sender = try server.loggedInClient("romeo", "montague")
            try leaveMessage("while you were out", from: sender)

            let recipient = try server.loggedInClient("juliet", "capulet")
            try recipient.send("<presence/><iq type='get' id='next' to='localhost'><ping xmlns='urn:xmpp:ping'/></iq>")
            let (before, pong) = try recipient.elements(upTo: "next")
            #expect(pong[attribute: "type"] == "result", "\(pong.xml)")
            #expect(before.compactMap { $0.childText("body") } == ["while you were out"], "\(before.map(\.xml))")
        }
    }

    /// Sends a chat message with `body` to juliet, offline, and waits for
    /// the answer to a ping sent after it: then it is stored.
    private func leaveMessage(_ body: String, from sender: LiveClient) throws {
        try sender.send("<message to='juliet@localhost' type='chat'><body>\(body)</body></message>")
        let pong = try sender.ping()
        try #require(pong[attribute: "type"] == "result", "\(pong.xml)")
    }

    /// Sends initial presence, which releases the stored messages (XEP-0160
    /// §3), and reads up to the one whose body is `marker`; returns the
    /// numbers of the `flood N` messages before it. Every message must come
    /// from romeo with an XEP-0203 delay stamp.
    private func offlineFlood(for client: LiveClient, upTo marker: String, report: () -> String) throws -> [Int] {
        try client.send("<presence/>")
        var numbers: [Int] = []
        while true {
            let element = try client.nextElement()
            guard element.name == "message" else { continue }  // presence
            #expect(element[attribute: "from"] == "romeo@localhost/live", "\(element.xml)\n\(report())")
            #expect(element.child("delay", namespace: NS.delay) != nil, "no delay: \(element.xml)\n\(report())")
            let body = element.childText("body") ?? ""
            if body == marker { return numbers }
            guard body.hasPrefix("flood "), let number = Int(body.dropFirst("flood ".count)) else {
                Issue.record("unexpected message \(element.xml)\n\(report())")
                continue
            }
            numbers.append(number)
        }
    }
}
