import XMPPStorage

extension ServerContext {
    /// Runs `load` in a storage job that, submitted at start, runs before
    /// any session's; a failure (a database error) is logged with what it
    /// stops (`effect`) and the load tried again after `retryInterval`,
    /// rather than leaving a feature off for good.
    func loadAtStart(
        _ what: String, until effect: String, retryInterval: Duration,
        _ load: @escaping @Sendable (Stores) throws -> Void
    ) {
        storage.run(on: loop, load) { result in
            guard case .failure(let error) = result else { return }
            self.log.error("cannot load \(what), \(effect) until it loads; trying again in \(retryInterval): \(error)")
            _ = self.loop.scheduleTimer(after: retryInterval) {
                self.loadAtStart(what, until: effect, retryInterval: retryInterval, load)
            }
        }
    }
}
