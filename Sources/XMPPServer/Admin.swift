import SQLiteKit
import XMPPCore
import XMPPStorage

/// The admin commands of `swiftletd` (`adduser`, `deluser`, `passwd`,
/// `users`). They open the server's database directly; WAL and the busy
/// timeout let them run while the server does. What the running server must
/// act on goes through its control socket (`ControlSocket`): a deletion is
/// carried out by the server itself (sessions ended, contacts told), and
/// after a password change the server ends the account's sessions.
public struct Admin {
    private let config: ServerConfig
    private let storage: StorageQueue<Stores>

    /// Opens the database of `config`'s data directory. A command writes
    /// a row or two, so its commits checkpoint the WAL themselves, without
    /// a thread for it.
    public init(config: ServerConfig) throws {
        self.config = config
        storage = try Storage.open(
            directory: config.dataDirectory, configuration: Database.Configuration(checkpointsInBackground: false))
    }

    /// Finishes the storage thread's work and closes the database; call it
    /// before the process exits.
    public func close() {
        storage.shutdown()
    }

    /// Creates an account.
    /// - Throws: `AdminError` when the name or password is unusable or the
    ///   account exists.
    public func addUser(_ name: String, password: String) throws {
        let username = try normalized(name)
        try check(password)
        let iterations = config.authentication.scramIterations
        let created = try storage.perform { stores in
            try stores.accounts.createAccount(
                username, credentials: StoredAccounts.credentials(for: password, iterations: iterations))
        }
        guard created else { throw AdminError("\(username)@\(config.domain) already exists") }
    }

    /// Deletes an account, everything stored for it and its entries in
    /// other users' rosters: through the running server when there is one,
    /// else here.
    public func deleteUser(_ name: String) throws {
        let username = try normalized(name)
        if let answer = ControlSocket.send(.deleteAccount(username), dataDirectory: config.dataDirectory) {
            return try Self.check(answer)
        }
        let domain = config.domain
        guard let deleted = try storage.perform({ try StoredAccounts.delete(username, domain: domain, in: $0) }) else {
            throw AdminError("no account \(username)@\(config.domain)")
        }
        let files = UploadFiles(dataDirectory: config.dataDirectory)
        for slot in deleted.uploadSlots { files.remove(slot) }
    }

    /// Sets a new password.
    public func setPassword(_ name: String, password: String) throws {
        let username = try normalized(name)
        try check(password)
        let iterations = config.authentication.scramIterations
        let changed = try storage.perform { stores in
            try stores.accounts.replaceCredentials(
                of: username, with: StoredAccounts.credentials(for: password, iterations: iterations))
        }
        guard changed else { throw AdminError("no account \(username)@\(config.domain)") }
        if let answer = ControlSocket.send(.revokeSessions(username), dataDirectory: config.dataDirectory) {
            try Self.check(answer)
        }
    }

    /// Throws the message of a control socket answer that is an error.
    private static func check(_ answer: String) throws {
        guard answer != "ok", !answer.hasPrefix("ok ") else { return }
        throw AdminError(answer.hasPrefix("error ") ? String(answer.dropFirst(6)) : answer)
    }

    /// Every account's username, sorted.
    public func usernames() throws -> [String] {
        try storage.perform { try $0.accounts.usernames() }
    }

    private func normalized(_ name: String) throws -> String {
        do {
            return try Username.normalize(name, domain: config.domain)
        } catch {
            throw AdminError(error.text ?? "invalid username")
        }
    }

    private func check(_ password: String) throws {
        do {
            try Username.checkPassword(password)
        } catch {
            throw AdminError(error.text ?? "invalid password")
        }
    }
}

/// An admin command that could not be carried out, with the reason.
public struct AdminError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
