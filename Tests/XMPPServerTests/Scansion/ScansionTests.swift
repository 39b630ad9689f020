import Foundation
import Testing
import XMPPTestSupport

/// Prosody's scripted conversations (`Tests/Scripts/scansion/*.scs`, see
/// the `SOURCE.md` there) played against the in-memory server.
@Suite("Scansion scripts")
struct ScansionTests {
    /// Where Swiftlet answers differently from Prosody: the line of the
    /// action that fails first, and why.
    struct Deviation: Sendable {
        let line: Int
        let summary: String
    }

    /// The scripts, by file name without `.scs`, that test what Swiftlet
    /// implements: stream setup, roster, subscriptions, presence, messages,
    /// disco of the own account.
    static let scripts = [
        "basic", "basic_message", "basic_roster", "disco_self", "issue1121", "keep_full_sub_req",
        "presence_preapproval",
    ]

    /// Scripts that stop at a difference between Swiftlet and Prosody.
    /// A script failing at another line, or passing, fails the test.
    static let deviations: [String: Deviation] = [
        "issue1121": Deviation(
            line: 32,
            summary: """
                no unavailable presence from the contact's bare JID acknowledging a subscription request: \
                a Prosody courtesy that RFC 6121 §3.1.3 does not ask for
                """),
    ]

    @Test("Prosody script", arguments: scripts)
    func script(_ name: String) throws {
        let script = try Self.load(name)
        guard let deviation = Self.deviations[name] else {
            return try ScansionRunner.run(script, on: TestServer())
        }
        try withKnownIssue(Comment(rawValue: deviation.summary)) {
            try ScansionRunner.run(script, on: TestServer())
        } matching: { issue in
            (issue.error as? ScansionFailure)?.line == deviation.line
        }
    }

    /// Reads and parses `Tests/Scripts/scansion/<name>.scs`.
    static func load(_ name: String, filePath: String = #filePath) throws -> ScansionScript {
        let directory = URL(fileURLWithPath: filePath)
            .deletingLastPathComponent()  // Scansion
            .deletingLastPathComponent()  // XMPPServerTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Scripts/scansion")
        let text = try String(contentsOf: directory.appendingPathComponent("\(name).scs"), encoding: .utf8)
        return try ScansionScript(parsing: text, name: name)
    }
}
