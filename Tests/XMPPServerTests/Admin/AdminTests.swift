import Foundation
import Testing
import XMPPCore
import XMPPStorage
@testable import XMPPServer

/// `swiftletd adduser/passwd/deluser/users` on a real database file.
@Suite struct AdminTests {
    /// A config whose data directory is a fresh temporary directory.
    private func temporaryConfig() -> ServerConfig {
        var config = ServerConfig()
        config.dataDirectory = NSTemporaryDirectory() + "swiftlet-admin-" + UUID().uuidString
        return config
    }

    private func removeData(_ config: ServerConfig) {
        try? FileManager.default.removeItem(atPath: config.dataDirectory)
    }

    /// The stored SHA-256 credentials of `username`, read with a separate connection.
    private func credentials(_ username: String, _ config: ServerConfig) throws -> SCRAMCredentials? {
        let storage = try Storage.open(directory: config.dataDirectory)
        defer { storage.shutdown() }
        return try storage.perform { try $0.accounts.credentials(of: username, for: .sha256) }
    }

    @Test func addUserStoresCredentialsNotThePassword() throws {
        let config = temporaryConfig()
        defer { removeData(config) }
        try Admin(config: config).addUser("Alice", password: "correct horse")
        #expect(try Admin(config: config).usernames() == ["alice"])
        let stored = try #require(try credentials("alice", config))
        #expect(stored.matches(password: "correct horse"))
        #expect(stored.iterations >= 4096)
        let file = try Data(contentsOf: URL(fileURLWithPath: config.dataDirectory + "/swiftlet.sqlite"))
        #expect(file.range(of: Data("correct horse".utf8)) == nil, "the password is nowhere in the file")
    }

    @Test func addingAnExistingUserFails() throws {
        let config = temporaryConfig()
        defer { removeData(config) }
        let admin = try Admin(config: config)
        try admin.addUser("bob", password: "one")
        #expect(throws: AdminError.self) { try admin.addUser("BOB", password: "two") }
        #expect(try credentials("bob", config)?.matches(password: "one") == true)
    }

    @Test func passwdAndDeluser() throws {
        let config = temporaryConfig()
        defer { removeData(config) }
        let admin = try Admin(config: config)
        try admin.addUser("carol", password: "old")
        try admin.setPassword("carol", password: "new")
        #expect(try credentials("carol", config)?.matches(password: "new") == true)
        try admin.deleteUser("carol")
        #expect(try admin.usernames().isEmpty)
        #expect(throws: AdminError.self) { try admin.deleteUser("carol") }
        #expect(throws: AdminError.self) { try admin.setPassword("carol", password: "x") }
    }

    /// Without a running server, deluser itself takes the account out of
    /// its contacts' rosters, so a new account of that name inherits nothing.
    @Test func deluserWithoutAServerRemovesTheAccountFromOtherRosters() throws {
        let config = temporaryConfig()
        defer { removeData(config) }
        let admin = try Admin(config: config)
        try admin.addUser("alice", password: "a")
        try admin.addUser("bob", password: "b")
        admin.close()
        let storage = try Storage.open(directory: config.dataDirectory)
        _ = try storage.perform { stores in
            try stores.roster.put(RosterItem(contact: "bob@localhost", state: SubscriptionState(.both)), of: "alice")
        }
        storage.shutdown()

        let again = try Admin(config: config)
        try again.deleteUser("bob")
        try again.addUser("bob", password: "someone else")
        again.close()
        let check = try Storage.open(directory: config.dataDirectory)
        defer { check.shutdown() }
        #expect(try check.perform { try $0.roster.items(of: "alice") }.isEmpty)
    }

    @Test(arguments: ["", "a b", "a,b", "a=b", "x@y"])
    func unusableNamesAreRefused(_ name: String) throws {
        let config = temporaryConfig()
        defer { removeData(config) }
        #expect(throws: AdminError.self) { try Admin(config: config).addUser(name, password: "pw") }
    }

    @Test func emptyPasswordIsRefused() throws {
        let config = temporaryConfig()
        defer { removeData(config) }
        #expect(throws: AdminError.self) { try Admin(config: config).addUser("dave", password: "") }
    }
}
