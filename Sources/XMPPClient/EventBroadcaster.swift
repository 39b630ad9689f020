import Synchronization

/// Hands each client event to every open event sequence, in order.
///
/// Subscribers come and go from any task; a sequence whose consumer stops
/// (its task cancelled or the loop left) is removed at once.
final class EventBroadcaster: Sendable {
    private let subscribers = Mutex<(next: Int, continuations: [Int: AsyncStream<ClientEvent>.Continuation])>(
        (0, [:]))

    /// A new sequence receiving every event from now on.
    func subscribe() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self)
        let id = subscribers.withLock { state in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers `event` to every subscriber.
    func publish(_ event: ClientEvent) {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) {
            continuation.yield(event)
        }
    }

    /// Ends every sequence.
    func finish() {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) {
            continuation.finish()
        }
    }
}
