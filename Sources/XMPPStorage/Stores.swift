import SQLiteKit
import XMPPCore

/// The store objects of one storage thread.
///
/// Not `Sendable`: the SQLite stores share one connection, which only the
/// storage thread may use. Jobs receive it as a parameter and must not let
/// it, or anything it returns by reference, escape.
public final class Stores {
    /// The accounts.
    public let accounts: any AccountStore
    /// The rosters and subscription states.
    public let roster: any RosterStore
    /// The messages kept for users who were offline.
    public let offline: any OfflineStore
    /// The users' vCards (XEP-0054).
    public let vCards: any VCardStore
    /// The users' blocklists (XEP-0191).
    public let blocklists: any BlocklistStore
    /// The users' last logouts (XEP-0012).
    public let lastActivity: any LastActivityStore
    /// The users' message archives and archiving preferences (XEP-0313).
    public let archive: any ArchiveStore
    /// The group chat rooms' message archives (XEP-0313 §6).
    public let roomArchive: any RoomArchiveStore
    /// The users' file uploads (XEP-0363).
    public let uploads: any UploadStore
    /// The users' personal eventing nodes and items (XEP-0163).
    public let pep: any PEPStore
    /// The users' private XML (XEP-0049).
    public let privateXML: any PrivateXMLStore
    /// The persistent group chat rooms (XEP-0045).
    public let mucRooms: any MUCRoomStore
    /// The users' FAST tokens (XEP-0484).
    public let fastTokens: any FastTokenStore
    /// The push services the users enabled (XEP-0357).
    public let pushRegistrations: any PushRegistrationStore
    /// The connection the SQLite stores share, so that a job can group
    /// several store calls into one transaction; `nil` for in-memory stores.
    public let database: Database?

    /// Bundles the SQLite stores over `database`, which must be migrated.
    public init(database: Database) {
        self.database = database
        self.accounts = SQLiteAccountStore(database: database)
        self.roster = SQLiteRosterStore(database: database)
        self.offline = SQLiteOfflineStore(database: database)
        self.vCards = SQLiteVCardStore(database: database)
        self.blocklists = SQLiteBlocklistStore(database: database)
        self.lastActivity = SQLiteLastActivityStore(database: database)
        self.archive = SQLiteArchiveStore(database: database)
        self.roomArchive = SQLiteRoomArchiveStore(database: database)
        self.uploads = SQLiteUploadStore(database: database)
        self.pep = SQLitePEPStore(database: database)
        self.privateXML = SQLitePrivateXMLStore(database: database)
        self.mucRooms = SQLiteMUCRoomStore(database: database)
        self.fastTokens = SQLiteFastTokenStore(database: database)
        self.pushRegistrations = SQLitePushRegistrationStore(database: database)
    }

    /// Bundles `accounts`, a store that needs no database such as
    /// `InMemoryAccountStore`, with in-memory stores of every other kind
    /// for its users.
    ///
    /// `self.accounts` forwards to `accounts`, and when it deletes an
    /// account it also deletes the account's data in the other stores, as
    /// `ON DELETE CASCADE` does in SQLite; when it replaces an account's
    /// credentials it deletes the account's FAST tokens, as
    /// `SQLiteAccountStore` does, and its push registrations. Delete accounts and change passwords
    /// through it, not through `accounts` directly.
    public init(accounts: any AccountStore) {
        let roster = InMemoryRosterStore(accounts: accounts)
        let offline = InMemoryOfflineStore(accounts: accounts)
        let vCards = InMemoryVCardStore(accounts: accounts)
        let blocklists = InMemoryBlocklistStore(accounts: accounts)
        let lastActivity = InMemoryLastActivityStore(accounts: accounts)
        let archive = InMemoryArchiveStore(accounts: accounts)
        let uploads = InMemoryUploadStore(accounts: accounts)
        let pep = InMemoryPEPStore(accounts: accounts)
        let privateXML = InMemoryPrivateXMLStore(accounts: accounts)
        let fastTokens = InMemoryFastTokenStore(accounts: accounts)
        let pushRegistrations = InMemoryPushRegistrationStore(accounts: accounts)
        self.database = nil
        self.accounts = CascadingAccountStore(
            base: accounts,
            dependents: [
                roster, offline, vCards, blocklists, lastActivity, archive, uploads, pep, privateXML, fastTokens,
                pushRegistrations,
            ],
            credentialBound: [fastTokens, pushRegistrations])
        self.roster = roster
        self.offline = offline
        self.vCards = vCards
        self.blocklists = blocklists
        self.lastActivity = lastActivity
        self.archive = archive
        self.roomArchive = InMemoryRoomArchiveStore()
        self.uploads = uploads
        self.pep = pep
        self.privateXML = privateXML
        self.mucRooms = InMemoryMUCRoomStore()
        self.fastTokens = fastTokens
        self.pushRegistrations = pushRegistrations
    }

    /// Runs `body` in one transaction when the stores share a database, so
    /// that a job's writes commit together; in-memory stores just run it.
    ///
    /// - Parameter durable: Whether the commit waits for the disk (the
    ///   connection's `synchronous` setting); `false` commits with
    ///   `.normal`, for writes a power failure may take back.
    /// - Throws: What `body` throws, or `DatabaseError`.
    public func inTransaction<Result>(durable: Bool = true, _ body: () throws -> Result) throws -> Result {
        guard let database else { return try body() }
        return try durable ? database.transaction(body) : database.transaction(synchronous: .normal, body)
    }
}

extension StorageQueue<Stores> {
    /// Starts the server's storage thread, `swiftlet.storage`, on the stores
    /// `makeStores` builds there; `shutdown()` closes their database, and
    /// `submitGrouped` commits its groups in it.
    ///
    /// - Throws: What `makeStores` throws.
    public convenience init(makeStores: @escaping @Sendable () throws -> Stores) throws {
        try self.init(
            name: "swiftlet.storage", open: makeStores, close: { $0.database?.close() }, database: { $0.database })
    }
}

/// An account store that, after deleting an account, deletes its data from
/// the in-memory stores, which cannot see the deletion themselves, and
/// after replacing its credentials deletes what the old ones gave access
/// to: its FAST tokens and push registrations.
private final class CascadingAccountStore: AccountStore {
    private let base: any AccountStore
    private let dependents: [any AccountScopedStore]
    private let credentialBound: [any AccountScopedStore]

    init(base: any AccountStore, dependents: [any AccountScopedStore], credentialBound: [any AccountScopedStore]) {
        self.base = base
        self.dependents = dependents
        self.credentialBound = credentialBound
    }

    func deleteAccount(_ username: String) throws -> Bool {
        guard try base.deleteAccount(username) else { return false }
        for store in dependents { store.removeAll(of: username) }
        return true
    }

    func createAccount(_ username: String, credentials: [SCRAMCredentials]) throws -> Bool {
        try base.createAccount(username, credentials: credentials)
    }

    func credentials(of username: String, for hashFunction: HashFunction) throws
        -> SCRAMCredentials?
    {
        try base.credentials(of: username, for: hashFunction)
    }

    func replaceCredentials(of username: String, with credentials: [SCRAMCredentials]) throws
        -> Bool
    {
        guard try base.replaceCredentials(of: username, with: credentials) else { return false }
        for store in credentialBound { store.removeAll(of: username) }
        return true
    }

    func accountExists(_ username: String) throws -> Bool {
        try base.accountExists(username)
    }

    func usernames() throws -> [String] {
        try base.usernames()
    }

    func accountCount() throws -> Int {
        try base.accountCount()
    }
}
