import XMPPCore
import XMPPStorage

/// What an IQ handler answers a request with (RFC 6120 §8.2.3): a result
/// now, or the next step after something the session waits for (a storage
/// job, an account operation). A handler that cannot answer with a result
/// throws instead: a `StanzaErrorConvertible` becomes that error reply, any
/// other error (a failed storage job) `internal-server-error` and one log
/// line. `IQRequest.answer` is the one place that does this.
public struct IQAnswer {
    fileprivate enum Step {
        case result(Element?, then: (() -> Void)?)
        case waiting((IQRequest, _ next: @escaping (@escaping () throws -> IQAnswer) -> Void) -> Void)
    }

    fileprivate let step: Step

    /// A result with `payload` (none: an empty result); `follow` runs right
    /// after it is sent, for what must come after the answer (pushes of the
    /// change it confirms).
    public static func result(_ payload: Element? = nil, then follow: (() -> Void)? = nil) -> IQAnswer {
        IQAnswer(step: .result(payload, then: follow))
    }

    /// The answer `next` gives once `job` has run on the storage thread;
    /// the session's later stanzas wait for it (`ClientSession.withStorage`).
    public static func afterStorage<Value: Sendable>(
        _ job: @escaping @Sendable (Stores) throws -> Value, then next: @escaping (Value) throws -> IQAnswer
    ) -> IQAnswer {
        IQAnswer(step: .waiting { request, answer in
            request.session.withStorage(job) { result in answer { try next(result.get()) } }
        })
    }

    /// The answer `next` gives once `operation` has completed on the loop
    /// (an `AccountService` call); the session's later stanzas wait for it.
    public static func after<Value>(
        _ operation: @escaping (_ completion: @escaping (Result<Value, any Error>) -> Void) -> Void,
        then next: @escaping (Value) throws -> IQAnswer
    ) -> IQAnswer {
        IQAnswer(step: .waiting { request, answer in
            request.session.waiting(for: operation) { result in answer { try next(result.get()) } }
        })
    }
}

extension IQRequest {
    /// Answers with what `produce` gives: its result now, its next step
    /// after the wait, or the error it throws, mapped to an error reply.
    func answer(_ produce: () throws -> IQAnswer) {
        do {
            switch try produce().step {
            case .result(let payload, let follow):
                reply(payload)
                follow?()
            case .waiting(let wait):
                wait(self) { next in self.answer(next) }
            }
        } catch let error as any StanzaErrorConvertible {
            fail(error.stanzaError)
        } catch {
            let payload = iq.payload.map { "<\($0.name) xmlns='\($0.namespace)'>" } ?? "an IQ"
            session.log.error("\(payload) failed: \(error)")
            fail(StanzaError(.internalServerError))
        }
    }

    /// The requesting account's username, which every request from a
    /// session that authenticated has.
    public func username() throws(StanzaError) -> String {
        guard let username = session.username else { throw StanzaError(.notAuthorized) }
        return username
    }
}
