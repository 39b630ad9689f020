import Foundation
import Testing
import XMPPTestSupport

/// Replays of what unchanged XMPPFramework 4.1 apps send, byte for byte
/// and in their order, checking that every answer has the shape
/// XMPPFramework's parser needs (`XMPPFRAMEWORK.md`). The scripts are
/// `Tests/Scripts/xmppframework/*.scs`, listed in the README there; every
/// script in the directory runs.
@Suite("XMPPFramework replay")
struct XMPPFrameworkReplayTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Scansion
        .deletingLastPathComponent()  // XMPPServerTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("Scripts/xmppframework")

    /// The scripts' names, without `.scs`.
    static let scripts: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".scs") }.map { String($0.dropLast(4)) }.sorted()
    }()

    @Test func everyScriptIsListedInTheReadme() throws {
        #expect(!Self.scripts.isEmpty)
        let readme = try String(contentsOf: Self.directory.appendingPathComponent("README.md"), encoding: .utf8)
        for name in Self.scripts {
            #expect(readme.contains("`\(name).scs`"), "\(name).scs is not described in README.md")
        }
    }

    @Test("XMPPFramework flow", arguments: scripts)
    func replay(_ name: String) throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent("\(name).scs"), encoding: .utf8)
        try ScansionRunner.run(try ScansionScript(parsing: text, name: name), on: TestServer())
    }
}
