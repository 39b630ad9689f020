import CommandLineSupport
import Foundation
import XMPPClient
import XMPPCore

/// `send` and `chat`.
enum MessageCommands {
    /// `send JID TEXT...`: one message, unseen; fails when it bounces.
    static func send(_ context: Context) async throws {
        let invocation = context.invocation
        let recipient = try invocation.jid(at: 0)
        let text = messageText(of: invocation)
        guard !text.isEmpty else { throw CommandFailure(.badData, "there is no text to send") }
        let client = try context.savedClient()
        let (id, events) = try await context.withConnection(client) { try await $0.send(text, to: recipient) }
        for case .messageFailed(id, let from, let error) in events {
            throw CommandFailure(error).prefixed("\(from)")
        }
        Console.progress("sent to \(recipient)")
    }

    /// The words of the operands after the first, joined by spaces; for
    /// `-`, standard input without its last newline.
    static func messageText(of invocation: Invocation) -> String {
        var text = invocation.operands.dropFirst().joined(separator: " ")
        if text == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
        }
        return text
    }

    /// `send-file JID PATH [--type TYPE]`: uploads PATH and sends its URL;
    /// prints the URL.
    static func sendFile(_ context: Context) async throws {
        let invocation = context.invocation
        let recipient = try invocation.jid(at: 0)
        let path = URL(fileURLWithPath: invocation.operands[1])
        guard FileManager.default.isReadableFile(atPath: path.path) else {
            throw CommandFailure(.badData, "cannot read \(path.path)")
        }
        let client = try context.savedClient()
        Console.progress("uploading \(path.lastPathComponent)…")
        let (id, events) = try await context.withConnection(client) {
            try await $0.sendFile(path, to: recipient, contentType: invocation.value("--type"))
        }
        for case .messageFailed(id, let from, let error) in events {
            throw CommandFailure(error).prefixed("\(from)")
        }
        let sent = try? await client.conversation(with: recipient, limit: 1).last
        Console.print(sent?.body ?? "sent")
    }

    /// `chat JID`: available; sends each line of standard input to JID and
    /// prints incoming messages (from anyone) and bounces until the end of
    /// input, `/quit`, a signal or `--timeout`.
    static func chat(_ context: Context) async throws {
        let recipient = try context.invocation.jid(at: 0)
        let deadline = context.global.timeout.map { ContinuousClock.now + $0 }
        let client = try context.savedClient()
        let events = client.events()
        try await context.connect(client, presence: Context.ShownPresence(availability: .available))
        Console.progress("chatting with \(recipient); end with /quit or end of input")
        try await Conversation.run(client, events: events, deadline: deadline) { event in
            switch event {
            case .message(let message):
                Console.print(event.line)
                try? await client.markRead(message.from)
            case .messageFailed:
                Console.print(event.line)
            default:
                break
            }
        } send: { line in
            try await client.send(line, to: recipient)
        }
    }
}
