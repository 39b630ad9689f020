import XMPPCore
import XMPPStorage

/// Retention of an archive (XEP-0313 §3.2, `mam_retention`): at start and
/// every `interval`, the messages stamped longer than `retention` ago are
/// deleted, oldest first, in storage jobs of at most `batch`, so that a
/// large purge does not hold up other storage jobs. The users' archives
/// and the rooms' have one each.
struct ArchiveRetention: Sendable {
    /// How often expired messages are looked for.
    static let interval = Duration.seconds(3600)
    /// The most messages one job deletes; more jobs follow at once.
    static let batch = 10_000

    /// How long messages are kept.
    let retention: Duration
    let clock: WallClock
    /// The archive, as the log names it.
    let name: String
    /// Deletes at most `limit` of the oldest messages stamped before
    /// `cutoff` (milliseconds since 1970) and says how many went.
    let remove: @Sendable (_ stores: Stores, _ cutoff: Int, _ limit: Int) throws -> Int

    /// Purges now, then every `interval`.
    func start(_ server: ServerContext) {
        purgeExpired(server)
        schedule(server)
    }

    private func schedule(_ server: ServerContext) {
        _ = server.loop.scheduleTimer(after: Self.interval) {
            purgeExpired(server)
            schedule(server)
        }
    }

    /// Deletes the messages older than `retention`.
    func purgeExpired(_ server: ServerContext) {
        let (seconds, attoseconds) = retention.components
        let cutoff = clock.milliseconds - Int(seconds) * 1000 - Int(attoseconds / 1_000_000_000_000_000)
        purge(before: cutoff, storage: server.storage, log: server.log)
    }

    private func purge(before cutoff: Int, storage: any StorageJobs, log: Logger) {
        let remove = remove
        storage.submit({ stores in try remove(stores, cutoff, Self.batch) }) { result in
            switch result {
            case .success(let removed):
                if removed > 0 {
                    log.info("\(name) retention: deleted \(removed) \(removed == 1 ? "message" : "messages") stamped before \(DateTimeProfile.string(millisecondsSince1970: cutoff))")
                }
                if removed == Self.batch { purge(before: cutoff, storage: storage, log: log) }
            case .failure(let error):
                log.error("\(name) retention failed: \(error)")
            }
        }
    }
}
