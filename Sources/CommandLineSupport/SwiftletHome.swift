import Foundation
import XMPPClient
import XMPPCore

/// The directory where `swiftlet` keeps its files:
///
/// ```
/// HOME/accounts/alice@example.com.json   saved login (mode 600; directory 700)
/// HOME/archive.sqlite                    message archive and roster cache
/// ```
public struct SwiftletHome: Sendable, Equatable {
    /// The directory.
    public let path: String

    /// A home at `path`.
    public init(path: String) {
        self.path = path
    }

    /// The home `--home` names, else `$SWIFTLET_HOME`, else
    /// `$XDG_DATA_HOME/swiftlet`, else `$HOME/.local/share/swiftlet` (XDG
    /// Base Directory Specification). Empty variables count as unset.
    public init(option: String?, environment: [String: String]) {
        func variable(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        if let option {
            path = option
        } else if let home = variable("SWIFTLET_HOME") {
            path = home
        } else if let data = variable("XDG_DATA_HOME") {
            path = data + "/swiftlet"
        } else {
            path = (variable("HOME") ?? NSHomeDirectory()) + "/.local/share/swiftlet"
        }
    }

    /// The directory of the saved logins.
    public var accountsDirectory: String { path + "/accounts" }

    /// The SQLite file of the archive and roster cache, for all accounts.
    public var archivePath: String { path + "/archive.sqlite" }

    /// The saved login of `account`.
    public func credentialsPath(for account: JID) -> String {
        accountsDirectory + "/" + account.bare.description + ".json"
    }

    /// Creates the home directory, private to its owner, if it is missing.
    /// - Throws: `CommandFailure` with `.localFile`.
    public func create() throws(CommandFailure) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CommandFailure(.localFile, "cannot create \(path): \(error.localizedDescription)")
        }
    }

    /// The accounts with a saved login, the one saved last first.
    public func savedAccounts() -> [JID] {
        let directory = URL(fileURLWithPath: accountsDirectory)
        let files =
            (try? FileManager.default.contentsOfDirectory(
                at: directory, includingPropertiesForKeys: [.contentModificationDateKey])) ?? []
        let accounts = files.compactMap { file -> (JID, Date)? in
            let name = file.lastPathComponent
            guard name.hasSuffix(".json"), let jid = try? JID(String(name.dropLast(5))), jid.localpart != nil,
                jid.isBare
            else { return nil }
            let modified = (try? file.resourceValues(forKeys: [.contentModificationDateKey]))?.contentModificationDate
            return (jid, modified ?? .distantPast)
        }
        return accounts.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }.map(\.0)
    }

    /// The account to use: `option` (`--account`) if given, else the one
    /// whose login was saved last.
    /// - Throws: `CommandFailure` with `.noAccount` when nothing is saved.
    public func account(option: JID?) throws(CommandFailure) -> JID {
        if let option { return option }
        guard let account = savedAccounts().first else {
            throw CommandFailure(.noAccount, "no saved account in \(path); run 'swiftlet login JID' first")
        }
        return account
    }

    /// The saved login of `account`.
    /// - Throws: `CommandFailure`: `.noAccount` when there is none or it
    ///   cannot be used, `.localFile` when it cannot be read.
    public func credentials(for account: JID) throws(CommandFailure) -> SavedCredentials {
        do {
            return try SavedCredentials.read(from: credentialsPath(for: account))
        } catch let error as SavedCredentialsError {
            if case .notFound = error {
                throw CommandFailure(.noAccount, "no saved login for \(account); run 'swiftlet login \(account)' first")
            }
            throw CommandFailure(error)
        } catch {
            throw CommandFailure(error)
        }
    }
}
