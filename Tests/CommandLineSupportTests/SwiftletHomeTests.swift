import Foundation
import Testing
import XMPPClient
import XMPPCore
@testable import CommandLineSupport

/// Where the files are, and which account a command uses.
@Suite struct SwiftletHomeTests {
    @Test func theOptionThenSwiftletHomeThenXDGThenHome() {
        let environment = ["SWIFTLET_HOME": "/s", "XDG_DATA_HOME": "/x", "HOME": "/home/me"]
        #expect(SwiftletHome(option: "/o", environment: environment).path == "/o")
        #expect(SwiftletHome(option: nil, environment: environment).path == "/s")
        #expect(SwiftletHome(option: nil, environment: ["SWIFTLET_HOME": "", "XDG_DATA_HOME": "/x"]).path == "/x/swiftlet")
        #expect(SwiftletHome(option: nil, environment: ["HOME": "/home/me"]).path == "/home/me/.local/share/swiftlet")
    }

    @Test func files() throws {
        let home = SwiftletHome(path: "/h")
        #expect(home.credentialsPath(for: try JID("alice@example.com/laptop")) == "/h/accounts/alice@example.com.json")
        #expect(home.archivePath == "/h/archive.sqlite")
    }

    @Test func theAccountIsTheOptionElseTheLastSavedElseNone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-home-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let home = SwiftletHome(path: directory)
        do {
            _ = try home.account(option: nil)
            Issue.record("an account was found in an empty home")
        } catch {
            #expect(error.status == .noAccount)
        }
        try home.create()
        let attributes = try FileManager.default.attributesOfItem(atPath: directory)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        try FileManager.default.createDirectory(atPath: home.accountsDirectory, withIntermediateDirectories: true)
        let older = Date(timeIntervalSinceNow: -60)
        for (name, date) in [("bob@example.com", older), ("alice@example.com", Date()), ("carol@example.com", older)] {
            let path = home.accountsDirectory + "/\(name).json"
            _ = FileManager.default.createFile(atPath: path, contents: Data("{}".utf8))
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
        }
        _ = FileManager.default.createFile(atPath: home.accountsDirectory + "/notes.txt", contents: nil)
        _ = FileManager.default.createFile(atPath: home.accountsDirectory + "/example.com.json", contents: nil)
        #expect(home.savedAccounts().map(\.description) == ["alice@example.com", "bob@example.com", "carol@example.com"])
        #expect(try home.account(option: nil) == JID("alice@example.com"))
        #expect(try home.account(option: JID("carol@example.com")) == JID("carol@example.com"))
        // An unusable file is an account to log in again, not a crash.
        let alice = try JID("alice@example.com")
        do {
            _ = try home.credentials(for: alice)
            Issue.record("{} was read as credentials")
        } catch {
            #expect(error.status == .noAccount)
        }
    }
}
