import Foundation
import XMPPCore
import XMPPServer
import XMPPTestSupport
import Testing

/// History on join (XEP-0045 §7.2.15): the room's latest messages, as the
/// joining occupant limits them.
@Suite struct MUCHistoryTests {
    /// Romeo and juliet in the garden after romeo said "1" to "5", one a
    /// minute; the clock then stands a minute after "5".
    private func afterFiveMessages(_ config: ServerConfig = ServerConfig()) throws -> (TestServer, SettableClock) {
        let clock = SettableClock()
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden(config: config, clock: clock.wallClock)
        for number in 1...5 {
            romeo.say(String(number), in: "garden")
            clock.advance(seconds: 60)
        }
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()
        return (server, clock)
    }

    /// The bodies of the history a new resource of juliet's gets when it
    /// joins with `history`.
    private func history(_ server: TestServer, _ history: String = "") throws -> [String] {
        let phone = server.connect()
        try phone.login("juliet", "pw", resource: "phone\(UUID().uuidString.prefix(4))")
        let got = phone.join("garden", as: "juliet", history)
        let messages = got.filter { $0.name == "message" && $0.child("body") != nil }
        for message in messages {
            #expect(message[attribute: "from"] == "garden@\(conference)/romeo")
            #expect(message.child("delay", namespace: NS.delay)?[attribute: "from"] == "garden@\(conference)")
        }
        // The subject comes after the history.
        #expect(got.last?.child("subject") != nil)
        return messages.compactMap { $0.childText("body") }
    }

    @Test func aJoinGetsTheHistoryWithDelays() throws {
        let (server, _) = try afterFiveMessages()
        #expect(try history(server) == ["1", "2", "3", "4", "5"])
    }

    @Test func theRoomKeepsOnlyTheLatestMessages() throws {
        var config = ServerConfig()
        config.muc.historyLength = 3
        let (server, _) = try afterFiveMessages(config)
        #expect(try history(server) == ["3", "4", "5"])
        config.muc.historyLength = 0
        let (none, _) = try afterFiveMessages(config)
        #expect(try history(none).isEmpty)
    }

    @Test func maxstanzasLimits() throws {
        let (server, _) = try afterFiveMessages()
        #expect(try history(server, "<history maxstanzas='2'/>") == ["4", "5"])
        #expect(try history(server, "<history maxstanzas='0'/>").isEmpty)
    }

    @Test func maxcharsLimits() throws {
        let (server, _) = try afterFiveMessages()
        #expect(try history(server, "<history maxchars='0'/>").isEmpty)
        // Each message is the same length: room for two and a half.
        let one = try history(server, "<history maxstanzas='1'/>")
        #expect(one == ["5"])
        let length = try XMLSerializer.string(try lastHistoryMessage(server)).count
        #expect(try history(server, "<history maxchars='\(length * 5 / 2)'/>") == ["4", "5"])
    }

    /// The newest history message, as a join gets it, without its `to`.
    private func lastHistoryMessage(_ server: TestServer) throws -> Element {
        let phone = server.connect()
        try phone.login("juliet", "pw", resource: "measure")
        var message = try #require(
            phone.join("garden", as: "juliet", "<history maxstanzas='1'/>").first { $0.child("body") != nil })
        message.attributes.removeAll { $0.name == "to" }
        return message
    }

    @Test func secondsAndSinceLimit() throws {
        let (server, clock) = try afterFiveMessages()
        // "5" came 60 s ago, "4" 120 s ago.
        #expect(try history(server, "<history seconds='130'/>") == ["4", "5"])
        let since = DateTimeProfile.string(millisecondsSince1970: clock.now - 190_000)
        #expect(try history(server, "<history since='\(since)'/>") == ["3", "4", "5"])
        #expect(try history(server, "<history seconds='130' maxstanzas='1'/>") == ["5"])
    }
}
