import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `RoomArchiveStore` must do, checked against each implementation.
@Suite struct RoomArchiveStoreContractTests {
    static let garden = "garden@conference.localhost"
    static let tomb = "tomb@conference.localhost"

    /// Item `sequence` of `room`, said by `nick` at `sequence` seconds.
    private func item(_ sequence: Int64, in room: String = garden, by nick: String = "romeo") -> RoomArchiveItem {
        RoomArchiveItem(
            room: room,
            item: ArchiveItem(
                sequence: sequence, timestamp: Int(sequence) * 1000, peer: ArchivePeer(bare: room, resource: nick),
                stanza: "<message type='groupchat'><body>\(sequence)</body></message>"))
    }

    private func sequences(_ page: ArchivePage) -> [Int64] { page.items.map(\.sequence) }

    @Test(arguments: StoresKind.allCases)
    func itemsRoundTripPerRoomAndSequencesAreUsedOnce(kind: StoresKind) throws {
        let store = try kind.makeStores().roomArchive
        #expect(try store.lastSequence() == 0)
        let items = [item(3), item(5, in: Self.tomb), item(8, by: "juliet 🌹")]
        #expect(try store.append(items, keepingPerRoom: 100) == 3)
        #expect(try store.append([item(3), item(8, by: "other")], keepingPerRoom: 100) == 0)
        let page = try store.query(ArchiveQuery(max: 10), ofRoom: Self.garden)
        #expect(page.items == [items[0].item, items[2].item] && page.count == 2 && page.complete)
        #expect(try store.query(ArchiveQuery(max: 10), ofRoom: Self.tomb).items == [items[1].item])
        #expect(try store.item(8, ofRoom: Self.garden) == items[2].item)
        #expect(try store.item(5, ofRoom: Self.garden) == nil, "another room's")
        #expect(try store.lastSequence() == 8)
        #expect(try store.count(ofRoom: Self.garden) == 2)
        let bounds = try store.bounds(ofRoom: Self.garden)
        #expect(bounds?.oldest == items[0].item && bounds?.newest == items[2].item)
        #expect(try store.bounds(ofRoom: "empty@conference.localhost") == nil)
    }

    @Test(arguments: StoresKind.allCases)
    func queriesFilterByOccupantTimeAndIDsAndPage(kind: StoresKind) throws {
        let store = try kind.makeStores().roomArchive
        try store.append((1...6).map { item($0, by: $0 % 2 == 0 ? "juliet" : "romeo") }, keepingPerRoom: 100)
        var query = ArchiveQuery(max: 10)
        query.with = ArchivePeer(bare: Self.garden, resource: "juliet")
        #expect(sequences(try store.query(query, ofRoom: Self.garden)) == [2, 4, 6])
        query.with = ArchivePeer(bare: Self.tomb)
        #expect(try store.query(query, ofRoom: Self.garden).items.isEmpty)
        query = ArchiveQuery(max: 10)
        query.start = 2000
        query.end = 4000
        #expect(sequences(try store.query(query, ofRoom: Self.garden)) == [2, 3, 4])
        let last = try store.query(ArchiveQuery(position: .last, max: 2), ofRoom: Self.garden)
        #expect(sequences(last) == [5, 6] && !last.complete && last.count == 6)
        let before = try store.query(ArchiveQuery(position: .before(2), max: 2), ofRoom: Self.garden)
        #expect(sequences(before) == [1] && before.complete)
        #expect(throws: ArchiveItemNotFound(sequence: 9)) {
            try store.query(ArchiveQuery(position: .after(9), max: 2), ofRoom: Self.garden)
        }
        #expect(throws: ArchiveItemNotFound(sequence: 3)) {
            try store.query(ArchiveQuery(position: .after(3), max: 2), ofRoom: Self.tomb)
        }
    }

    @Test(arguments: StoresKind.allCases)
    func eachRoomKeepsItsNewestUpToTheLimit(kind: StoresKind) throws {
        let store = try kind.makeStores().roomArchive
        try store.append([item(1), item(2), item(3, in: Self.tomb)], keepingPerRoom: 3)
        try store.append([item(4), item(5), item(6, in: Self.tomb)], keepingPerRoom: 3)
        #expect(sequences(try store.query(ArchiveQuery(max: 10), ofRoom: Self.garden)) == [2, 4, 5])
        #expect(sequences(try store.query(ArchiveQuery(max: 10), ofRoom: Self.tomb)) == [3, 6])
    }

    @Test(arguments: StoresKind.allCases)
    func aStanzaIsReplacedAndAnArchiveRemoved(kind: StoresKind) throws {
        let store = try kind.makeStores().roomArchive
        try store.append([item(1), item(2), item(3, in: Self.tomb)], keepingPerRoom: 10)
        #expect(try store.replaceStanza(of: 1, ofRoom: Self.garden, with: "<message><retracted/></message>"))
        #expect(try store.item(1, ofRoom: Self.garden)?.stanza == "<message><retracted/></message>")
        #expect(try !store.replaceStanza(of: 3, ofRoom: Self.garden, with: "<x/>"), "another room's")
        #expect(try store.item(3, ofRoom: Self.tomb)?.stanza == item(3).item.stanza)
        try store.removeArchive(ofRoom: Self.tomb)
        #expect(try store.count(ofRoom: Self.tomb) == 0)
        #expect(try store.count(ofRoom: Self.garden) == 2)
        // The highest sequence is remembered once its item is gone.
        #expect(try store.lastSequence() == 3)
    }

    @Test(arguments: StoresKind.allCases)
    func retentionRemovesTheOldestOfAllRoomsUpToTheFirstKept(kind: StoresKind) throws {
        let store = try kind.makeStores().roomArchive
        // Stamped 1000, 2000, …; item 4 is stamped late, as after a clock step.
        var items = (1...6).map { item($0, in: $0 % 2 == 0 ? Self.tomb : Self.garden) }
        items[2].item.timestamp = 10_000
        try store.append(items, keepingPerRoom: 10)
        #expect(try store.removeMessages(before: 5000, limit: 1) == 1)
        #expect(try store.removeMessages(before: 5000, limit: 10) == 1, "up to item 3, the first kept")
        #expect(try store.removeMessages(before: 5000, limit: 10) == 0)
        #expect(sequences(try store.query(ArchiveQuery(max: 10), ofRoom: Self.garden)) == [3, 5])
        #expect(sequences(try store.query(ArchiveQuery(max: 10), ofRoom: Self.tomb)) == [4, 6])
    }
}
