/// A `RoomArchiveStore` in a dictionary of arrays, for tests and for
/// servers that keep nothing across a restart. Room addresses are compared
/// by their UTF-8 bytes, as SQLite does.
public final class InMemoryRoomArchiveStore: RoomArchiveStore {
    /// Each room's items in sequence order, keyed by the address's bytes.
    private var archives: [[UInt8]: [ArchiveItem]] = [:]
    private var highestSequence: Int64 = 0

    /// Creates an empty store.
    public init() {}

    public func append(_ items: [RoomArchiveItem], keepingPerRoom limit: Int) -> Int {
        var added = 0
        var touched: Set<[UInt8]> = []
        for entry in items {
            precondition(entry.item.sequence > 0, "archive sequences start at 1")
            let key = Array(entry.room.utf8)
            var archive = archives[key] ?? []
            guard index(of: entry.item.sequence, in: archive) == nil else { continue }
            let position = archive.lastIndex { $0.sequence < entry.item.sequence }.map { $0 + 1 } ?? 0
            archive.insert(entry.item, at: position)
            archives[key] = archive
            highestSequence = max(highestSequence, entry.item.sequence)
            touched.insert(key)
            added += 1
        }
        for key in touched where archives[key]!.count > limit {
            archives[key]!.removeFirst(archives[key]!.count - limit)
        }
        return added
    }

    public func lastSequence() -> Int64 {
        highestSequence
    }

    public func query(_ query: ArchiveQuery, ofRoom room: String) throws -> ArchivePage {
        let archive = archives[Array(room.utf8)] ?? []
        return try ArchivePage.select(query, from: archive) { index(of: $0, in: archive) != nil }
    }

    public func item(_ sequence: Int64, ofRoom room: String) -> ArchiveItem? {
        let archive = archives[Array(room.utf8)] ?? []
        return index(of: sequence, in: archive).map { archive[$0] }
    }

    public func replaceStanza(of sequence: Int64, ofRoom room: String, with stanza: String) -> Bool {
        let key = Array(room.utf8)
        guard let archive = archives[key], let index = index(of: sequence, in: archive) else { return false }
        archives[key]![index].stanza = stanza
        return true
    }

    public func bounds(ofRoom room: String) -> (oldest: ArchiveItem, newest: ArchiveItem)? {
        guard let archive = archives[Array(room.utf8)], let first = archive.first, let last = archive.last else {
            return nil
        }
        return (first, last)
    }

    public func count(ofRoom room: String) -> Int {
        archives[Array(room.utf8)]?.count ?? 0
    }

    public func removeArchive(ofRoom room: String) {
        archives[Array(room.utf8)] = nil
    }

    public func removeMessages(before timestamp: Int, limit: Int) -> Int {
        let all = archives.values.joined()
        let firstKept = all.filter { $0.timestamp >= timestamp }.map(\.sequence).min() ?? Int64.max
        let doomed = Set(all.map(\.sequence).filter { $0 < firstKept }.sorted().prefix(limit))
        guard !doomed.isEmpty else { return 0 }
        for key in Array(archives.keys) {
            archives[key]!.removeAll { doomed.contains($0.sequence) }
            if archives[key]!.isEmpty { archives[key] = nil }
        }
        return doomed.count
    }

    /// Where the item `sequence` is in `archive`, by binary search.
    private func index(of sequence: Int64, in archive: [ArchiveItem]) -> Int? {
        var (low, high) = (0, archive.count)
        while low < high {
            let middle = (low + high) / 2
            if archive[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low < archive.count && archive[low].sequence == sequence ? low : nil
    }
}
