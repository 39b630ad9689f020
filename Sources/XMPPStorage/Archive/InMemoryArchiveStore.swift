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
        func check(_ sequence: Int64) throws -> Int64 {
            guard messages[key]?[sequence] != nil else { throw ArchiveItemNotFound(sequence: sequence) }
            return sequence
        }
        let after = try query.after.map(check)
        let before = try query.before.map(check)
        let wanted = try query.items.map { Set(try $0.map(check)) }
        let matching = (archives[key] ?? []).filter { item in
            if let with = query.with, !item.peer.matches(with) { return false }
            if let start = query.start, item.timestamp < start { return false }
            if let end = query.end, item.timestamp > end { return false }
            if let after, item.sequence <= after { return false }
            if let before, item.sequence >= before { return false }
            if let wanted, !wanted.contains(item.sequence) { return false }
            return true
        }
        // The candidates in the order the page is filled: from the start
        // going forward, or from the end going back.
        let candidates: [ArchiveItem]
        switch query.position {
        case .first: candidates = matching
        case .after(let item):
            let bound = try check(item)
            candidates = matching.filter { $0.sequence > bound }
        case .last: candidates = matching.reversed()
        case .before(let item):
            let bound = try check(item)
            candidates = matching.filter { $0.sequence < bound }.reversed()
        }
        var page = ArchivePageBuilder(query)
        for item in candidates {
            guard page.add(item) else { break }
        }
        return page.finish(count: matching.count, exhausted: page.items.count == candidates.count)
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

/// Fills one page the way both stores do: at most `max` items, and no more
/// once their stanzas reach `byteLimit` (though always one, however large).
struct ArchivePageBuilder {
    private let query: ArchiveQuery
    private(set) var items: [ArchiveItem] = []
    private var bytes = 0

    init(_ query: ArchiveQuery) {
        self.query = query
    }

    /// Takes the next candidate in filling order; false when the page is full.
    mutating func add(_ item: ArchiveItem) -> Bool {
        let size = item.stanza.utf8.count
        guard items.count < query.max, items.isEmpty || bytes + size <= query.byteLimit else { return false }
        items.append(item)
        bytes += size
        return true
    }

    /// The page, oldest first; `exhausted` says whether every candidate was taken.
    func finish(count: Int, exhausted: Bool) -> ArchivePage {
        ArchivePage(items: query.position.isBackward ? items.reversed() : items, count: count, complete: exhausted)
    }
}
