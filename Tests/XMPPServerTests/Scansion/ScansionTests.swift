import Foundation
import Testing
import XMPPTestSupport

/// Scripted conversations (`Tests/Scripts/scansion/*.scs`: Prosody's, and
/// Swiftlet's own `swiftlet_*`; see the `SOURCE.md` there) played against
/// the in-memory server.
@Suite("Scansion scripts")
struct ScansionTests {
    /// The scripts, by file name without `.scs`, that test what Swiftlet
    /// implements: stream setup, roster, subscriptions, presence, messages,
    /// disco of the own account.
    static let scripts = [
        "basic", "basic_message", "basic_roster", "disco_self", "issue1121", "keep_full_sub_req",
        "presence_preapproval",
        // Swiftlet's own (see SOURCE.md).
        "swiftlet_blocking", "swiftlet_carbons",
    ]

    @Test("Scansion script", arguments: scripts)
    func script(_ name: String) throws {
        try ScansionRunner.run(try Self.load(name), on: TestServer())
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
