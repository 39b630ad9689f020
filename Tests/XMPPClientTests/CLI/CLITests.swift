import Foundation
import Testing
import XMPPClient
import XMPPCore
import XMPPTestSupport

/// The built `swiftlet` against a live in-process swiftletd: what a user
/// or a script sees, exit statuses included. Serialized: each test starts
/// several processes, on few cores.
@Suite("swiftlet CLI", .serialized)
struct CLITests {
    @Test("--help for every command exits 0; a bogus command 64; no saved account 66")
    func helpAndUsage() throws {
        let user = SwiftletRunner(nil)
        defer { user.cleanUp() }
        for command in ["register", "login", "passwd", "unregister", "send", "send-file", "chat", "listen", "presence",
            "roster list", "roster add", "roster remove", "roster accept", "roster reject", "history", "recent",
            "profile", "set-profile", "block", "unblock", "blocklist", "room list", "room create", "room join",
            "room leave", "room send", "room occupants", "room invite", "room subject", "room history", "room kick",
            "room ban"]
        {
            let words = command.split(separator: " ").map(String.init)
            for arguments in [["help"] + words, words + ["--help"]] {
                let outcome = try user.run(arguments)
                #expect(outcome.status == 0, "\(arguments)")
                #expect(outcome.output.hasPrefix("Usage: swiftlet \(command)"), "\(arguments)")
            }
        }
        let help = try user.succeed(["--help"])
        #expect(help.contains("77   not authorized"))
        #expect(try user.succeed(["help", "room"]).contains("  room occupants ROOM "))
        let bogus = try user.run(["bogus"])
        #expect(bogus.status == 64)
        #expect(bogus.output == "swiftlet: unknown command 'bogus'; see 'swiftlet --help'\n")
        #expect(try user.run(["send", "bob@localhost"]).status == 64)
        #expect(try user.run(["send", "bob@@localhost", "hi"]).status == 65)
        let none = try user.run(["recent"])
        #expect(none.status == 66)
        #expect(none.output.contains("run 'swiftlet login JID' first"))
    }

    @Test("register and login save keys, never the password, in a private file; a wrong password is 77, a taken name 73")
    func registerAndLogin() async throws {
        try await ServerFixture.run { server in
            let password = "correct-horse-battery-7"
            let first = SwiftletRunner(server)
            let second = SwiftletRunner(server)
            let third = SwiftletRunner(server)
            defer { [first, second, third].forEach { $0.cleanUp() } }

            let registered = try first.succeed(["register", "alice@localhost"], input: password + "\n")
            #expect(registered.contains("registered alice@localhost\n"))
            let file = first.home + "/accounts/alice@localhost.json"
            #expect(try permissions(file) == 0o600)
            #expect(try permissions(first.home + "/accounts") == 0o700)
            let contents = try String(contentsOfFile: file, encoding: .utf8)
            #expect(!contents.contains(password))
            #expect(contents.contains("\"mechanism\" : \"SCRAM-SHA-"))

            try second.succeed(["login", "alice@localhost"], input: password + "\n")
            #expect(try permissions(second.home + "/accounts/alice@localhost.json") == 0o600)
            // The saved login works without the password, server and pin.
            #expect(try second.connecting(with: []).run(["roster", "list"]).status == 0)
            // The login saved a FAST token, which the next command logs in
            // with, as --verbose says.
            #expect(
                try String(contentsOfFile: second.home + "/accounts/alice@localhost.json", encoding: .utf8)
                    .contains("\"mechanism\" : \"HT-SHA-256-EXPR\""))
            let verbose = try second.connecting(with: []).succeed(["--verbose", "roster", "list"])
            #expect(verbose.contains("logged in with SASL2, HT-SHA-256-EXPR with tls-exporter\n"), "\(verbose)")

            let wrong = try third.run(["login", "alice@localhost"], input: "wrong\n")
            #expect(wrong.status == 77)
            #expect(wrong.output == "swiftlet: not authorized: wrong username or password\n")
            #expect(!FileManager.default.fileExists(atPath: third.home + "/accounts/alice@localhost.json"))

            let taken = try third.run(["register", "alice@localhost"], input: "other\n")
            #expect(taken.status == 73)
            #expect(taken.output == "swiftlet: that username is already taken\n")
            #expect(try third.run(["login", "alice@localhost"]).status == 65, "no password on standard input")
        }
    }

    @Test("nothing listening is 68, a wrong certificate pin 75")
    func unreachableAndUntrusted() async throws {
        try await ServerFixture.run { server in
            let user = SwiftletRunner(server)
            defer { user.cleanUp() }
            let nothing = user.connecting(with: ["--server", "127.0.0.1:\(try unusedPort())", "--timeout", "5"])
            let closed = try nothing.run(["login", "alice@localhost"], input: "pw\n")
            #expect(closed.status == 68)
            #expect(closed.output.hasPrefix("swiftlet: cannot reach the server"))
            let pin = ClientTLSPolicy.pinned(CertificateFingerprint(bytes: Array(repeating: 1, count: 32))!)
            let untrusted = user.connecting(with: ["--server", "\(server.address.ipString):\(server.address.port)", "--tls", pin.description])
            let refused = try untrusted.run(["register", "alice@localhost"], input: "pw\n")
            #expect(refused.status == 75)
            #expect(refused.output.hasPrefix("swiftlet: TLS failed: "))
        }
    }

    /// Runs `body` with a fresh server on which alice and bob have
    /// registered, each from a home of their own.
    private func withAliceAndBob(
        _ body: (ServerFixture, SwiftletRunner, SwiftletRunner) async throws -> Void
    ) async throws {
        try await ServerFixture.run { server in
            let alice = SwiftletRunner(server)
            let bob = SwiftletRunner(server)
            defer { [alice, bob].forEach { $0.cleanUp() } }
            try alice.succeed(["register", "alice@localhost"], input: "alice-pw\n")
            try bob.succeed(["register", "bob@localhost"], input: "bob-pw\n")
            try await body(server, alice, bob)
        }
    }

    @Test("friends by roster add and accept; a live message, an offline one, a bounce; history and recent")
    func messagesBetweenFriends() async throws {
        try await withAliceAndBob { _, alice, bob in

            try alice.succeed(["roster", "add", "bob@localhost", "--name", "Bob", "--group", "Friends"])
            try bob.succeed(["roster", "accept", "alice@localhost"])
            try alice.succeed(["roster", "accept", "bob@localhost"])
            #expect(try alice.succeed(["roster", "list"]) == "bob@localhost  both  \"Bob\"  [Friends]\n")
            let bobsRoster = try JSONSerialization.jsonObject(
                with: Data(try bob.succeed(["roster", "list", "--json"]).utf8)) as? NSDictionary
            #expect(bobsRoster?["jid"] as? String == "alice@localhost")
            #expect(bobsRoster?["subscription"] as? String == "both")

            // Live: Bob is connected before Alice sends.
            let listener = try bob.start([
                "listen", "--json", "--only", "connection,message", "--count", "3", "--timeout", "10",
            ])
            _ = try listener.waitForLine(containing: #""state":"connected""#, timeout: 10)
            try alice.succeed(["send", "bob@localhost", "hello", "bob"])
            let live = listener.wait(timeout: 10)
            #expect(live.status == 0, "\(live.output)")
            let message = try #require(try jsonLines(live.output).last)
            #expect(message["type"] as? String == "message")
            #expect(message["body"] as? String == "hello bob")
            #expect(message["delayed"] as? Bool == false)
            #expect((message["from"] as? String)?.hasPrefix("alice@localhost/") == true)

            // Offline: kept by the server, shown at Bob's next listen.
            try alice.succeed(["send", "bob@localhost", "are you there?"])
            let offline = try bob.run(["listen", "--json", "--only", "message", "--count", "1", "--timeout", "10"])
            #expect(offline.status == 0, "\(offline.output)")
            let kept = try #require(try jsonLines(offline.output).first)
            #expect(kept["body"] as? String == "are you there?")
            #expect(kept["delayed"] as? Bool == true)

            // A message to nobody bounces: 69 and the server's reason.
            let bounced = try alice.run(["send", "nobody@localhost", "hi"])
            #expect(bounced.status == 69)
            #expect(bounced.output == "swiftlet: nobody@localhost: the server refused: service-unavailable\n")

            // Bob's archive: listen does not mark read; history does.
            let recent = try bob.succeed(["recent"])
            #expect(recent.hasPrefix("alice@localhost  2 unread  "))
            #expect(recent.hasSuffix(" alice@localhost: are you there?\n"))
            let history = try bob.succeed(["history", "alice@localhost"]).split(separator: "\n")
            #expect(history.count == 2)
            #expect(history.first?.hasSuffix(" alice@localhost: hello bob") == true)
            #expect(history.last?.hasSuffix(" alice@localhost: are you there?") == true)
            #expect(try bob.succeed(["recent"]).hasPrefix("alice@localhost  0 unread  "))
            let sent = try jsonLines(try alice.succeed(["history", "bob@localhost", "--json", "--limit", "1"]))
            #expect(sent.count == 1)
            #expect(sent.first?["outgoing"] as? Bool == true)
            #expect(sent.first?["body"] as? String == "are you there?")

            // Presence: Bob's away reaches Alice, who listens until SIGTERM.
            let watcher = try alice.start(["listen", "--only", "presence", "--timeout", "10"])
            _ = try watcher.waitForLine(containing: "presence alice@localhost/", timeout: 10)
            try bob.succeed(["presence", "away", "--status", "lunch", "--only", "presence", "--count", "1"])
            let away = try watcher.waitForLine(containing: " away", timeout: 10)
            #expect(away.hasPrefix("presence bob@localhost/"))
            #expect(away.hasSuffix(" away: lunch"))
            let stopped = watcher.wait(timeout: 0.1)
            #expect(stopped.timedOut)
            #expect(stopped.status == 0, "SIGTERM ends listen cleanly: \(stopped.output)")
        }
    }

    @Test("passwd saves a login with the new password; unregister needs --yes, then the account is gone")
    func passwordAndUnregister() async throws {
        try await ServerFixture.run { server in
            let alice = SwiftletRunner(server)
            let elsewhere = SwiftletRunner(server)
            defer { [alice, elsewhere].forEach { $0.cleanUp() } }
            try alice.succeed(["register", "alice@localhost"], input: "old-pw\n")
            #expect(try alice.succeed(["passwd"], input: "new-pw\n").hasPrefix("password changed for alice@localhost\n"))
            try alice.succeed(["roster", "list"])
            #expect(try elsewhere.run(["login", "alice@localhost"], input: "old-pw\n").status == 77)
            try elsewhere.succeed(["login", "alice@localhost"], input: "new-pw\n")

            #expect(try alice.run(["unregister"]).status == 64)
            #expect(try alice.succeed(["unregister", "--yes"]) == "deleted alice@localhost on the server\n")
            #expect(!FileManager.default.fileExists(atPath: alice.home + "/accounts/alice@localhost.json"))
            #expect(try alice.run(["roster", "list"]).status == 66)
            let refused = try elsewhere.run(["roster", "list"])
            #expect(refused.status == 77)
            #expect(refused.output.contains("run 'swiftlet login alice@localhost'"))
        }
    }

    @Test("chat sends each line and prints what comes back; a count not reached in time is 68")
    func chat() async throws {
        try await withAliceAndBob { _, alice, bob in
            let listener = try bob.start(["listen", "--only", "connection,message", "--count", "4", "--timeout", "10"])
            _ = try listener.waitForLine(containing: "connection connected", timeout: 10)
            let chat = try alice.succeed(["chat", "bob@localhost"], input: "first\n\nsecond\n/quit\nnot sent\n")
            #expect(chat.isEmpty)
            let received = listener.wait(timeout: 10)
            #expect(received.status == 0, "\(received.output)")
            let lines = received.output.split(separator: "\n")
            #expect(lines.count == 4)
            #expect(lines.dropFirst(2).allSatisfy { $0.hasPrefix("message ") && $0.contains(" alice@localhost/") })
            #expect(lines.last?.hasSuffix(": second") == true)

            let short = try bob.run(["listen", "--only", "message", "--count", "1", "--timeout", "0.5"])
            #expect(short.status == 68)
            #expect(short.output == "swiftlet: timed out after 0.5 s with 0 of 1 events\n")
        }
    }

    @Test("send-file uploads and sends the URL, listen shows the attachment, history --from-server fills a new home")
    func filesAndServerHistory() async throws {
        try await withAliceAndBob { server, alice, bob in
            let bobElsewhere = SwiftletRunner(server)
            defer { bobElsewhere.cleanUp() }

            let file = alice.home + "/voice.m4a"
            try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: URL(fileURLWithPath: file))
            let url = try alice.succeed(["send-file", "bob@localhost", file]).trimmingCharacters(in: .newlines)
            #expect(url.hasPrefix("http://") && url.hasSuffix("/voice.m4a"), "\(url)")
            let shown = try bob.run(["listen", "--json", "--only", "message", "--count", "1", "--timeout", "10"])
            let message = try #require(try jsonLines(shown.output).first)
            #expect(message["attachment"] as? String == url)

            // Profiles and blocking.
            let avatar = alice.home + "/me.png"
            try Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: URL(fileURLWithPath: avatar))
            let published = try alice.succeed(["set-profile", "--name", "Alice Liddell", "--avatar", avatar])
            #expect(published.hasPrefix("profile published with avatar "))
            let profile = try bob.succeed(["profile", "alice@localhost"])
            #expect(profile.contains("name: Alice Liddell\n"))
            #expect(profile.contains("avatar: image/png, 3000 bytes, sha1 "))
            try bob.succeed(["block", "alice@localhost"])
            #expect(try bob.succeed(["blocklist"]) == "alice@localhost\n")
            #expect(try alice.run(["send", "bob@localhost", "hello?"]).status == 69)
            try bob.succeed(["unblock", "alice@localhost"])
            #expect(try bob.succeed(["blocklist"]).isEmpty)

            // Another device of Bob's starts with an empty archive.
            try bobElsewhere.succeed(["login", "bob@localhost"], input: "bob-pw\n")
            let history = try bobElsewhere.succeed(["history", "alice@localhost", "--from-server"])
            #expect(history.hasSuffix(" alice@localhost: \(url)\n"), "\(history)")
        }
    }

    @Test("rooms: create, join and chat, send, occupants, subject, history, bookmarks with autojoin, listen")
    func rooms() async throws {
        try await withAliceAndBob { _, alice, bob in
            let room = "lounge@conference.localhost"
            #expect(try alice.succeed(["room", "create", room, "--autojoin"]) == "created \(room)\n")
            #expect(try alice.succeed(["room", "list"]) == "\(room)  autojoin  nick alice\n")
            let listed = try jsonLines(try alice.succeed(["room", "list", "--json"]))
            #expect(listed.first?["autojoin"] as? Bool == true)

            // Alice stays in the room by listening (autojoin); Bob chats there.
            let listener = try alice.start([
                "listen", "--json", "--only", "room-message,room-presence", "--timeout", "15",
            ])
            _ = try listener.waitForLine(containing: #""event":"joined""#, timeout: 10)
            #expect(try alice.succeed(["room", "list", "--service", "conference.localhost"]).hasPrefix(room))
            let occupants = try bob.succeed(["room", "occupants", room, "--nick", "bobby"])
            // The room shows each occupant their own real JID.
            #expect(occupants.hasPrefix("alice  moderator  owner\nbobby  participant  none  bob@localhost/"), "\(occupants)")
            #expect(occupants.split(separator: "\n").count == 2)
            try bob.succeed(["room", "send", room, "hello", "room"])
            let heard = try listener.waitForLine(containing: "hello room", timeout: 10)
            let message = try #require(try jsonLines(heard).first)
            #expect(message["type"] as? String == "room-message")
            #expect(message["nick"] as? String == "bob")
            let chat = try bob.succeed(["room", "join", room, "--timeout", "10"], input: "from the join\n/quit\n")
            #expect(chat.contains("room-presence \(room) joined as bob"), "\(chat)")
            _ = try listener.waitForLine(containing: "from the join", timeout: 10)
            // From the room's archive: the listener's own copies may still be on their way to disk.
            let history = try alice.succeed(["room", "history", room, "--from-server"])
            #expect(history.contains(" \(room)/bob: hello room\n"), "\(history)")
            #expect(history.hasSuffix(" \(room)/bob: from the join\n"), "\(history)")
            // Only moderators change the subject by default: the owner does.
            try alice.succeed(["room", "subject", room, "Friday", "plans"])
            try alice.succeed(["room", "leave", room])
            #expect(try alice.succeed(["room", "list"]).isEmpty)
            let stopped = listener.wait(timeout: 0.1)
            #expect(stopped.status == 0, "\(stopped.output)")
        }
    }
}

/// The permission bits of `path`.
private func permissions(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

/// Each line of `output` as a JSON object.
private func jsonLines(_ output: String) throws -> [NSDictionary] {
    try output.split(separator: "\n").map { line in
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary, "not JSON: \(line)")
    }
}
