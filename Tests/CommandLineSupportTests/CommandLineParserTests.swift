import Testing
import XMPPClient
import XMPPCore
@testable import CommandLineSupport

/// `swiftlet`'s command line: commands, operands, options, help, and the
/// exit status of each mistake.
@Suite struct CommandLineParserTests {
    /// The invocation `arguments` parse to.
    func invocation(_ arguments: [String]) throws -> Invocation {
        guard case .run(let invocation) = try CommandLineParser.parse(arguments) else {
            throw CommandFailure(.internalError, "\(arguments) did not parse to a command")
        }
        return invocation
    }

    /// The failure `arguments` cause.
    func failure(_ arguments: [String]) -> CommandFailure? {
        do {
            _ = try CommandLineParser.parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func helpAloneIsTheProgramsHelp(_ arguments: [String]) throws {
        guard case .help(let text) = try CommandLineParser.parse(arguments) else {
            Issue.record("no help for \(arguments)")
            return
        }
        #expect(text == Help.main)
    }

    @Test(arguments: Command.allCases)
    func everyCommandHasHelpBothWays(_ command: Command) throws {
        let words = command.rawValue.split(separator: " ").map(String.init)
        for arguments in [["help"] + words, words + ["--help"], ["-h"] + words + ["x", "y"]] {
            guard case .help(let text) = try CommandLineParser.parse(arguments) else {
                Issue.record("no help for \(arguments)")
                continue
            }
            #expect(text == Help.text(for: command))
            #expect(text.hasPrefix("Usage: swiftlet \(command.rawValue)"))
        }
    }

    @Test func rosterAloneWithHelpListsItsActions() throws {
        guard case .help(let text) = try CommandLineParser.parse(["roster", "--help"]) else {
            Issue.record("no roster help")
            return
        }
        for action in ["list", "add JID", "remove JID", "accept JID", "reject JID"] {
            #expect(text.contains("roster \(action)"))
        }
    }

    @Test func roomAloneWithHelpListsItsActions() throws {
        guard case .help(let text) = try CommandLineParser.parse(["room", "--help"]) else {
            Issue.record("no room help")
            return
        }
        for action in ["list", "create ROOM", "join ROOM", "send ROOM TEXT...", "kick ROOM NICK", "ban ROOM JID"] {
            #expect(text.contains("room \(action)"))
        }
        #expect(failure(["room"])?.message.hasPrefix("room needs an action: list, create, join") == true)
    }

    @Test func roomCommandsTakeTheirOptions() throws {
        let create = try invocation(["room", "create", "lounge@conference.example.com", "--persistent", "--nick", "al"])
        #expect(create.command == .roomCreate)
        #expect(create.flag("--persistent"))
        #expect(create.value("--nick") == "al")
        let send = try invocation(["room", "send", "lounge@conference.example.com", "hello", "all"])
        #expect(send.operands == ["lounge@conference.example.com", "hello", "all"])
        #expect(Command.roomJoin.runsUntilStopped)
        #expect(!Command.roomSend.runsUntilStopped)
    }

    @Test func versionWinsAnywhere() throws {
        guard case .version = try CommandLineParser.parse(["send", "--version"]) else {
            Issue.record("--version was not seen")
            return
        }
    }

    @Test func usageMistakesExitWith64() {
        let mistakes: [[String]] = [
            [], ["bogus"], ["roster"], ["roster", "bogus"], ["room"], ["room", "bogus"], ["room", "kick", "r@x"],
            ["room", "history", "r@x", "--persistent"], ["send", "bob@example.com"], ["login"],
            ["login", "a@example.com", "extra"], ["listen", "--frobnicate"], ["listen", "-x"],
            ["send", "--name", "Bob", "bob@example.com", "hi"], ["listen", "--count"], ["listen", "--json=yes"],
            ["recent", "--json", "--json"], ["recent", "--timeout", "soon"], ["recent", "--timeout", "0"],
            ["recent", "--server", "host:99999"], ["recent", "--tls", "pin:ABCD"],
        ]
        for arguments in mistakes {
            #expect(failure(arguments)?.status == .usage, "\(arguments)")
        }
    }

    @Test func malformedCommandOptionValuesAreUsageErrorsWhenRead() throws {
        let history = try invocation(["history", "bob@example.com", "--limit", "ten", "--before", "yesterday"])
        #expect(throws: CommandFailure.self) { try history.integer("--limit", in: 1...100) }
        #expect(throws: CommandFailure.self) { try history.date("--before") }
        #expect(throws: CommandFailure.self) { try invocation(["recent", "--limit", "0"]).integer("--limit", in: 1...100) }
        for arguments in [["listen", "--only", "message,gossip"], ["listen", "--count", "0"], ["listen", "--only", ""]] {
            do {
                _ = try ListenOptions(try invocation(arguments))
                Issue.record("\(arguments) was accepted")
            } catch let error as CommandFailure {
                #expect(error.status == .usage)
            }
        }
    }

    @Test func aBadJIDIsBadData() throws {
        #expect(failure(["listen", "--account", "not a jid@@"])?.status == .badData)
        #expect(failure(["listen", "--account", "example.com"])?.status == .badData)
        #expect(throws: CommandFailure(.badData, "'a@b/c' is not an account JID (like alice@example.com)")) {
            try invocation(["login", "a@b/c"]).jid(at: 0, account: true)
        }
        #expect(try invocation(["send", "bob@example.com/phone", "hi"]).jid(at: 0).resourcepart == "phone")
    }

    @Test func optionsGoBeforeOrAfterTheCommandInEitherForm() throws {
        let parsed = try invocation([
            "--home", "/h", "roster", "--name=Bob", "add", "--group", "A", "bob@example.com", "--group=B",
            "--timeout", "2.5", "--account=alice@example.com",
        ])
        #expect(parsed.command == .rosterAdd)
        #expect(parsed.operands == ["bob@example.com"])
        #expect(parsed.value("--name") == "Bob")
        #expect(parsed.values("--group") == ["A", "B"])
        #expect(parsed.global.home == "/h")
        #expect(parsed.global.timeout == .milliseconds(2500))
        #expect(parsed.global.account == (try JID("alice@example.com")))
        #expect(!parsed.global.verbose)
        #expect(try invocation(["--verbose", "roster", "list"]).global.verbose)
    }

    @Test func doubleDashEndsOptionsAndTextWordsAreJoined() throws {
        let parsed = try invocation(["send", "bob@example.com", "--", "--not-an-option", "-x", "hi"])
        #expect(parsed.operands == ["bob@example.com", "--not-an-option", "-x", "hi"])
        #expect(try invocation(["send", "bob@example.com", "-"]).operands == ["bob@example.com", "-"])
    }

    @Test func typedValues() throws {
        let parsed = try invocation([
            "history", "bob@example.com", "--limit", "7", "--before", "2026-05-01T12:00:00Z", "--json",
        ])
        #expect(try parsed.integer("--limit", in: 1...100) == 7)
        #expect(try parsed.date("--before") == Timestamp.parse("2026-05-01T12:00:00Z"))
        #expect(parsed.flag("--json"))
        #expect(!parsed.flag("--yes"))
        let presence = try invocation(["presence", "away", "--priority", "-5"])
        #expect(try presence.integer("--priority", in: -128...127) == -5)
    }

    @Test func globalValues() throws {
        let fingerprint = String(repeating: "AB", count: 32)
        let global = try invocation([
            "recent", "--server", "[::1]:5223", "--tls", "pin:\(fingerprint)", "--resource", "cli",
        ]).global
        #expect(global.server == ServerAddress(host: "::1", port: 5223))
        #expect(global.tls == ClientTLSPolicy("pin:\(fingerprint)"))
        #expect(global.resource == "cli")
        #expect(try invocation(["recent", "--tls", "insecure"]).global.tls == .insecureAcceptAny)
    }

    @Test func anOptionMeansTheSameInEveryCommand() {
        // Building the table checks it; every name there comes from a spec.
        #expect(CommandLineParser.optionTakesValue["--json"] == false)
        #expect(CommandLineParser.optionTakesValue["--limit"] == true)
    }
}
