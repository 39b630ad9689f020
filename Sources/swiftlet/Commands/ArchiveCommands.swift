import CommandLineSupport
import XMPPClient
import XMPPCore

/// `history`, `room history` and `recent`: the local archive (which
/// `--from-server` first fills from the server's or the room's).
enum ArchiveCommands {
    /// `history JID [--from-server] [--limit N] [--before TIME] [--json]`: the newest
    /// messages with JID, oldest first; marks the conversation read.
    static func history(_ context: Context) async throws {
        try await conversation(context) { try await $0.serverHistory(with: $1, limit: $2) }
    }

    /// `room history ROOM [--from-server] [--limit N] [--before TIME] [--json]`:
    /// the newest messages of ROOM, oldest first, the room's archive
    /// fetched with `--from-server`; marks them read.
    static func roomHistory(_ context: Context) async throws {
        try await conversation(context) { try await $0.roomHistory(of: $1, limit: $2) }
    }

    /// Prints the conversation with the operand's bare JID from the local
    /// archive, which `fetch` (the page of the server's archive for the
    /// JID and the limit) fills first with `--from-server`.
    private static func conversation(
        _ context: Context, fetch: @escaping @Sendable (XMPPClient, JID, Int) async throws -> [ArchivedMessage]
    ) async throws {
        let invocation = context.invocation
        let contact = try invocation.jid(at: 0).bare
        let limit = try invocation.integer("--limit", in: 1...Int.max) ?? 50
        let before = try invocation.date("--before")
        if invocation.flag("--from-server") {
            // The fetched page lands in the local archive, read below.
            let client = try context.savedClient()
            _ = try await context.withConnection(client) { try await fetch($0, contact, limit) }
        }
        let (account, store) = try await open(context)
        let messages = try await archived {
            try await store.conversation(account: account, contact: contact, before: before, limit: limit)
        }
        let json = invocation.flag("--json")
        for message in messages { Console.print(json ? message.json.line : message.line) }
        try await archived { try await store.markRead(account: account, contact: contact) }
    }

    /// `recent [--limit N] [--json]`: conversations, the most recent first.
    static func recent(_ context: Context) async throws {
        let limit = try context.invocation.integer("--limit", in: 1...Int.max) ?? 20
        let (account, store) = try await open(context)
        let json = context.invocation.flag("--json")
        for summary in try await archived({ try await store.recentConversations(account: account, limit: limit) }) {
            Console.print(json ? summary.json.line : summary.line)
        }
    }

    /// The account and the archive.
    private static func open(_ context: Context) async throws -> (JID, ClientStore) {
        let account = try context.home.account(option: context.global.account)
        try context.home.create()
        return (account, try await archived { try ClientStore(path: context.home.archivePath) })
    }

    /// `body`'s result; its error becomes a failure to read the archive.
    private static func archived<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw CommandFailure(.localFile, "the archive failed: \(error)")
        }
    }
}
