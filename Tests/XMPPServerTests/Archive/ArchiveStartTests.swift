import Testing
import XMPPCore
@testable import XMPPServer
import XMPPNet
import XMPPStorage
import XMPPTestSupport

/// The archive's state (preferences, last sequence) failing to load at
/// start leaves the server running without archiving until a retry loads
/// it (security review L4), rather than trapping on the first message.
@Suite struct ArchiveStartTests {
    /// Storage whose every job fails while `isDown`, like a database that
    /// cannot be read.
    private final class OutageStorage: StorageJobs, @unchecked Sendable {
        // @unchecked: used from the test's one thread, as `InlineStorage` is.
        private let inline: InlineStorage
        var isDown = true

        init(loop: ManualLoop) {
            inline = InlineStorage(loop: loop)
        }

        func submit<Value: Sendable>(
            _ job: @escaping @Sendable (Stores) throws -> Value,
            completion: @escaping @Sendable (Result<Value, any Error>) -> Void
        ) {
            guard !isDown else { return completion(.failure(TestFailure("disk I/O error"))) }
            inline.submit(job, completion: completion)
        }
    }

    @Test func aFailedLoadArchivesNothingUntilARetryLoadsIt() throws {
        var outage: OutageStorage?
        let server = try TestServer { loop in
            let storage = OutageStorage(loop: loop)
            outage = storage
            return storage
        }
        try #require(outage).isDown = false
        #expect(server.logLines.lines.contains { $0.contains("cannot load the message archive's state") })
        for name in ["romeo", "juliet"] { try server.addUser(name, password: "pw") }
        let romeo = server.connect()
        try romeo.login("romeo", "pw", resource: "orchard")
        let juliet = server.connect()
        try juliet.login("juliet", "pw", resource: "balcony")
        juliet.send("<presence/>")
        _ = juliet.receive()

        romeo.chat("before", to: "juliet@localhost")
        let early = try juliet.receiveOne()
        #expect(early.childText("body") == "before", "delivered all the same")
        #expect(early.child("stanza-id", namespace: NS.stanzaID) == nil, "not archived, so no archive id")
        #expect(server.logLines.lines.contains {
            $0.contains("message from romeo@localhost/orchard not archived: the archive's state is not loaded")
        })

        server.loop.advance(by: MessageArchive.loadRetryInterval)
        romeo.chat("after", to: "juliet@localhost")
        #expect(try juliet.receiveOne().child("stanza-id", namespace: NS.stanzaID) != nil)
        #expect(juliet.queryArchive().bodies == ["after"])
        #expect(romeo.queryArchive().bodies == ["after"])
    }
}
