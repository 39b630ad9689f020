import CSQLite
import Foundation

/// Copies a database's WAL into the database file on a thread of its own,
/// so that the connection that writes never waits for that copy and its
/// `fsync`.
///
/// SQLite's own automatic checkpoint runs inside the commit that crosses
/// the threshold: under a stream of writes (the message archive's group
/// commits) every few commits stall for the copy of thousands of pages and
/// a sync of the database file, and everything queued behind them waits.
/// Here the writer's WAL hook only asks this thread, which checkpoints on
/// its own connection. In WAL mode a checkpoint and a writer run side by
/// side; the writer restarts the WAL from its beginning once a checkpoint
/// has copied all of it.
///
/// Should the thread fall behind, the writer checkpoints itself once the WAL
/// holds `limitFactor` times the threshold, as SQLite would, so the WAL
/// stays bounded.
final class WALCheckpointer: @unchecked Sendable {
    // @unchecked Sendable: `state` is guarded by `condition`; `path` and
    // `configuration` are immutable.

    /// The writer checkpoints itself beyond this many thresholds.
    static let limitFactor = 4

    private struct State {
        var requested = false
        var stopping = false
        var finished = false
        var checkpoints = 0
    }

    private let path: String
    private let configuration: Database.Configuration
    private let condition = NSCondition()
    private var state = State()

    /// Starts the thread, which opens its own connection to `path`.
    init(path: String, configuration: Database.Configuration) {
        self.path = path
        var own = configuration
        own.checkpointsInBackground = false
        self.configuration = own
        let thread = Thread { [self] in run() }
        thread.name = "swiftlet.checkpoint"
        thread.start()
    }

    /// How many checkpoints the thread has run; for tests.
    var checkpoints: Int {
        locked { $0.checkpoints }
    }

    /// Makes `connection`'s commits ask this thread for a checkpoint once
    /// the WAL holds `configuration.walAutocheckpointPages` pages. Replaces
    /// SQLite's automatic checkpoint on that connection (both are WAL
    /// hooks). The connection must close before this checkpointer stops.
    ///
    /// The corresponding C function is `sqlite3_wal_hook`.
    func attach(to connection: OpaquePointer) {
        sqlite3_wal_hook(connection, { context, connection, schema, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
            let pages = max(checkpointer.configuration.walAutocheckpointPages, 1)
            if Int(frames) >= pages * WALCheckpointer.limitFactor {
                // Behind: checkpoint here, bounding the WAL; a busy
                // checkpoint just tries again at the next commit.
                _ = sqlite3_wal_checkpoint_v2(connection, schema, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            } else if Int(frames) >= pages {
                checkpointer.request()
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Wakes the thread for a checkpoint; requests made while one runs
    /// make one more.
    func request() {
        locked { $0.requested = true }
        condition.signal()
    }

    /// Stops the thread after the checkpoint in progress, and waits for it
    /// to close its connection.
    func stop() {
        condition.lock()
        state.stopping = true
        condition.broadcast()
        while !state.finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        // Without its connection the thread can do nothing; the writer's
        // hook then checkpoints itself past the limit.
        let database = try? Database(path: path, configuration: configuration)
        defer {
            database?.close()
            condition.lock()
            state.finished = true
            condition.broadcast()
            condition.unlock()
        }
        while true {
            condition.lock()
            while !state.requested && !state.stopping { condition.wait() }
            let stopping = state.stopping
            state.requested = false
            condition.unlock()
            if stopping { return }
            // A checkpoint that cannot finish (busy, or an I/O error) is
            // retried at the next request.
            database?.checkpointPassively()
            locked { $0.checkpoints += 1 }
        }
    }

    private func locked<Result>(_ body: (inout State) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }
}
