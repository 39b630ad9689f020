import Testing
import XMPPCore

@testable import XMPPStorage

/// The two store bundles: the SQLite stores on a migrated in-memory
/// database, and the in-memory stores. Contract tests run once per kind.
enum StoresKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case inMemory

    var testDescription: String { rawValue }

    func makeStores() throws -> Stores {
        switch self {
        case .sqlite: Stores(database: try migratedInMemoryDatabase())
        case .inMemory: Stores(accounts: InMemoryAccountStore())
        }
    }

    /// A bundle holding an account for each of `usernames`.
    func makeStores(withAccounts usernames: String...) throws -> Stores {
        let stores = try makeStores()
        for username in usernames {
            #expect(
                try stores.accounts.createAccount(username, credentials: sampleCredentialPair()))
        }
        return stores
    }
}
