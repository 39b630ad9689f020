import CommandLineSupport
import Foundation
import XMPPClient
import XMPPCore

/// `listen` and `presence`: stay online and print events.
enum ListenCommand {
    /// `presence SHOW [--status TEXT] [--priority N]`: `listen` with that
    /// presence. Presence ends with the connection (RFC 6121 §4.5), so
    /// setting it and leaving would show nothing.
    static func presence(_ context: Context) async throws {
        let invocation = context.invocation
        guard let availability = Availability(rawValue: invocation.operands[0]) else {
            let choices = Availability.allCases.map(\.rawValue).joined(separator: ", ")
            throw CommandFailure.usage("presence takes one of \(choices), not '\(invocation.operands[0])'")
        }
        let priority = try invocation.integer("--priority", in: Int(Int8.min)...Int(Int8.max)) ?? 0
        try await listen(
            context,
            presence: Context.ShownPresence(
                availability: availability, status: invocation.value("--status"), priority: Int8(priority)))
    }

    /// `listen`: available (or `presence`), printing events until a
    /// signal, `--count` events or `--timeout`.
    /// - Throws: `CommandFailure` with `.cannotConnect` when the time ran
    ///   out before `--count` events; the client's error when the
    ///   connection ends for good.
    static func listen(_ context: Context, presence: Context.ShownPresence?) async throws {
        let options = try ListenOptions(context.invocation)
        let timeout = context.global.timeout
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let client = try context.savedClient()
        let events = client.events()
        try await context.connect(client, presence: presence ?? Context.ShownPresence(availability: .available))
        var printed = 0
        var stopped: Happening?
        loop: for await happening in Happening.stream(events: events, deadline: deadline, readsInput: false) {
            switch happening {
            case .event(let event):
                if case .connectionState(.disconnected(let error)) = event {
                    guard stopped == nil else { break loop }
                    throw error ?? .notConnected
                }
                guard stopped == nil, let line = options.output(for: event) else { continue }
                Console.print(line)
                printed += 1
                if let count = options.count, printed >= count {
                    stopped = happening
                    await client.disconnect()
                }
            case .interrupted, .timedOut:
                guard stopped == nil else { continue }
                stopped = happening
                await client.disconnect()
            case .line, .endOfInput:
                continue
            }
        }
        if case .timedOut = stopped, let count = options.count {
            throw CommandFailure(
                .cannotConnect, "timed out after \(timeout?.secondsText ?? "?") s with \(printed) of \(count) events")
        }
    }
}
