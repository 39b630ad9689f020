import Foundation
import Testing
import XMPPCore

@testable import XMPPClient

/// The message archive of `ClientStore`: order, pages, duplicates, unread
/// counts and the conversation list.
@Suite struct ArchiveTests {
    let store: ClientStore

    init() throws {
        store = try ClientStore.inMemory()
    }

    private func bodies(_ messages: [ArchivedMessage]) -> [String] {
        messages.map(\.body)
    }

    // MARK: Reading back

    @Test func aMessageReadsBackAsRecorded() async throws {
        let recorded = ArchivedMessage(
            account: People.juliet, contact: People.romeo, body: "Wherefore art thou",
            timestamp: Date(timeIntervalSince1970: 1_700_000_000.123_4), isOutgoing: false,
            id: "m1", serverID: "archive-1", isRead: false)
        #expect(try await store.record(recorded))
        #expect(try await store.conversation(account: People.juliet, contact: People.romeo) == [recorded])
    }

    @Test func roomMessagesKeepTheSendersNicknameAndStayOutOfTheAccountsCatchUp() async throws {
        let room = try JID("verona@conference.example")
        let fromRoom = ArchivedMessage(
            account: People.juliet, contact: room, body: "hear ye", timestamp: date(2), isOutgoing: false,
            id: "r1", serverID: "room-archive-1", nick: "nurse")
        let direct = ArchivedMessage(
            account: People.juliet, contact: People.romeo, body: "hi", timestamp: date(1), isOutgoing: false,
            id: "d1", serverID: "archive-1")
        #expect(try await store.record(direct))
        #expect(try await store.record(fromRoom))
        #expect(try await store.conversation(account: People.juliet, contact: room) == [fromRoom])
        #expect(try await store.conversation(account: People.juliet, contact: People.romeo).first?.nick == nil)
        // The newer room message's id belongs to the room's archive, not the account's.
        #expect(try await store.latestServerID(account: People.juliet) == "archive-1")
    }

    @Test func timestampsKeepMilliseconds() async throws {
        let stamped = message("a", at: 1_700_000_000_123)
        #expect(stamped.timestamp == Date(timeIntervalSince1970: 1_700_000_000.123))
        let rounded = ArchivedMessage(
            account: People.juliet, contact: People.romeo, body: "b",
            timestamp: Date(timeIntervalSince1970: 1_700_000_000.123_6), isOutgoing: false, id: "b")
        #expect(rounded.timestamp == Date(timeIntervalSince1970: 1_700_000_000.124))
        try await store.record(stamped)
        try await store.record(rounded)
        let read = try await store.conversation(account: People.juliet, contact: People.romeo)
        #expect(read.map(\.timestamp) == [stamped.timestamp, rounded.timestamp])
    }

    @Test func resourcesAreDroppedAndJIDsNormalized() async throws {
        let account = try JID("Juliet@Capulet.Example/balcony")
        let contact = try JID("romeo@montague.example/orchard")
        let recorded = ArchivedMessage(
            account: account, contact: contact, body: "hi", timestamp: date(1), isOutgoing: false,
            id: "1")
        #expect(recorded.account == People.juliet && recorded.contact == People.romeo)
        try await store.record(recorded)
        #expect(try await store.conversation(account: People.juliet, contact: People.romeo) == [recorded])
        #expect(try await store.conversation(account: account, contact: contact) == [recorded])
    }

    @Test func nothingForAnUnknownAccountOrContact() async throws {
        try await store.record(message("hi", at: 1))
        #expect(try await store.conversation(account: People.nurse, contact: People.romeo).isEmpty)
        #expect(try await store.conversation(account: People.juliet, contact: People.mercutio).isEmpty)
        #expect(try await store.recentConversations(account: People.nurse).isEmpty)
        try await store.markRead(account: People.nurse, contact: People.romeo)
    }

    // MARK: Order and pages

    @Test func theNewestPageComesOldestFirst() async throws {
        for (body, time) in [("c", 30), ("a", 10), ("e", 50), ("b", 20), ("d", 40)] {
            try await store.record(message(body, at: Int64(time)))
        }
        let page = try await store.conversation(account: People.juliet, contact: People.romeo, limit: 3)
        #expect(bodies(page) == ["c", "d", "e"])
    }

    @Test func equalTimestampsKeepTheOrderRecorded() async throws {
        // Ids sorting the other way round show that the order is not by id.
        for (body, id) in [("first", "z"), ("second", "y"), ("third", "x")] {
            try await store.record(message(body, at: 5, id: id))
        }
        let page = try await store.conversation(account: People.juliet, contact: People.romeo)
        #expect(bodies(page) == ["first", "second", "third"])
    }

    @Test func beforeIsExclusive() async throws {
        for time: Int64 in [10, 20, 30] {
            try await store.record(message("at \(time)", at: time))
        }
        let beforeTwenty = try await store.conversation(
            account: People.juliet, contact: People.romeo, before: date(20))
        #expect(bodies(beforeTwenty) == ["at 10"])
        let justAfterTwenty = try await store.conversation(
            account: People.juliet, contact: People.romeo, before: date(21))
        #expect(bodies(justAfterTwenty) == ["at 10", "at 20"])
        #expect(
            try await store.conversation(account: People.juliet, contact: People.romeo, before: date(10))
                .isEmpty)
    }

    @Test func aPageEndingInATieTakesTheWholeTie() async throws {
        for (index, time) in [10, 20, 20, 20, 30].enumerated() {
            try await store.record(message("\(index)", at: Int64(time)))
        }
        let page = try await store.conversation(account: People.juliet, contact: People.romeo, limit: 2)
        #expect(bodies(page) == ["1", "2", "3", "4"])
        let next = try await store.conversation(
            account: People.juliet, contact: People.romeo, before: page[0].timestamp, limit: 2)
        #expect(bodies(next) == ["0"])
    }

    /// Pages of every size, backwards and forwards, over runs of equal
    /// timestamps: each message is seen exactly once, in order.
    @Test(arguments: 1...7) func pagingVisitsEveryMessageOnce(limit: Int) async throws {
        let times: [Int64] = [1, 2, 2, 2, 3, 4, 4, 5, 5, 5, 5, 6, 7, 7]
        for (index, time) in times.enumerated() {
            try await store.record(message("\(index)", at: time))
        }
        let all = times.indices.map { "\($0)" }

        var backwards: [ArchivedMessage] = []
        while true {
            let page = try await store.conversation(
                account: People.juliet, contact: People.romeo, before: backwards.first?.timestamp,
                limit: limit)
            guard !page.isEmpty else { break }
            #expect(page.count >= min(limit, times.count - backwards.count))
            backwards = page + backwards
        }
        #expect(bodies(backwards) == all)

        var forwards: [ArchivedMessage] = []
        while true {
            let page = try await store.conversation(
                account: People.juliet, contact: People.romeo,
                after: forwards.last?.timestamp ?? date(0), limit: limit)
            guard !page.isEmpty else { break }
            #expect(page.count >= min(limit, times.count - forwards.count))
            forwards += page
        }
        #expect(bodies(forwards) == all)
    }

    @Test func afterIsExclusiveAndTakesTheOldestFirst() async throws {
        for time: Int64 in [10, 20, 30, 40] {
            try await store.record(message("at \(time)", at: time))
        }
        let page = try await store.conversation(
            account: People.juliet, contact: People.romeo, after: date(10), limit: 2)
        #expect(bodies(page) == ["at 20", "at 30"])
    }

    // MARK: Duplicates

    @Test func aRepeatedStanzaIDIsADuplicate() async throws {
        #expect(try await store.record(message("hello", at: 1, id: "m1")))
        #expect(try await !store.record(message("hello again", at: 2, id: "m1")))
        // Another direction or another contact may reuse the id.
        #expect(try await store.record(message("reply", at: 3, outgoing: true, id: "m1")))
        #expect(try await store.record(message("to mercutio", at: 4, contact: People.mercutio, id: "m1")))
        let page = try await store.conversation(account: People.juliet, contact: People.romeo)
        #expect(bodies(page) == ["hello", "reply"])
    }

    @Test func anEmptyStanzaIDIsNeverADuplicate() async throws {
        #expect(try await store.record(message("one", at: 1, id: "")))
        #expect(try await store.record(message("two", at: 2, id: "")))
        #expect(try await store.conversation(account: People.juliet, contact: People.romeo).count == 2)
    }

    @Test func aRepeatedServerIDIsADuplicate() async throws {
        #expect(try await store.record(message("live", at: 1, id: "a", serverID: "s1")))
        // The same message from an archive sync, with another stanza id.
        #expect(try await !store.record(message("synced", at: 1, id: "b", serverID: "s1")))
        #expect(try await store.record(message("next", at: 2, id: "c", serverID: "s2")))
        // Server ids are unique per account only.
        #expect(
            try await store.record(
                message("other", at: 3, account: People.nurse, id: "a", serverID: "s1")))
        let page = try await store.conversation(account: People.juliet, contact: People.romeo)
        #expect(bodies(page) == ["live", "next"])
    }

    @Test func aDuplicateChangesNoCount() async throws {
        try await store.record(message("hello", at: 1))
        try await store.record(message("hello", at: 9))
        let summary = try #require(try await store.recentConversations(account: People.juliet).first)
        #expect(summary.unreadCount == 1)
        #expect(summary.lastMessage.timestamp == date(1))
    }

    // MARK: Unread

    @Test func outgoingMessagesAreRead() async throws {
        let outgoing = ArchivedMessage(
            account: People.juliet, contact: People.romeo, body: "hi", timestamp: date(1),
            isOutgoing: true, id: "1", isRead: false)
        #expect(outgoing.isRead)
        try await store.record(outgoing)
        let summary = try #require(try await store.recentConversations(account: People.juliet).first)
        #expect(summary.unreadCount == 0)
        #expect(summary.lastMessage.isRead)
    }

    @Test func unreadCountsAndMarkRead() async throws {
        try await store.record(message("1", at: 1))
        try await store.record(message("2", at: 2))
        try await store.record(message("mine", at: 3, outgoing: true))
        try await store.record(
            ArchivedMessage(
                account: People.juliet, contact: People.romeo, body: "seen elsewhere",
                timestamp: date(4), isOutgoing: false, id: "4", isRead: true))
        try await store.record(message("m", at: 5, contact: People.mercutio))

        func unread() async throws -> [JID: Int] {
            Dictionary(
                uniqueKeysWithValues: try await store.recentConversations(account: People.juliet).map {
                    ($0.contact, $0.unreadCount)
                })
        }
        #expect(try await unread() == [People.romeo: 2, People.mercutio: 1])

        try await store.markRead(account: People.juliet, contact: People.romeo)
        #expect(try await unread() == [People.romeo: 0, People.mercutio: 1])
        let romeo = try await store.conversation(account: People.juliet, contact: People.romeo)
        #expect(romeo.allSatisfy { $0.isRead })
        let mercutio = try await store.conversation(account: People.juliet, contact: People.mercutio)
        #expect(mercutio.map(\.isRead) == [false])

        try await store.record(message("3", at: 6))
        #expect(try await unread() == [People.romeo: 1, People.mercutio: 1])
    }

    // MARK: Conversation list

    @Test func recentConversationsNewestFirst() async throws {
        try await store.record(message("romeo", at: 30))
        try await store.record(message("mercutio", at: 50, contact: People.mercutio))
        try await store.record(message("benvolio", at: 10, contact: People.benvolio))
        func order(limit: Int = 20) async throws -> [String] {
            try await store.recentConversations(account: People.juliet, limit: limit).map(
                \.lastMessage.body)
        }
        #expect(try await order() == ["mercutio", "romeo", "benvolio"])
        #expect(try await order(limit: 2) == ["mercutio", "romeo"])

        // A late message stamped earlier is not the latest.
        try await store.record(message("late", at: 5, contact: People.mercutio))
        #expect(try await order() == ["mercutio", "romeo", "benvolio"])

        try await store.record(
            message("benvolio again", at: 60, contact: People.benvolio, outgoing: true))
        #expect(try await order() == ["benvolio again", "mercutio", "romeo"])

        // Of two messages with the same timestamp, the one recorded last is the latest.
        try await store.record(message("romeo tie", at: 60))
        #expect(try await order() == ["romeo tie", "benvolio again", "mercutio"])

        let summary = try #require(try await store.recentConversations(account: People.juliet).first)
        #expect(summary.contact == People.romeo)
        #expect(summary.lastMessage == message("romeo tie", at: 60))
        #expect(summary.unreadCount == 2)
    }

    // MARK: Accounts

    @Test func accountsAreIsolated() async throws {
        try await store.record(message("to juliet", at: 1, id: "same"))
        #expect(try await store.record(message("to nurse", at: 2, account: People.nurse, id: "same")))
        #expect(
            try await bodies(store.conversation(account: People.juliet, contact: People.romeo))
                == ["to juliet"])
        #expect(
            try await bodies(store.conversation(account: People.nurse, contact: People.romeo))
                == ["to nurse"])

        try await store.markRead(account: People.juliet, contact: People.romeo)
        let nurse = try await store.recentConversations(account: People.nurse)
        #expect(nurse.map(\.unreadCount) == [1])
        #expect(nurse.map(\.lastMessage.account) == [People.nurse])
    }

    // MARK: Query plans

    /// Every archive read searches an index instead of scanning a table,
    /// and needs no sort of its own.
    @Test(arguments: ["older", "newer", "recent"]) func readsUseIndexes(query: String) async throws {
        let sql =
            switch query {
            case "older": ClientStore.Tables.PageDirection.older.sql
            case "newer": ClientStore.Tables.PageDirection.newer.sql
            default: ClientStore.Tables.recentConversationsSQL
            }
        let steps = try await store.queue.perform { tables in
            let statement = try tables.database.prepare("EXPLAIN QUERY PLAN " + sql)
            var steps: [String] = []
            while try statement.step() {
                steps.append(statement.string(at: 3) ?? "")
            }
            return steps
        }
        #expect(!steps.isEmpty)
        for step in steps {
            #expect(!step.hasPrefix("SCAN"), "\(step)")
            #expect(!step.contains("TEMP B-TREE"), "\(step)")
        }
    }
}
