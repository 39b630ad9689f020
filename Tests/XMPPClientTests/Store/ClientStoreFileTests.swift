import Foundation
import Testing
import XMPPClient
import XMPPCore

/// A `ClientStore` in a file keeps its data across openings.
@Suite struct ClientStoreFileTests {
    @Test func aReopenedStoreFindsItsData() async throws {
        // Not `withTemporaryDirectory`, whose body cannot suspend.
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-client-tests-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/client.sqlite"
        let sent = message("see you", at: 1_700_000_000_001, outgoing: true, serverID: "s1")
        let romeo = RosterContact(
            jid: People.romeo, name: "Romeo", groups: ["Verona"], subscription: .both)
        do {
            let store = try ClientStore(path: path)
            try await store.record(message("hello", at: 1_700_000_000_000))
            try await store.record(sent)
            try await store.replaceRoster(account: People.juliet, version: "v7", contacts: [romeo])
        }

        let reopened = try ClientStore(path: path)
        let page = try await reopened.conversation(account: People.juliet, contact: People.romeo)
        #expect(page.map(\.body) == ["hello", "see you"])
        #expect(page.last == sent)
        // The duplicate checks see what the first opening stored.
        #expect(try await !reopened.record(message("again", at: 5, id: "x", serverID: "s1")))
        let summary = try #require(
            try await reopened.recentConversations(account: People.juliet).first)
        #expect(summary.unreadCount == 1)
        let roster = try await reopened.cachedRoster(account: People.juliet)
        #expect(roster.version == "v7")
        #expect(roster.contacts == [romeo])
    }

    @Test func aStoreNeedsItsDirectory() throws {
        try withTemporaryDirectory { directory in
            #expect(throws: (any Error).self) {
                try ClientStore(path: directory + "/client.sqlite")
            }
        }
    }
}
