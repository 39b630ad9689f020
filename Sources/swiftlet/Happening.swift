import Foundation
import XMPPClient

/// What a command that stays online (listen, presence, chat) reacts to,
/// merged into one sequence in arrival order, so that one loop handles
/// it all and nothing is lost to a cancelled consumer: the client's
/// events, lines of standard input, SIGINT or SIGTERM, the end of the
/// time allowed.
enum Happening: Sendable {
    case event(ClientEvent)
    case line(String)
    case endOfInput
    case interrupted
    case timedOut

    /// The merged sequence.
    ///
    /// - Parameters:
    ///   - events: The client's events, subscribed before connecting so
    ///     that none is missed.
    ///   - deadline: When to deliver `timedOut`, if ever.
    ///   - readsInput: Whether to read standard input, line by line, on a
    ///     thread of its own (a blocking read must not hold one of the few
    ///     threads async tasks run on).
    static func stream(
        events: AsyncStream<ClientEvent>, deadline: ContinuousClock.Instant?, readsInput: Bool
    ) -> AsyncStream<Happening> {
        let (stream, continuation) = AsyncStream.makeStream(of: Happening.self)
        let forwarder = Task {
            for await event in events { continuation.yield(.event(event)) }
        }
        let timer = Task {
            guard let deadline else { return }
            guard (try? await Task.sleep(until: deadline)) != nil else { return }
            continuation.yield(.timedOut)
        }
        // The signals are handled here rather than by the default action,
        // which would end the process before it says goodbye to the server.
        // Unchecked: the sources are only cancelled after this, and
        // dispatch_source_cancel may be called from any thread.
        nonisolated(unsafe) let signals = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(.interrupted) }
            source.resume()
            return source
        }
        if readsInput {
            Thread.detachNewThread {
                while let line = readLine(strippingNewline: true) { continuation.yield(.line(line)) }
                continuation.yield(.endOfInput)
            }
        }
        continuation.onTermination = { _ in
            forwarder.cancel()
            timer.cancel()
            for source in signals { source.cancel() }
            for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
        }
        return stream
    }
}
