import XMPPCore
import XMPPStorage

/// XEP-0313: Message Archive Management (`urn:xmpp:mam:2`, with the
/// `#extended` features), XEP-0359 stanza ids, XEP-0441 preferences.
///
/// Every one-to-one message with a body routed between local users, of
/// type chat or normal, is archived once for its sender and once for its
/// recipient (once in all for a message to oneself), unless a XEP-0334
/// hint or the owner's preferences say not to; offline messages too. The
/// recipient's copy of the message carries `<stanza-id by='recipient'/>`
/// with its archive id. The archive lives on the user's bare JID, which
/// advertises it (XEP-0313 §7). The server's domain advertises it too and
/// answers requests sent to it as the user's own, as ejabberd does: some
/// clients (profanity) look for MAM in the server's disco#info only.
///
/// One feature in four files: this one installs it and starts retention;
/// `+Archiving` decides what is archived and batches the writes;
/// `+Query` answers queries; `+Preferences` keeps the preferences. The
/// group chat rooms' archives (`MUCArchive`) share the query protocol
/// (`ArchiveQueries`), the write queue (`ArchiveQueue`) and retention
/// (`ArchiveRetention`).
///
/// Durability: archive writes are grouped (see `ArchiveWriter`) and never
/// hold up routing, so a crash can lose the archive copies of the messages
/// of the last moments, unlike offline messages, which are committed
/// before the sender's next stanza is handled.
public struct MessageArchive: ServerFeature {
    /// `urn:xmpp:mam:2#extended`: `before-id`, `after-id`, `ids`, flipped
    /// pages and archive metadata (XEP-0313 §7).
    static let extendedFeature = NS.mam + "#extended"
    /// Where the owner's requests go: the bare JID (or no `to`), and the
    /// server's domain.
    static let owner: [IQTarget] = [.account, .host]
    /// How long after a failed load of the archive's state it is tried
    /// again; meanwhile nothing is archived.
    static let loadRetryInterval = Duration.seconds(30)

    let settings: ServerConfig.Archive
    let clock: WallClock
    let writer = ArchiveWriter()
    let ids = ArchiveIDs()
    let policy: ArchivePolicy

    /// The feature for `settings`, stamping messages with `clock`.
    public init(_ settings: ServerConfig.Archive, clock: WallClock = .system) {
        self.settings = settings
        self.clock = clock
        self.policy = ArchivePolicy(defaultRule: settings.defaultRule)
    }

    public func install(_ hooks: Hooks) {
        for feature in [NS.mam, Self.extendedFeature] {
            hooks.advertiseOnAccount(feature)
            hooks.advertise(feature)
        }
        hooks.advertiseOnAccount(NS.stanzaID)
        // Before carbons (50) and delivery (0): the copies and the
        // delivered message carry the archive id.
        hooks.onMessage(to: [.bare, .full, .host], priority: 100) { message in
            archive(&message)
            return .passed
        }
        hooks.onIQ(.set, NS.mam, "query", to: Self.owner) { request in try query(request) }
        hooks.onIQ(.get, NS.mam, "query", to: Self.owner) { _ in ArchiveQueries.formAnswer }
        hooks.onIQ(.get, NS.mam, "metadata", to: Self.owner) { request in try metadata(request) }
        hooks.onIQ(.get, NS.mam, "prefs", to: Self.owner) { request in
            .result(policy.preferences(of: try request.username()).element)
        }
        hooks.onIQ(.set, NS.mam, "prefs", to: Self.owner) { request in try setPreferences(request) }
        // XEP-0313 §8.1: only the user reads or configures the archive.
        for (type, name) in [(IQ.IQType.set, "query"), (.get, "query"), (.get, "metadata"), (.get, "prefs"), (.set, "prefs")] {
            hooks.onIQ(type, NS.mam, name, to: [.user]) { _ in
                throw StanzaError(.forbidden, text: "only its owner may use an archive")
            }
        }
        hooks.onStart { server in start(server) }
        hooks.onStop { server in writer.flushNow(storage: server.storage, log: server.log) }
        // Copies still gathering for a deleted account are written now,
        // when they find no account, rather than after a new account of
        // that name exists.
        hooks.on(AccountDeleted.self) { deletion in
            writer.flushNow(storage: deletion.server.storage, log: deletion.server.log)
        }
        hooks.onSessionBound { session in refreshPreferences(of: session) }
    }

    // MARK: - Start and retention

    /// Sets the id key and loads the archive's state; then purges expired
    /// messages now and every hour.
    private func start(_ server: ServerContext) {
        ids.configure(secret: server.scramSecret)
        loadState(server)
        guard let retention = settings.retention else { return }
        ArchiveRetention(retention: retention, clock: clock, name: "archive") { stores, cutoff, limit in
            try stores.archive.removeMessages(before: cutoff, limit: limit)
        }.start(server)
    }

    /// Loads every user's preferences and the last sequence. Until it
    /// succeeds the writer numbers nothing, so no message is archived.
    private func loadState(_ server: ServerContext) {
        let (policy, writer) = (policy, writer)
        server.loadAtStart(
            "the message archive's state", until: "nothing is archived", retryInterval: Self.loadRetryInterval
        ) { stores in
            policy.replaceAll(try stores.archive.allPreferences())
            writer.resume(after: try stores.archive.lastSequence())
        }
    }
}
