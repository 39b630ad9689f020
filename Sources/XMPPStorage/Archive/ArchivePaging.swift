import SQLiteKit

// How archive queries are answered, shared by the users' archives and the
// rooms' archives (XEP-0313) in both kinds of store: the filters of an
// `ArchiveQuery`, then one page of what matches.

extension ArchivePage {
    /// The page `query` asks of `items`, one archive in sequence order, as
    /// the in-memory stores answer it; `contains` says whether a sequence
    /// the query names is in that archive.
    ///
    /// - Throws: `ArchiveItemNotFound` for a named sequence it is not.
    static func select(
        _ query: ArchiveQuery, from items: [ArchiveItem], contains: (Int64) -> Bool
    ) throws -> ArchivePage {
        func check(_ sequence: Int64) throws -> Int64 {
            guard contains(sequence) else { throw ArchiveItemNotFound(sequence: sequence) }
            return sequence
        }
        let after = try query.after.map(check)
        let before = try query.before.map(check)
        let wanted = try query.items.map { Set(try $0.map(check)) }
        let matching = items.filter { item in
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

    /// The page, oldest first; `exhausted` says whether every candidate
    /// was taken, `count` how many items match (its count only up to the
    /// query's `countLimit` plus one).
    func finish(count: Int, exhausted: Bool) -> ArchivePage {
        ArchivePage(
            items: query.position.isBackward ? items.reversed() : items,
            count: count <= query.countLimit ? count : nil, complete: exhausted)
    }
}

/// A `WHERE` clause over archive items (`i`) built from optional filters,
/// with its values in parameter order. The SQL varies with the filters, so
/// its statements are prepared per query rather than cached.
struct SQLFilter {
    var clauses: [String]
    var values: [(any DatabaseValueConvertible)?]

    init(_ clause: String, _ value: any DatabaseValueConvertible) {
        clauses = [clause]
        values = [value]
    }

    mutating func add(_ clause: String, _ value: any DatabaseValueConvertible) {
        clauses.append(clause)
        values.append(value)
    }

    /// Runs `SELECT columns FROM tables WHERE … suffix`, or the query
    /// `outer` makes of it, and hands the statement to `body`.
    func select<Result>(
        _ columns: String, from tables: String, suffix: String, in database: Database,
        within outer: (String) -> String = { $0 }, _ body: (Statement) throws -> Result
    ) throws -> Result {
        let statement = try database.prepare(
            outer("SELECT \(columns) FROM \(tables) WHERE \(clauses.joined(separator: " AND "))\(suffix)"))
        for (offset, value) in values.enumerated() {
            try statement.bind(value, at: offset + 1)
        }
        return try body(statement)
    }
}

extension SQLFilter {
    /// The page `query` asks of the items this filter selects (their
    /// owner, and `with`, which each store reads its own way): the other
    /// filters are added, `i.id` being the sequence.
    ///
    /// - Parameters:
    ///   - counting: The tables the matching items are counted in.
    ///   - columns: The columns `item` reads, from `tables`.
    ///   - contains: Whether a sequence the query names is in the archive.
    /// - Throws: `ArchiveItemNotFound` for a named sequence it is not, or
    ///   `DatabaseError`.
    func page(
        _ query: ArchiveQuery, counting: String, reading columns: String, from tables: String, in database: Database,
        contains: (Int64) throws -> Bool, item: (Statement) throws -> ArchiveItem
    ) throws -> ArchivePage {
        func check(_ sequence: Int64) throws -> Int64 {
            guard try contains(sequence) else { throw ArchiveItemNotFound(sequence: sequence) }
            return sequence
        }
        var filter = self
        if let start = query.start { filter.add("i.timestamp >= ?", start) }
        if let end = query.end { filter.add("i.timestamp <= ?", end) }
        if let item = query.after { filter.add("i.id > ?", try check(item)) }
        if let item = query.before { filter.add("i.id < ?", try check(item)) }
        if let items = query.items {
            let checked = try items.map(check)
            filter.add("i.id IN (SELECT value FROM json_each(?))", "[" + checked.map(String.init).joined(separator: ",") + "]")
        }
        // Counted up to one past the limit: enough to tell "more".
        var counted = filter
        counted.values.append(query.countLimit == Int.max ? Int.max : query.countLimit + 1)
        let count = try counted.select(
            "1", from: counting, suffix: " LIMIT ?", in: database, within: { "SELECT count(*) FROM (\($0))" }
        ) { statement in
            _ = try statement.step()
            return statement.int(at: 0)
        }
        var page = filter
        switch query.position {
        case .first, .last: break
        case .after(let item): page.add("i.id > ?", try check(item))
        case .before(let item): page.add("i.id < ?", try check(item))
        }
        // One row more than the page holds tells whether it is complete.
        let order = query.position.isBackward ? "DESC" : "ASC"
        let limit = query.max == Int.max ? Int.max : query.max + 1
        page.values.append(limit)
        return try page.select(columns, from: tables, suffix: " ORDER BY i.id \(order) LIMIT ?", in: database) {
            statement in
            var builder = ArchivePageBuilder(query)
            var exhausted = true
            while try statement.step() {
                guard builder.add(try item(statement)) else {
                    exhausted = false
                    break
                }
            }
            return builder.finish(count: count, exhausted: exhausted)
        }
    }
}

extension Database {
    /// The lowest `id` in `table` stamped (its `timestamp`) at or after
    /// `timestamp`, or `Int64.max`: where retention stops. Walking the ids
    /// from the oldest reads only the rows about to go, plus one.
    func firstArchiveID(in table: String, stampedFrom timestamp: Int) throws -> Int64 {
        try withCachedStatement("SELECT id FROM \(table) WHERE timestamp >= ? ORDER BY id LIMIT 1") { statement in
            try statement.bind(timestamp)
            return try statement.step() ? statement.int64(at: 0) : Int64.max
        }
    }
}
