import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `ArchiveStore` must do, checked against each implementation.
@Suite struct ArchiveStoreContractTests {
    static let stanza = """
        <message from='juliet@capulet.lit/balcony' to="romeo@montague.lit" type='chat'>\
        <body>Ô Roméo, 🌹 "why" &amp; 'wherefore'</body></message>
        """

    private static let juliet = ArchivePeer(bare: "juliet@capulet.lit")

    /// Appends items with sequences `first`, `first + 1`, … stamped 1000,
    /// 2000, … for `username`, with juliet's resources balcony and chamber
    /// taking turns as peer.
    @discardableResult
    private func appendNumbered(
        _ count: Int, for username: String, in archive: any ArchiveStore, first: Int64 = 1
    ) throws -> [ArchiveItem] {
        var items: [ArchiveItem] = []
        for number in 0..<count {
            let item = ArchiveItem(
                sequence: first + Int64(number), timestamp: (number + 1) * 1000,
                peer: ArchivePeer(bare: "juliet@capulet.lit", resource: number % 2 == 0 ? "balcony" : "chamber"),
                stanza: "<message><body>\(number)</body></message>")
            #expect(try archive.append(item, for: username))
            items.append(item)
        }
        return items
    }

    private func ids(_ page: ArchivePage) -> [Int64] { page.items.map(\.sequence) }

    @Test(arguments: StoresKind.allCases)
    func everyFieldRoundTrips(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        #expect(try archive.count(for: "romeo") == 0)
        #expect(try archive.bounds(for: "romeo") == nil)
        let first = ArchiveItem(sequence: 7, timestamp: 1_700_000_000_123, peer: Self.juliet, stanza: Self.stanza)
        let second = ArchiveItem(
            sequence: Int64.max, timestamp: Int(Int64.max), peer: ArchivePeer(bare: "a@b", resource: "phone 📱"), stanza: "")
        #expect(try archive.append(first, for: "romeo"))
        #expect(try archive.append(second, for: "romeo"))
        let page = try archive.query(ArchiveQuery(max: 10), for: "romeo")
        #expect(page.items == [first, second])
        #expect(page.count == 2)
        #expect(page.complete)
        #expect(try archive.count(for: "romeo") == 2)
        let bounds = try archive.bounds(for: "romeo")
        #expect(bounds?.oldest == first)
        #expect(bounds?.newest == second)
    }

    @Test(arguments: StoresKind.allCases)
    func aSequenceIsUsedOnce(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo", "juliet").archive
        let item = ArchiveItem(sequence: 5, timestamp: 1, peer: Self.juliet, stanza: "<m/>")
        #expect(try archive.append(item, for: "romeo"))
        #expect(try !archive.append(ArchiveItem(sequence: 5, timestamp: 2, peer: Self.juliet, stanza: "<n/>"), for: "romeo"))
        #expect(try archive.query(ArchiveQuery(max: 10), for: "romeo").items == [item])
    }

    @Test(arguments: StoresKind.allCases)
    func aMessageWithTwoCopiesIsInBothArchivesUntilBothAreGone(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        let archive = stores.archive
        let message = ArchivedMessage(
            timestamp: 42, stanza: Self.stanza,
            copies: [
                ArchiveCopy(owner: "juliet", sequence: 11, peer: ArchivePeer(bare: "romeo@montague.lit")),
                ArchiveCopy(owner: "romeo", sequence: 12, peer: ArchivePeer(bare: "juliet@capulet.lit", resource: "balcony")),
                ArchiveCopy(owner: "nobody", sequence: 13, peer: Self.juliet),
            ])
        #expect(try archive.append([message]) == 2, "no copy for an unknown account")
        #expect(try archive.append([message]) == 0, "each archive holds a sequence once")
        let expected = ArchiveItem(
            sequence: 12, timestamp: 42, peer: ArchivePeer(bare: "juliet@capulet.lit", resource: "balcony"),
            stanza: Self.stanza)
        #expect(try archive.query(ArchiveQuery(max: 10), for: "romeo").items == [expected])
        #expect(try ids(archive.query(ArchiveQuery(max: 10), for: "juliet")) == [11])
        #expect(try archive.lastSequence() == 12)
        // One copy going leaves the other whole.
        #expect(try stores.accounts.deleteAccount("juliet"))
        #expect(try archive.query(ArchiveQuery(max: 10), for: "romeo").items == [expected])
        #expect(try archive.removeMessages(before: 43, limit: 10) == 1)
        #expect(try archive.count(for: "romeo") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func itemsFollowTheirSequencesAndTheHighestIsRemembered(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        let archive = stores.archive
        #expect(try archive.lastSequence() == 0)
        for sequence: Int64 in [5, 3, 9] {
            #expect(try archive.append(
                ArchiveItem(sequence: sequence, timestamp: 1, peer: Self.juliet, stanza: "<m/>"), for: "romeo"))
        }
        #expect(try ids(archive.query(ArchiveQuery(max: 10), for: "romeo")) == [3, 5, 9])
        #expect(try archive.lastSequence() == 9)
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try archive.lastSequence() == 9, "remembered after the items are gone")
    }

    @Test(arguments: StoresKind.allCases)
    func unknownAccountsReadEmptyAndKeepNothing(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        let item = ArchiveItem(sequence: 1, timestamp: 1, peer: Self.juliet, stanza: "<m/>")
        #expect(try !archive.append(item, for: "nobody"))
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try archive.setPreferences(ArchivePreferences(defaultRule: .never), of: "nobody")
        }
        let page = try archive.query(ArchiveQuery(max: 10), for: "nobody")
        #expect(page == ArchivePage(items: [], count: 0, complete: true))
        #expect(throws: ArchiveItemNotFound(sequence: 1)) {
            try archive.query(ArchiveQuery(position: .after(1), max: 10), for: "nobody")
        }
        #expect(try archive.count(for: "nobody") == 0)
        #expect(try archive.preferences(of: "nobody") == nil)
    }

    @Test(arguments: StoresKind.allCases)
    func aBareWithMatchesEveryResourceAndAFullOneOnlyItself(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        try appendNumbered(4, for: "romeo", in: archive)
        #expect(try archive.append(
            ArchiveItem(sequence: 10, timestamp: 9000, peer: Self.juliet, stanza: "<m/>"), for: "romeo"))
        #expect(try archive.append(
            ArchiveItem(sequence: 11, timestamp: 9001, peer: ArchivePeer(bare: "nurse@capulet.lit"), stanza: "<m/>"),
            for: "romeo"))
        var query = ArchiveQuery(max: 50)
        query.with = Self.juliet
        let all = try archive.query(query, for: "romeo")
        #expect(ids(all) == [1, 2, 3, 4, 10])
        #expect(all.count == 5)
        query.with = ArchivePeer(bare: "juliet@capulet.lit", resource: "chamber")
        #expect(try ids(archive.query(query, for: "romeo")) == [2, 4])
        query.with = ArchivePeer(bare: "nurse@capulet.lit")
        #expect(try ids(archive.query(query, for: "romeo")) == [11])
    }

    /// Past `countLimit` matches, a page says nothing of how many there
    /// are; the page itself is the same.
    @Test(arguments: StoresKind.allCases)
    func theCountStopsAtItsLimit(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        try appendNumbered(5, for: "romeo", in: archive)
        var query = ArchiveQuery(max: 2)
        query.countLimit = 5
        let counted = try archive.query(query, for: "romeo")
        #expect(counted.count == 5)
        query.countLimit = 4
        let uncounted = try archive.query(query, for: "romeo")
        #expect(uncounted.count == nil)
        #expect(ids(uncounted) == [1, 2] && ids(counted) == [1, 2] && !uncounted.complete)
        query.start = 4000
        #expect(try archive.query(query, for: "romeo").count == 2, "the limit applies to what matches")
    }

    @Test(arguments: StoresKind.allCases)
    func startAndEndAreInclusive(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        try appendNumbered(5, for: "romeo", in: archive)
        var query = ArchiveQuery(max: 50)
        query.start = 2000
        query.end = 4000
        let page = try archive.query(query, for: "romeo")
        #expect(ids(page) == [2, 3, 4])
        #expect(page.count == 3)
        query.start = 4001
        query.end = 3000
        #expect(try archive.query(query, for: "romeo") == ArchivePage(items: [], count: 0, complete: true))
    }

    @Test(arguments: StoresKind.allCases)
    func idFiltersBoundTheMatchesAndUnknownIDsAreNotFound(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo", "juliet").archive
        try appendNumbered(6, for: "romeo", in: archive)
        try appendNumbered(2, for: "juliet", in: archive, first: 101)
        var query = ArchiveQuery(max: 50)
        query.after = 2
        query.before = 6
        let page = try archive.query(query, for: "romeo")
        #expect(ids(page) == [3, 4, 5])
        #expect(page.count == 3)
        query = ArchiveQuery(max: 50)
        query.items = [5, 1]
        #expect(try ids(archive.query(query, for: "romeo")) == [1, 5], "archive order, not the order asked")
        for bad: Int64 in [101, 999] {
            var unknown = ArchiveQuery(max: 50)
            unknown.after = bad
            #expect(throws: ArchiveItemNotFound(sequence: bad)) { try archive.query(unknown, for: "romeo") }
            unknown = ArchiveQuery(max: 50)
            unknown.items = [2, bad]
            #expect(throws: ArchiveItemNotFound(sequence: bad)) { try archive.query(unknown, for: "romeo") }
            #expect(throws: ArchiveItemNotFound(sequence: bad)) {
                try archive.query(ArchiveQuery(position: .before(bad), max: 5), for: "romeo")
            }
        }
    }

    @Test(arguments: StoresKind.allCases)
    func pagesForwardAndBackward(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        try appendNumbered(7, for: "romeo", in: archive)
        let first = try archive.query(ArchiveQuery(position: .first, max: 3), for: "romeo")
        #expect(ids(first) == [1, 2, 3])
        #expect(first.count == 7 && !first.complete)
        let second = try archive.query(ArchiveQuery(position: .after(3), max: 3), for: "romeo")
        #expect(ids(second) == [4, 5, 6])
        #expect(!second.complete)
        let third = try archive.query(ArchiveQuery(position: .after(6), max: 3), for: "romeo")
        #expect(ids(third) == [7])
        #expect(third.complete && third.count == 7)
        let end = try archive.query(ArchiveQuery(position: .after(7), max: 3), for: "romeo")
        #expect(end.items.isEmpty && end.complete)

        let last = try archive.query(ArchiveQuery(position: .last, max: 3), for: "romeo")
        #expect(ids(last) == [5, 6, 7], "the newest items, oldest first")
        #expect(!last.complete)
        let earlier = try archive.query(ArchiveQuery(position: .before(5), max: 3), for: "romeo")
        #expect(ids(earlier) == [2, 3, 4])
        #expect(!earlier.complete)
        let earliest = try archive.query(ArchiveQuery(position: .before(2), max: 3), for: "romeo")
        #expect(ids(earliest) == [1])
        #expect(earliest.complete)
        let exact = try archive.query(ArchiveQuery(position: .before(4), max: 3), for: "romeo")
        #expect(ids(exact) == [1, 2, 3])
        #expect(exact.complete, "nothing lies before a0")
    }

    @Test(arguments: StoresKind.allCases)
    func pagingAppliesAfterTheFilters(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        try appendNumbered(8, for: "romeo", in: archive)
        var query = ArchiveQuery(position: .after(2), max: 2)
        query.with = ArchivePeer(bare: "juliet@capulet.lit", resource: "balcony")
        let page = try archive.query(query, for: "romeo")
        #expect(ids(page) == [3, 5])
        #expect(page.count == 4, "the count ignores the page position")
        #expect(!page.complete)
    }

    @Test(arguments: StoresKind.allCases)
    func aPageStopsAtTheByteLimitButHoldsOneItem(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo").archive
        try appendNumbered(5, for: "romeo", in: archive)
        let size = "<message><body>0</body></message>".utf8.count
        let two = try archive.query(ArchiveQuery(max: 10, byteLimit: 2 * size + 1), for: "romeo")
        #expect(ids(two) == [1, 2])
        #expect(!two.complete)
        let one = try archive.query(ArchiveQuery(position: .last, max: 10, byteLimit: 1), for: "romeo")
        #expect(ids(one) == [5])
        #expect(!one.complete)
        let none = try archive.query(ArchiveQuery(max: 0), for: "romeo")
        #expect(none.items.isEmpty && none.count == 5 && !none.complete)
    }

    @Test(arguments: StoresKind.allCases)
    func retentionRemovesTheOldestMessagesWithoutHoles(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        let archive = stores.archive
        for (index, (user, timestamp)) in [("romeo", 100), ("juliet", 200), ("romeo", 300), ("romeo", 50), ("juliet", 400)]
            .enumerated()
        {
            #expect(try archive.append(
                ArchiveItem(sequence: Int64(index + 1), timestamp: timestamp, peer: Self.juliet, stanza: "<m/>"), for: user))
        }
        // Items up to the first stamped at or after 250 (3) go; 4 is older
        // but comes after 3, and removing it would leave a hole.
        #expect(try archive.removeMessages(before: 250, limit: 1) == 1)
        #expect(try archive.removeMessages(before: 250, limit: 100) == 1)
        #expect(try archive.removeMessages(before: 250, limit: 100) == 0)
        #expect(try ids(archive.query(ArchiveQuery(max: 10), for: "romeo")) == [3, 4])
        #expect(try ids(archive.query(ArchiveQuery(max: 10), for: "juliet")) == [5])
        #expect(try archive.removeMessages(before: 1000, limit: 100) == 3)
        #expect(try archive.count(for: "romeo") + archive.count(for: "juliet") == 0)
        // A removed item is unknown from then on, and its sequence not reused.
        #expect(throws: ArchiveItemNotFound(sequence: 3)) {
            try archive.query(ArchiveQuery(position: .after(3), max: 5), for: "romeo")
        }
        #expect(try archive.lastSequence() == 5)
    }

    @Test(arguments: StoresKind.allCases)
    func retentionCountsMessagesAndTakesEveryCopy(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo", "juliet").archive
        let messages = (0..<3).map { number in
            ArchivedMessage(
                timestamp: number * 100, stanza: "<m>\(number)</m>",
                copies: [
                    ArchiveCopy(owner: "romeo", sequence: Int64(2 * number + 1), peer: Self.juliet),
                    ArchiveCopy(owner: "juliet", sequence: Int64(2 * number + 2), peer: ArchivePeer(bare: "romeo@x")),
                ])
        }
        #expect(try archive.append(messages) == 6)
        #expect(try archive.removeMessages(before: 150, limit: 1) == 1)
        #expect(try ids(archive.query(ArchiveQuery(max: 10), for: "romeo")) == [3, 5])
        #expect(try ids(archive.query(ArchiveQuery(max: 10), for: "juliet")) == [4, 6])
        #expect(try archive.removeMessages(before: 150, limit: 10) == 1)
        #expect(try archive.query(ArchiveQuery(max: 10), for: "juliet").items.map(\.stanza) == ["<m>2</m>"])
    }

    @Test(arguments: StoresKind.allCases)
    func preferencesRoundTripAndAreReplaced(kind: StoresKind) throws {
        let archive = try kind.makeStores(withAccounts: "romeo", "juliet").archive
        #expect(try archive.preferences(of: "romeo") == nil)
        #expect(try archive.allPreferences().isEmpty)
        let first = ArchivePreferences(
            defaultRule: .roster, always: ["juliet@capulet.lit", "nurse@capulet.lit/kitchen"], never: ["tybalt@capulet.lit"])
        try archive.setPreferences(first, of: "romeo")
        #expect(try archive.preferences(of: "romeo") == first)
        let second = ArchivePreferences(defaultRule: .never)
        try archive.setPreferences(second, of: "romeo")
        try archive.setPreferences(first, of: "juliet")
        #expect(try archive.preferences(of: "romeo") == second)
        #expect(try archive.allPreferences() == ["romeo": second, "juliet": first])
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsArchiveAndPreferences(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        try appendNumbered(3, for: "romeo", in: stores.archive)
        try appendNumbered(1, for: "juliet", in: stores.archive, first: 4)
        try stores.archive.setPreferences(ArchivePreferences(defaultRule: .never), of: "romeo")
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.archive.count(for: "romeo") == 0)
        #expect(try stores.archive.preferences(of: "romeo") == nil)
        #expect(try stores.archive.count(for: "juliet") == 1)
        #expect(throws: ArchiveItemNotFound(sequence: 1)) {
            try stores.archive.query(ArchiveQuery(position: .after(1), max: 5), for: "romeo")
        }
    }

    @Test(arguments: StoresKind.allCases)
    func aBatchInOneTransactionCommitsTogether(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo")
        _ = try stores.inTransaction {
            try appendNumbered(3, for: "romeo", in: stores.archive)
        }
        #expect(try stores.archive.count(for: "romeo") == 3)
        #expect(throws: PlannedError.self) {
            try stores.inTransaction {
                try appendNumbered(2, for: "romeo", in: stores.archive, first: 11)
                throw PlannedError()
            }
        }
        // SQLite rolls the batch back; in-memory stores have no transactions.
        #expect(try stores.archive.count(for: "romeo") == (kind == .sqlite ? 3 : 5))
    }
}
