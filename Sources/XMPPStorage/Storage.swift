import Foundation
import SQLiteKit

/// Opens the server's storage: the database file, its schema and the
/// storage thread.
public enum Storage {
    /// The database file's name inside the data directory.
    public static let fileName = "swiftlet.sqlite"

    /// Opens (creating if needed) `swiftlet.sqlite` in `directory`, runs the
    /// pending migrations and starts the storage thread.
    ///
    /// A missing directory is created, readable by the owner only: the file
    /// holds credentials and messages.
    ///
    /// - Parameters:
    ///   - directory: The data directory.
    ///   - configuration: How the connection is set up; the defaults suit the server.
    /// - Throws: A file system error, `DatabaseError` or `MigrationError`.
    public static func open(
        directory: String, configuration: Database.Configuration = Database.Configuration()
    ) throws -> StorageQueue<Stores> {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let path = URL(fileURLWithPath: directory).appendingPathComponent(fileName).path
        return try StorageQueue {
            let database = try Database(path: path, configuration: configuration)
            try migrator.migrate(database)
            return Stores(database: database)
        }
    }

    /// Starts a storage thread on a migrated SQLite database in memory, for
    /// tests that want the real SQL without a file.
    ///
    /// - Throws: `DatabaseError`.
    public static func openInMemory() throws -> StorageQueue<Stores> {
        try StorageQueue {
            let database = try Database.inMemory()
            try migrator.migrate(database)
            return Stores(database: database)
        }
    }

    /// The schema, as migrations in order.
    ///
    /// Append new migrations at the end. Never edit, rename or reorder one
    /// that has shipped: existing databases have run it and will skip it.
    static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register("0001-accounts") { database in
            // AUTOINCREMENT: an id is never reused, so a row some later table
            // failed to delete can never pass to a new account of another person.
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
        migrator.register("0002-roster") { database in
            // The primary key serves lookups, the listing sorted by contact
            // and the cascade. Groups are a JSON array: see SQLiteRosterStore.
            // A missing roster_versions row means version 0.
            try database.execute(
                """
                CREATE TABLE roster_items (
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    contact TEXT NOT NULL,
                    name TEXT,
                    group_names TEXT NOT NULL
                        CHECK (json_valid(group_names) AND json_type(group_names) = 'array'),
                    subscription TEXT NOT NULL
                        CHECK (subscription IN ('none', 'to', 'from', 'both')),
                    pending_out INTEGER NOT NULL CHECK (pending_out IN (0, 1)),
                    pending_in INTEGER NOT NULL CHECK (pending_in IN (0, 1)),
                    pre_approved INTEGER NOT NULL CHECK (pre_approved IN (0, 1)),
                    in_roster INTEGER NOT NULL CHECK (in_roster IN (0, 1)),
                    pending_in_request TEXT,
                    PRIMARY KEY (account_id, contact)
                ) WITHOUT ROWID;
                CREATE TABLE roster_versions (
                    account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                    version INTEGER NOT NULL CHECK (version > 0)
                );
                """)
        }
        migrator.register("0003-offline") { database in
            // AUTOINCREMENT: a removed message's id is never given to a new one.
            // The index (ordered by id within an account, since SQLite appends
            // the rowid to index entries) serves the listing, the quota count
            // and the cascade.
            try database.execute(
                """
                CREATE TABLE offline_messages (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    sender TEXT NOT NULL,
                    timestamp INTEGER NOT NULL,
                    stanza TEXT NOT NULL
                );
                CREATE INDEX offline_messages_by_account ON offline_messages (account_id);
                """)
        }
        migrator.register("0004-vcards") { database in
            // One vCard per account, as the XML the client sent (XEP-0054
            // has no partial updates, so nothing needs its fields apart).
            try database.execute(
                """
                CREATE TABLE vcards (
                    account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                    xml TEXT NOT NULL
                );
                """)
        }
        migrator.register("0005-blocklists") { database in
            // The primary key serves the sorted listing, the membership
            // test on the routing of an offline user's messages, and the
            // cascade.
            try database.execute(
                """
                CREATE TABLE blocklist_items (
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    jid TEXT NOT NULL,
                    PRIMARY KEY (account_id, jid)
                ) WITHOUT ROWID;
                """)
        }
        migrator.register("0006-last-activity") { database in
            // One row per account: when its last available resource went
            // away (seconds since 1970, UTC) and the status it left.
            try database.execute(
                """
                CREATE TABLE last_activity (
                    account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                    timestamp INTEGER NOT NULL,
                    status TEXT
                );
                """)
        }
        migrator.register("0007-archive") { database in
            // XEP-0313 archives: see SQLiteArchiveStore for why the rowid is
            // the caller's sequence and what each index serves. The JID lists
            // of the preferences are JSON arrays, as roster groups are.
            try database.execute(
                """
                CREATE TABLE archive_messages (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    timestamp INTEGER NOT NULL,
                    peer TEXT NOT NULL,
                    peer_resource TEXT,
                    stanza TEXT NOT NULL
                );
                CREATE INDEX archive_messages_by_account ON archive_messages (account_id);
                CREATE INDEX archive_messages_by_peer ON archive_messages (account_id, peer);
                CREATE TABLE archive_preferences (
                    account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                    default_rule TEXT NOT NULL CHECK (default_rule IN ('always', 'never', 'roster')),
                    always_jids TEXT NOT NULL
                        CHECK (json_valid(always_jids) AND json_type(always_jids) = 'array'),
                    never_jids TEXT NOT NULL
                        CHECK (json_valid(never_jids) AND json_type(never_jids) = 'array')
                );
                """)
        }
        migrator.register("0008-uploads") { database in
            // XEP-0363 uploads: a row per slot handed out, kept until the
            // file expires (or, never used, soon after the slot does). The
            // index serves the quota sum (size is in it) and the cascade.
            try database.execute(
                """
                CREATE TABLE uploads (
                    slot_id TEXT PRIMARY KEY,
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    filename TEXT NOT NULL,
                    size INTEGER NOT NULL CHECK (size >= 0),
                    content_type TEXT NOT NULL,
                    created INTEGER NOT NULL,
                    uploaded INTEGER NOT NULL CHECK (uploaded IN (0, 1))
                ) WITHOUT ROWID;
                CREATE INDEX uploads_by_account ON uploads (account_id, size);
                CREATE INDEX uploads_by_created ON uploads (created);
                """)
        }
        migrator.register("0009-archive-messages-once") { database in
            // Each message once, whatever number of archives keep it, and
            // small per-archive items clustered by account: see
            // SQLiteArchiveStore. Old rows become one-copy messages.
            try database.execute(
                """
                CREATE TABLE archive_stanzas (
                    id INTEGER PRIMARY KEY,
                    timestamp INTEGER NOT NULL,
                    stanza TEXT NOT NULL,
                    copies INTEGER NOT NULL CHECK (copies > 0)
                );
                CREATE TABLE archive_items (
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    id INTEGER NOT NULL,
                    timestamp INTEGER NOT NULL,
                    peer TEXT NOT NULL,
                    peer_resource TEXT,
                    stanza_id INTEGER NOT NULL,
                    PRIMARY KEY (account_id, id)
                ) WITHOUT ROWID;
                CREATE TABLE archive_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    last_sequence INTEGER NOT NULL
                );
                INSERT INTO archive_stanzas (id, timestamp, stanza, copies)
                    SELECT id, timestamp, stanza, 1 FROM archive_messages;
                INSERT INTO archive_items (account_id, id, timestamp, peer, peer_resource, stanza_id)
                    SELECT account_id, id, timestamp, peer, peer_resource, id FROM archive_messages;
                INSERT INTO archive_state (id, last_sequence) VALUES (
                    1, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'archive_messages'), 0));
                DROP TABLE archive_messages;
                CREATE TRIGGER archive_item_deleted AFTER DELETE ON archive_items BEGIN
                    DELETE FROM archive_stanzas WHERE id = old.stanza_id AND copies = 1;
                    UPDATE archive_stanzas SET copies = copies - 1 WHERE id = old.stanza_id;
                END;
                """)
        }
        migrator.register("0010-pep") { database in
            // XEP-0163 nodes and items: see SQLitePEPStore. Deleting an
            // account deletes its nodes, and deleting a node its items. The
            // unique index on (node_id, item_id) serves the cascade and the
            // lookups by id; the one on node_id (with the rowid SQLite
            // appends) the listing newest first and the trimming.
            try database.execute(
                """
                CREATE TABLE pep_nodes (
                    id INTEGER PRIMARY KEY,
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    access_model TEXT NOT NULL CHECK (access_model IN ('presence', 'open')),
                    max_items INTEGER NOT NULL CHECK (max_items > 0),
                    persist_items INTEGER NOT NULL CHECK (persist_items IN (0, 1)),
                    UNIQUE (account_id, name)
                );
                CREATE TABLE pep_items (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    node_id INTEGER NOT NULL REFERENCES pep_nodes (id) ON DELETE CASCADE,
                    item_id TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    UNIQUE (node_id, item_id)
                );
                CREATE INDEX pep_items_by_node ON pep_items (node_id);
                """)
        }
        migrator.register("0011-offline-sizes") { database in
            // The byte quota of offline messages: each stanza's size in
            // UTF-8, kept in a column so that the quota's sum, served by
            // the index, never reads the stanzas themselves.
            try database.execute(
                """
                ALTER TABLE offline_messages ADD COLUMN size INTEGER NOT NULL DEFAULT 0 CHECK (size >= 0);
                UPDATE offline_messages SET size = length(CAST(stanza AS BLOB));
                CREATE INDEX offline_messages_sizes ON offline_messages (account_id, size);
                """)
        }
        migrator.register("0012-private-xml") { database in
            // XEP-0049 private XML: one element per account and qualified
            // name (SQLitePrivateXMLStore); the primary key serves the
            // lookups, the per-account count and the cascade.
            try database.execute(
                """
                CREATE TABLE private_xml (
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    namespace TEXT NOT NULL,
                    name TEXT NOT NULL,
                    xml TEXT NOT NULL,
                    PRIMARY KEY (account_id, namespace, name)
                ) WITHOUT ROWID;
                """)
        }
        migrator.register("0013-pep-configuration") { database in
            // The rest of a PEP node's configuration, the `whitelist`
            // access model, which the old CHECK forbids, and when each item
            // was published (items kept so far: now): both tables are
            // rebuilt (items first, so dropping the old nodes cascades to
            // nothing) and renamed back, which moves the new items'
            // reference to the new nodes.
            try database.execute(
                """
                CREATE TABLE pep_nodes_new (
                    id INTEGER PRIMARY KEY,
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    access_model TEXT NOT NULL CHECK (access_model IN ('presence', 'open', 'whitelist')),
                    max_items INTEGER NOT NULL CHECK (max_items > 0),
                    persist_items INTEGER NOT NULL CHECK (persist_items IN (0, 1)),
                    send_last_published_item TEXT NOT NULL DEFAULT 'on_sub_and_presence'
                        CHECK (send_last_published_item IN ('never', 'on_sub', 'on_sub_and_presence')),
                    notify_retract INTEGER NOT NULL DEFAULT 1 CHECK (notify_retract IN (0, 1)),
                    deliver_payloads INTEGER NOT NULL DEFAULT 1 CHECK (deliver_payloads IN (0, 1)),
                    itemreply TEXT NOT NULL DEFAULT 'none' CHECK (itemreply IN ('none', 'owner', 'publisher')),
                    title TEXT NOT NULL DEFAULT '',
                    UNIQUE (account_id, name)
                );
                INSERT INTO pep_nodes_new (id, account_id, name, access_model, max_items, persist_items)
                    SELECT id, account_id, name, access_model, max_items, persist_items FROM pep_nodes;
                CREATE TABLE pep_items_new (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    node_id INTEGER NOT NULL REFERENCES pep_nodes_new (id) ON DELETE CASCADE,
                    item_id TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    published INTEGER NOT NULL,
                    UNIQUE (node_id, item_id)
                );
                INSERT INTO pep_items_new (sequence, node_id, item_id, payload, published)
                    SELECT sequence, node_id, item_id, payload, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM pep_items;
                DROP TABLE pep_items;
                DROP TABLE pep_nodes;
                ALTER TABLE pep_nodes_new RENAME TO pep_nodes;
                ALTER TABLE pep_items_new RENAME TO pep_items;
                CREATE INDEX pep_items_by_node ON pep_items (node_id);
                """)
        }
        migrator.register("0014-pep-subscriptions") { database in
            // Explicit subscriptions to PEP nodes (XEP-0060 §6.1): see
            // SQLitePEPStore. A subscriber is an account (resource '') or
            // one of its resources; deleting the node or the subscriber's
            // account deletes them. The rowid `sequence` keeps the order of
            // subscription; the second index serves the cascade from accounts.
            try database.execute(
                """
                CREATE TABLE pep_subscriptions (
                    sequence INTEGER PRIMARY KEY,
                    node_id INTEGER NOT NULL REFERENCES pep_nodes (id) ON DELETE CASCADE,
                    subscriber_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    resource TEXT NOT NULL,
                    UNIQUE (node_id, subscriber_id, resource)
                );
                CREATE INDEX pep_subscriptions_by_subscriber ON pep_subscriptions (subscriber_id);
                """)
        }
        migrator.register("0015-muc-rooms") { database in
            // Persistent group chat rooms (XEP-0045): see SQLiteMUCRoomStore.
            // A room is the service's, so no account owns the row.
            try database.execute(
                """
                CREATE TABLE muc_rooms (
                    name TEXT PRIMARY KEY,
                    data TEXT NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        migrator.register("0016-muc-archive") { database in
            // XEP-0313 archives of group chat rooms: see
            // SQLiteRoomArchiveStore. The rowid is the caller's sequence;
            // AUTOINCREMENT keeps the highest one after deletions.
            try database.execute(
                """
                CREATE TABLE muc_archive (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    room TEXT NOT NULL,
                    timestamp INTEGER NOT NULL,
                    nick TEXT NOT NULL,
                    stanza TEXT NOT NULL
                );
                CREATE INDEX muc_archive_by_room ON muc_archive (room);
                """)
        }
        migrator.register("0017-fast-tokens") { database in
            // XEP-0484 FAST tokens: see SQLiteFastTokenStore. A row per
            // filled slot of a user agent; no token is stored, only the
            // nonce the server derives it from. The primary key serves the
            // lookups, the rotation and the cascade, the index the removal
            // of expired tokens.
            try database.execute(
                """
                CREATE TABLE fast_tokens (
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    user_agent TEXT NOT NULL,
                    slot TEXT NOT NULL CHECK (slot IN ('new', 'current')),
                    mechanism TEXT NOT NULL,
                    nonce BLOB NOT NULL,
                    expiry INTEGER NOT NULL,
                    PRIMARY KEY (account_id, user_agent, slot)
                ) WITHOUT ROWID;
                CREATE INDEX fast_tokens_by_expiry ON fast_tokens (expiry);
                """)
        }
        migrator.register("0018-offline-usage") { database in
            // What each account keeps in offline storage, kept by triggers
            // so that the quota check reads one row instead of counting the
            // account's messages (a cost that grew with the backlog). An
            // account's row appears with its first message and stays. The
            // deletion trigger also runs for the rows `ON DELETE CASCADE`
            // removes with an account, whose usage row goes with it. The
            // index on sizes served only the old count, so it goes.
            try database.execute(
                """
                CREATE TABLE offline_usage (
                    account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                    messages INTEGER NOT NULL CHECK (messages >= 0),
                    bytes INTEGER NOT NULL CHECK (bytes >= 0)
                );
                INSERT INTO offline_usage (account_id, messages, bytes)
                    SELECT account_id, count(*), sum(size) FROM offline_messages GROUP BY account_id;
                CREATE TRIGGER offline_message_stored AFTER INSERT ON offline_messages BEGIN
                    INSERT INTO offline_usage (account_id, messages, bytes) VALUES (new.account_id, 1, new.size)
                        ON CONFLICT (account_id) DO UPDATE
                        SET messages = messages + 1, bytes = bytes + excluded.bytes;
                END;
                CREATE TRIGGER offline_message_removed AFTER DELETE ON offline_messages BEGIN
                    UPDATE offline_usage SET messages = messages - 1, bytes = bytes - old.size
                        WHERE account_id = old.account_id;
                END;
                DROP INDEX offline_messages_sizes;
                """)
        }
        migrator.register("0019-push") { database in
            // XEP-0357 push services: see SQLitePushRegistrationStore. The
            // primary key serves every lookup and the cascade.
            try database.execute(
                """
                CREATE TABLE push_registrations (
                    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                    service TEXT NOT NULL,
                    node TEXT NOT NULL,
                    publish_options TEXT,
                    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
                    PRIMARY KEY (account_id, service, node)
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }
}
