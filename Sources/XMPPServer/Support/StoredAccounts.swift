import SQLiteKit
import XMPPCore
import XMPPNet
import XMPPStorage

/// Runs storage jobs: the storage thread in the server, the test's own
/// thread in tests.
public protocol StorageJobs: Sendable {
    /// Runs `job` with the stores and hands its result to `completion`.
    func submit<Value: Sendable>(
        _ job: @escaping @Sendable (Stores) throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void)

    /// Runs `job`, small durable writes, in one transaction with the other
    /// grouped jobs waiting beside it, and hands its result to `completion`
    /// once that transaction has committed (see `StorageQueue.submitGrouped`).
    func submitGrouped<Value: Sendable>(
        _ job: @escaping @Sendable (Stores) throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void)
}

extension StorageQueue<Stores>: StorageJobs {}

extension StorageJobs {
    /// Runs `job` alone: storage that commits each job by itself groups
    /// nothing.
    public func submitGrouped<Value: Sendable>(
        _ job: @escaping @Sendable (Stores) throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        submit(job, completion: completion)
    }

    /// Submits `job` and delivers its result on `loop`, always in a later
    /// loop turn (never inside this call), so a caller can pause and resume
    /// around it without re-entering itself.
    ///
    /// - Parameter grouped: Whether `job` joins a group commit
    ///   (`submitGrouped`) rather than running alone.
    public func run<Value: Sendable>(
        on loop: any Loop, grouped: Bool = false, _ job: @escaping @Sendable (Stores) throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        let bound = LoopBound(completion, on: loop)
        let deliver: @Sendable (Result<Value, any Error>) -> Void = { result in
            bound.loop.execute { bound.wrapped(result) }
        }
        if grouped {
            submitGrouped(job, completion: deliver)
        } else {
            submit(job, completion: deliver)
        }
    }
}

/// The accounts of the server, kept by XMPPStorage's `AccountStore`.
///
/// Password work (PBKDF2 for new credentials and for PLAIN checks) runs
/// inside the storage job, off the event loops. Completions always arrive
/// through `loop.execute`, never inside the call.
public struct StoredAccounts: AccountService {
    private let storage: any StorageJobs
    private let iterations: Int
    /// Credentials no account has, checked when PLAIN names an unknown
    /// user so that the answer takes as long as for a wrong password.
    private let decoy: SCRAMCredentials

    /// Creates the service; new credentials use `iterations` PBKDF2 rounds.
    public init(storage: any StorageJobs, iterations: Int) {
        self.storage = storage
        self.iterations = iterations
        self.decoy = try! SCRAMCredentials(
            password: "decoy", hashFunction: .sha256, iterations: iterations)
    }

    public func credentials(
        for username: String, _ hash: HashFunction, on loop: any Loop,
        _ completion: @escaping (Result<SCRAMCredentials?, any Error>) -> Void
    ) {
        run(on: loop, completion) { stores in try stores.accounts.credentials(of: username, for: hash) }
    }

    public func verify(
        username: String, password: String, on loop: any Loop,
        _ completion: @escaping (Result<SCRAMCredentials?, any Error>) -> Void
    ) {
        let decoy = decoy
        run(on: loop, completion) { stores in
            guard let stored = try stores.accounts.credentials(of: username, for: .sha256) else {
                _ = decoy.matches(password: password)
                return nil
            }
            return stored.matches(password: password) ? stored : nil
        }
    }

    public func register(
        username: String, password: String, on loop: any Loop,
        _ completion: @escaping (Result<Bool, any Error>) -> Void
    ) {
        let iterations = iterations
        run(on: loop, completion) { stores in
            // One job on the one storage thread, so the name cannot be taken
            // between the check and the insert; checking first spares the
            // PBKDF2 work for a name that is taken.
            guard try !stores.accounts.accountExists(username) else { return false }
            return try stores.accounts.createAccount(
                username, credentials: Self.credentials(for: password, iterations: iterations))
        }
    }

    public func changePassword(
        username: String, password: String, on loop: any Loop,
        _ completion: @escaping (Result<Bool, any Error>) -> Void
    ) {
        let iterations = iterations
        run(on: loop, completion) { stores in
            try stores.accounts.replaceCredentials(
                of: username, with: Self.credentials(for: password, iterations: iterations))
        }
    }

    public func delete(
        username: String, domain: String, on loop: any Loop,
        _ completion: @escaping (Result<DeletedAccount?, any Error>) -> Void
    ) {
        run(on: loop, completion) { stores in try Self.delete(username, domain: domain, in: stores) }
    }

    /// Deletes `username` (its rows go by cascade) and its entries in other
    /// users' rosters, so that whoever registers the name next inherits no
    /// subscription or pre-approval; for the server and the admin command.
    static func delete(_ username: String, domain: String, in stores: Stores) throws -> DeletedAccount? {
        let slots = try stores.uploads.slots(of: username)
        guard try stores.accounts.deleteAccount(username) else { return nil }
        let entries = try stores.roster.removeEverywhere("\(username)@\(domain)")
        return DeletedAccount(rosterEntries: entries, uploadSlots: slots)
    }

    /// SCRAM-SHA-1 and SCRAM-SHA-256 credentials for `password`: the only
    /// form in which a password is kept.
    static func credentials(for password: String, iterations: Int) throws -> [SCRAMCredentials] {
        try [HashFunction.sha1, .sha256].map { hash in
            try SCRAMCredentials(password: password, hashFunction: hash, iterations: iterations)
        }
    }

    private func run<Value: Sendable>(
        on loop: any Loop, _ completion: @escaping (Result<Value, any Error>) -> Void,
        _ job: @escaping @Sendable (Stores) throws -> Value
    ) {
        storage.run(on: loop, job, then: completion)
    }
}
