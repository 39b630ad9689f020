import Foundation
import Testing
import XMPPStorage
@testable import XMPPServer

/// The demo's password is public, so the demo refuses, unless told it may,
/// to listen beyond loopback or to add its accounts beside real ones.
@Suite struct DemoSafetyTests {
    private func config(listen: [String] = ["127.0.0.1:0"]) -> ServerConfig {
        var config = ServerConfig()
        config.dataDirectory = NSTemporaryDirectory() + "swiftlet-demo-safety-" + UUID().uuidString
        config.listen = listen.compactMap(ListenAddress.init)
        return config
    }

    @Test func listeningBeyondLoopbackNeedsTheConfirmation() throws {
        let exposed = config(listen: ["127.0.0.1:0", "0.0.0.0:0"])
        defer { try? FileManager.default.removeItem(atPath: exposed.dataDirectory) }
        #expect(throws: Demo.Refusal.self) { try Demo.seed(exposed) }
        #expect(!FileManager.default.fileExists(atPath: exposed.dataDirectory + "/swiftlet.sqlite"), "nothing seeded")
        try Demo.seed(exposed, passwordsMayBePublic: true)
    }

    @Test func seedingBesideOtherAccountsNeedsTheConfirmation() throws {
        let existing = config()
        defer { try? FileManager.default.removeItem(atPath: existing.dataDirectory) }
        let admin = try Admin(config: existing)
        try admin.addUser("dave", password: "private")
        admin.close()
        #expect(throws: Demo.Refusal.self) { try Demo.seed(existing) }
        let check = try Admin(config: existing)
        #expect(try check.usernames() == ["dave"])
        check.close()

        try Demo.seed(existing, passwordsMayBePublic: true)
        let after = try Admin(config: existing)
        #expect(try after.usernames() == ["alice", "bob", "carol", "dave"])
        after.close()
    }

    @Test func aDemoDirectoryCanBeSeededAgain() throws {
        let demo = config()
        defer { try? FileManager.default.removeItem(atPath: demo.dataDirectory) }
        try Demo.seed(demo)
        try Demo.seed(demo)
    }

    @Test func theConfirmationIsAFlag() throws {
        let options = try ServerOptions.parse(["demo", "--i-know-demo-passwords-are-public", "--listen", "0.0.0.0:5222"])
        #expect(options.demoPasswordsMayBePublic)
        #expect(options.arguments == ["demo"])
        #expect(try !ServerOptions.parse(["demo"]).demoPasswordsMayBePublic)
    }
}
