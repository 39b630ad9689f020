import Foundation
import Testing
import XMPPCore

@testable import SQLiteKit
@testable import XMPPStorage

/// A database written before the roster and offline tables upgrades in place.
@Suite struct SchemaUpgradeTests {
    /// The server's migrator as it was when only `0001-accounts` had
    /// shipped. A shipped migration never changes, so neither does this copy.
    private var migratorBeforeRoster: Migrator {
        var migrator = Migrator()
        migrator.register("0001-accounts") { database in
            try database.execute(
                """
                CREATE TABLE accounts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    username TEXT NOT NULL UNIQUE
                );
                CREATE TABLE scram_credentials (
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    hash_function TEXT NOT NULL CHECK (hash_function IN ('sha-1', 'sha-256')),
                    salt BLOB NOT NULL,
                    iterations INTEGER NOT NULL CHECK (iterations > 0),
                    stored_key BLOB NOT NULL,
                    server_key BLOB NOT NULL,
                    PRIMARY KEY (account_id, hash_function)
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }

    @Test func theMigrationsStartWithTheShippedOnes() {
        #expect(
            Array(Storage.migrator.names.prefix(3)) == [
                "0001-accounts", "0002-roster", "0003-offline",
            ])
    }

    @Test func aDatabaseWithOnlyAccountsUpgradesKeepingThem() throws {
        try withTemporaryDirectory { directory in
            do {
                let old = try Database(path: directory + "/" + Storage.fileName)
                try migratorBeforeRoster.migrate(old)
                let accounts = SQLiteAccountStore(database: old)
                #expect(
                    try accounts.createAccount("romeo", credentials: sampleCredentialPair(seed: 3)))
                #expect(try accounts.createAccount("juliet", credentials: sampleCredentialPair()))
                old.close()
            }

            let storage = try Storage.open(directory: directory)
            defer { storage.shutdown() }
            let applied = try storage.perform { stores in
                try Storage.migrator.appliedMigrations(in: #require(stores.database))
            }
            #expect(applied == Storage.migrator.names)

            let (usernames, credentials) = try storage.perform { stores in
                (
                    try stores.accounts.usernames(),
                    try stores.accounts.credentials(of: "romeo", for: .sha256)
                )
            }
            #expect(usernames == ["juliet", "romeo"])
            #expect(credentials == sampleCredentials(.sha256, seed: 3))

            let (version, stored) = try storage.perform { stores in
                (
                    try stores.roster.put(RosterItem(contact: "juliet@capulet.lit"), of: "romeo"),
                    try stores.offline.store(
                        "<m/>", from: "a@x", timestamp: 1, for: "romeo", quota: OfflineQuota(messages: 9))
                )
            }
            #expect(version == 1)
            #expect(stored)

            // The new tables cascade from accounts created before them.
            let (items, messageCount) = try storage.perform { stores in
                _ = try stores.accounts.deleteAccount("romeo")
                _ = try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair())
                return (
                    try stores.roster.items(of: "romeo"), try stores.offline.count(for: "romeo")
                )
            }
            #expect(items == [])
            #expect(messageCount == 0)
        }
    }

    /// The server's migrations up to and including `last`, as a version
    /// that shipped with them ran them.
    private func migrator(through last: String) -> Migrator {
        var migrator = Migrator()
        for migration in Storage.migrator.migrations {
            migrator.register(migration.name, migrate: migration.migrate)
            if migration.name == last { break }
        }
        return migrator
    }

    @Test func offlineMessagesStoredBeforeSizesWereKeptCountTowardTheByteQuota() throws {
        try withTemporaryDirectory { directory in
            do {
                let old = try Database(path: directory + "/" + Storage.fileName)
                try migrator(through: "0010-pep").migrate(old)
                let stores = Stores(database: old)
                #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
                try old.execute(
                    """
                    INSERT INTO offline_messages (account_id, sender, timestamp, stanza)
                        VALUES (1, 'a@x', 1, '<m>🌹</m>');
                    """)
                old.close()
            }
            let storage = try Storage.open(directory: directory)
            defer { storage.shutdown() }
            let (tooMuch, justFits) = try storage.perform { stores in
                (
                    try stores.offline.store(
                        "<m/>", from: "a@x", timestamp: 2, for: "romeo", quota: OfflineQuota(messages: 9, bytes: 14)),
                    try stores.offline.store(
                        "<m/>", from: "a@x", timestamp: 2, for: "romeo", quota: OfflineQuota(messages: 9, bytes: 15))
                )
            }
            #expect(!tooMuch, "the old message's 11 bytes count")
            #expect(justFits)
        }
    }

    @Test func archivedMessagesSurviveTheMoveToStanzasStoredOnce() throws {
        try withTemporaryDirectory { directory in
            do {
                let old = try Database(path: directory + "/" + Storage.fileName)
                try migrator(through: "0008-uploads").migrate(old)
                let stores = Stores(database: old)
                for username in ["romeo", "juliet"] {
                    #expect(try stores.accounts.createAccount(username, credentials: sampleCredentialPair()))
                }
                try old.execute(
                    """
                    INSERT INTO archive_messages (id, account_id, timestamp, peer, peer_resource, stanza) VALUES
                        (7, 1, 1000, 'juliet@x', 'balcony', '<m>1</m>'),
                        (8, 2, 1000, 'romeo@x', NULL, '<m>1</m>'),
                        (20, 1, 2000, 'nurse@x', NULL, '<m>2</m>');
                    DELETE FROM archive_messages WHERE id = 20;
                    """)
                old.close()
            }
            let storage = try Storage.open(directory: directory)
            defer { storage.shutdown() }
            let (romeo, juliet, last) = try storage.perform { stores in
                (
                    try stores.archive.query(ArchiveQuery(max: 10), for: "romeo").items,
                    try stores.archive.query(ArchiveQuery(max: 10), for: "juliet").items,
                    try stores.archive.lastSequence()
                )
            }
            #expect(
                romeo == [ArchiveItem(
                    sequence: 7, timestamp: 1000, peer: ArchivePeer(bare: "juliet@x", resource: "balcony"),
                    stanza: "<m>1</m>")])
            #expect(juliet.map(\.sequence) == [8])
            #expect(last == 20, "the highest sequence ever used, though its item is gone")
            let removed = try storage.perform { stores in try stores.archive.removeMessages(before: 5000, limit: 10) }
            #expect(removed == 2, "each old row is a message of its own")
        }
    }

    /// The server's migrator as it was before `0013-pep-configuration`.
    private var migratorBeforePEPConfiguration: Migrator {
        var migrator = Migrator()
        for migration in Storage.migrator.migrations.prefix(while: { $0.name != "0013-pep-configuration" }) {
            migrator.register(migration.name, migrate: migration.migrate)
        }
        return migrator
    }

    @Test func pepNodesAndItemsKeepTheirDataThroughTheConfigurationUpgrade() throws {
        try withTemporaryDirectory { directory in
            do {
                let old = try Database(path: directory + "/" + Storage.fileName)
                try migratorBeforePEPConfiguration.migrate(old)
                #expect(try SQLiteAccountStore(database: old).createAccount("romeo", credentials: sampleCredentialPair()))
                try old.execute(
                    """
                    INSERT INTO pep_nodes (account_id, name, access_model, max_items, persist_items)
                        SELECT id, 'urn:xmpp:avatar:metadata', 'open', 3, 1 FROM accounts;
                    INSERT INTO pep_items (node_id, item_id, payload) SELECT id, 'a', '<a/>' FROM pep_nodes;
                    INSERT INTO pep_items (node_id, item_id, payload) SELECT id, 'b', '<b/>' FROM pep_nodes;
                    """)
                old.close()
            }
            let storage = try Storage.open(directory: directory)
            defer { storage.shutdown() }
            let (configuration, items, whitelisted) = try storage.perform { stores in
                let configuration = try stores.pep.configuration(of: "urn:xmpp:avatar:metadata", owner: "romeo")
                let items = try stores.pep.items(of: "urn:xmpp:avatar:metadata", owner: "romeo", ids: nil, limit: nil)
                try stores.pep.setNode("private", of: "romeo", configuration: PEPNodeConfiguration(accessModel: .whitelist))
                return (configuration, items, try stores.pep.configuration(of: "private", owner: "romeo"))
            }
            #expect(configuration == PEPNodeConfiguration(accessModel: .open, maxItems: 3))
            #expect(items.map(\.id) == ["b", "a"], "the order of publication survives")
            #expect(items.allSatisfy { $0.published > 0 }, "items kept so far count as published at the upgrade")
            #expect(whitelisted?.accessModel == .whitelist)
            let remaining = try storage.perform { stores in
                _ = try stores.accounts.deleteAccount("romeo")
                return try stores.database!.withCachedStatement("SELECT count(*) FROM pep_items") { statement in
                    _ = try statement.step()
                    return statement.int(at: 0)
                }
            }
            #expect(remaining == 0, "the items still cascade from the account")
        }
    }

    @Test func accountsCreatedBeforeFastTokensGetTokensThatGoWithThem() throws {
        try withTemporaryDirectory { directory in
            do {
                let old = try Database(path: directory + "/" + Storage.fileName)
                try migrator(through: "0016-muc-archive").migrate(old)
                for username in ["romeo", "juliet"] {
                    #expect(try SQLiteAccountStore(database: old).createAccount(username, credentials: sampleCredentialPair()))
                }
                old.close()
            }
            let storage = try Storage.open(directory: directory)
            defer { storage.shutdown() }
            let expiry = Date(timeIntervalSince1970: 1_700_000_100)
            let record = FastTokenRecord(userAgent: "phone", mechanism: "HT-SHA-256-NONE", nonce: [1, 2], expiry: expiry)
            let (applied, tokens) = try storage.perform { stores in
                try stores.fastTokens.issue(record, to: "romeo", maxClients: 5)
                try stores.fastTokens.issue(record, to: "juliet", maxClients: 5)
                return (
                    try Storage.migrator.appliedMigrations(in: #require(stores.database)),
                    try stores.fastTokens.tokens(of: "romeo", userAgent: "phone", at: expiry.addingTimeInterval(-1))
                )
            }
            #expect(applied == Storage.migrator.names)
            #expect(tokens == [record])
            let remaining = try storage.perform { stores in
                _ = try stores.accounts.replaceCredentials(of: "juliet", with: sampleCredentialPair(seed: 2))
                _ = try stores.accounts.deleteAccount("romeo")
                return try stores.database!.withCachedStatement("SELECT count(*) FROM fast_tokens") { statement in
                    _ = try statement.step()
                    return statement.int(at: 0)
                }
            }
            #expect(remaining == 0, "the tokens go with a password change and cascade from the account")
        }
    }
}
