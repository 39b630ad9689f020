import Testing
import XMPPCore
@testable import CommandLineSupport

@Suite struct CommandLineBasicsTests {
    let server = CommandLineBasics(program: "swiftletd", usage: "USAGE", defaultCommand: "serving")
    let client = CommandLineBasics(program: "swiftlet", usage: "USAGE")

    @Test(arguments: ["--help", "-h", "help"])
    func helpPrintsUsageAndSucceeds(_ flag: String) {
        let outcome = client.outcome(for: [flag])
        #expect(outcome.output == "USAGE")
        #expect(!outcome.toStandardError)
        #expect(outcome.status == 0)
    }

    @Test(arguments: ["--version", "-V", "version"])
    func versionPrintsProgramAndVersion(_ flag: String) {
        let outcome = server.outcome(for: [flag])
        #expect(outcome.output == "swiftletd \(Swiftlet.version)")
        #expect(outcome.status == 0)
    }

    @Test func unknownCommandIsUnavailableNotSilentlyIgnored() {
        let outcome = client.outcome(for: ["send", "juliet@example.com", "hi"])
        #expect(outcome.output.contains("'send' is not available yet"))
        #expect(outcome.toStandardError)
        #expect(outcome.status == 69)
    }

    @Test func noArgumentsIsAUsageErrorWithoutADefaultCommand() {
        let outcome = client.outcome(for: [])
        #expect(outcome.output.hasPrefix("swiftlet: no command given"))
        #expect(outcome.status == 64)
    }

    @Test func noArgumentsRunsTheDefaultCommandWhenThereIsOne() {
        let outcome = server.outcome(for: [])
        #expect(outcome.output.hasPrefix("swiftletd: serving is not available yet"))
        #expect(outcome.status == 69)
    }
}
