import Foundation
import XMPPClient

/// The loop `chat` and `room join` share: show what happens, send each
/// line of standard input, and stop at the end of input, on a line
/// `/quit`, on SIGINT or SIGTERM, or at the deadline.
enum Conversation {
    /// Runs the loop on `client`, already connected, whose `events` were
    /// subscribed before connecting.
    /// - Parameters:
    ///   - show: Prints an event, or not; connection changes are shown as
    ///     progress instead.
    ///   - send: Sends one line; its error is printed, and the loop goes on.
    /// - Throws: the client's error when the connection ends for good
    ///   before the loop was stopped.
    static func run(
        _ client: XMPPClient, events: AsyncStream<ClientEvent>, deadline: ContinuousClock.Instant?,
        show: (ClientEvent) async -> Void, send: (String) async throws -> Void
    ) async throws {
        var stopping = false
        for await happening in Happening.stream(events: events, deadline: deadline, readsInput: true) {
            switch happening {
            case .event(let event):
                switch event {
                case .connectionState(.disconnected(let error)):
                    guard stopping else { throw error ?? .notConnected }
                    return
                case .connectionState:
                    Console.progress(event.line)
                default:
                    await show(event)
                }
            case .line(let line):
                guard !stopping, !line.isEmpty else { continue }
                guard line != "/quit" else {
                    stopping = true
                    await client.disconnect()
                    continue
                }
                do {
                    try await send(line)
                } catch {
                    Console.error("not sent: \(error)")
                }
            case .endOfInput, .interrupted, .timedOut:
                guard !stopping else { continue }
                stopping = true
                await client.disconnect()
            }
        }
    }
}
