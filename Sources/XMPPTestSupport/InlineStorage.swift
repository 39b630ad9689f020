import XMPPNet
import XMPPServer
import XMPPStorage

/// Storage jobs run at once on the calling thread against in-memory stores.
/// `StoredAccounts` still delivers results in a later loop turn, so
/// sessions see the same ordering as with the storage thread.
///
/// `@unchecked Sendable` is sound because tests use it only from the
/// thread of their `ManualLoop`, which the precondition checks.
public final class InlineStorage: StorageJobs, @unchecked Sendable {
    private let stores: Stores
    private let loop: ManualLoop

    /// Creates storage used from `loop`'s thread, by default fresh
    /// in-memory stores.
    public init(loop: ManualLoop, stores: Stores = Stores(accounts: InMemoryAccountStore())) {
        self.loop = loop
        self.stores = stores
    }

    public func submit<Value: Sendable>(
        _ job: @escaping @Sendable (Stores) throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        loop.assertInLoop()
        completion(Result { try job(stores) })
    }
}
