/// An `ArchiveStore` in dictionaries of arrays, for tests and for servers
/// that need nothing to survive a restart.
///
/// It asks `accounts` whether an account exists, but cannot see an account
/// being deleted: `Stores(accounts:)` wires that, deleting the archive and
/// preferences with the account as `ON DELETE CASCADE` does for
/// `SQLiteArchiveStore`. Usernames and ids are compared by their UTF-8
/// bytes, as SQLite does.
public final class InMemoryArchiveStore: ArchiveStore, AccountScopedStore {
    private let accounts: any AccountStore
    /// Each archive's items in sequence order, keyed by the username's bytes.
    private var archives: [[UInt8]: [ArchiveItem]] = [:]
    /// The message of every stored item (its copies' lowest sequence),
    /// by archive and sequence.
    private var messages: [[UInt8]: [Int64: Int64]] = [:]
    private var storedPreferences: [[UInt8]: (username: String, preferences: ArchivePreferences)] = [:]
    /// The highest sequence ever appended, like SQLite's `AUTOINCREMENT`
    /// memory in `sqlite_sequence`.
    private var highestSequence: Int64 = 0

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        self.accounts = accounts
    }

    public func append(_ messages: [ArchivedMessage]) throws -> Int {
        var added = 0
        for message in messages {
            guard let messageID = message.copies.map(\.sequence).min() else { continue }
            for copy in message.copies {
                precondition(copy.sequence > 0, "archive sequences start at 1")
                let key = Array(copy.owner.utf8)
                guard self.messages[key]?[copy.sequence] == nil, try accounts.accountExists(copy.owner) else {
                    continue
                }
                let item = ArchiveItem(
                    sequence: copy.sequence, timestamp: message.timestamp, peer: copy.peer, stanza: message.stanza)
                var archive = archives[key] ?? []
                let index = archive.lastIndex { $0.sequence < item.sequence }.map { $0 + 1 } ?? 0
                archive.insert(item, at: index)
                archives[key] = archive
                self.messages[key, default: [:]][copy.sequence] = messageID
                highestSequence = max(highestSequence, copy.sequence)
                added += 1
            }
        }
        return added
    }

    public func lastSequence() -> Int64 {
        highestSequence
    }

    public func query(_ query: ArchiveQuery, for username: String) throws -> ArchivePage {
        let key = Array(username.utf8)
        return try ArchivePage.select(query, from: archives[key] ?? []) { sequence in
            messages[key]?[sequence] != nil
        }
    }

    public func bounds(for username: String) -> (oldest: ArchiveItem, newest: ArchiveItem)? {
        guard let items = archives[Array(username.utf8)], let first = items.first, let last = items.last else {
            return nil
        }
        return (first, last)
    }

    public func count(for username: String) -> Int {
        archives[Array(username.utf8)]?.count ?? 0
    }

    public func totalCount() -> Int {
        archives.values.reduce(0) { $0 + $1.count }
    }

    public func removeMessages(before timestamp: Int, limit: Int) -> Int {
        var stamps: [Int64: Int] = [:]
        for (key, archive) in archives {
            for item in archive { stamps[messages[key]![item.sequence]!] = item.timestamp }
        }
        let firstKept = stamps.filter { $0.value >= timestamp }.keys.min() ?? Int64.max
        let doomed = Set(stamps.keys.filter { $0 < firstKept }.sorted().prefix(limit))
        guard !doomed.isEmpty else { return 0 }
        for key in Array(archives.keys) {
            archives[key]!.removeAll { item in
                guard doomed.contains(messages[key]![item.sequence]!) else { return false }
                messages[key]![item.sequence] = nil
                return true
            }
            if archives[key]!.isEmpty { (archives[key], messages[key]) = (nil, nil) }
        }
        return doomed.count
    }

    public func preferences(of username: String) -> ArchivePreferences? {
        storedPreferences[Array(username.utf8)]?.preferences
    }

    public func setPreferences(_ preferences: ArchivePreferences, of username: String) throws {
        guard try accounts.accountExists(username) else { throw UnknownAccountError(username: username) }
        storedPreferences[Array(username.utf8)] = (username, preferences)
    }

    public func allPreferences() -> [String: ArchivePreferences] {
        Dictionary(storedPreferences.values.map { ($0.username, $0.preferences) }, uniquingKeysWith: { first, _ in first })
    }

    /// Forgets the archive and preferences of a deleted account.
    func removeAll(of username: String) {
        let key = Array(username.utf8)
        (archives[key], messages[key]) = (nil, nil)
        storedPreferences[key] = nil
    }
}
