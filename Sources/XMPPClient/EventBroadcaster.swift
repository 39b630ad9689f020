import Foundation
import Synchronization

/// Hands each client event to every subscriber, in order.
///
/// Subscribers come and go from any task; a sequence whose consumer stops
/// (its task cancelled or the loop left) is removed at once.
final class EventBroadcaster: Sendable {
    private let subscribers = Mutex<(next: Int, receivers: [Int: @Sendable (ClientEvent) -> Void])>((0, [:]))

    /// A new sequence receiving every event from now on.
    func subscribe() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self)
        let id = subscribe { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    /// Calls `receive` with every event from now on, within `publish` (so
    /// in the actor turn that published it), until ``unsubscribe(_:)``
    /// with the id returned. A sequence's consumer runs later; this is for
    /// an observer that must have every event published by a call to the
    /// client when that call returns.
    func subscribe(_ receive: @escaping @Sendable (ClientEvent) -> Void) -> Int {
        subscribers.withLock { state in
            state.next += 1
            state.receivers[state.next] = receive
            return state.next
        }
    }

    /// Stops calling the receiver that `subscribe(_:)` returned `id` for.
    func unsubscribe(_ id: Int) {
        _ = subscribers.withLock { $0.receivers.removeValue(forKey: id) }
    }

    /// Delivers `event` to every subscriber.
    func publish(_ event: ClientEvent) {
        for receive in subscribers.withLock({ Array($0.receivers.values) }) {
            receive(event)
        }
    }
}
