import XMPPCore
import XMPPNet
import XMPPStorage

/// Everything a session on one loop needs from the server: settings,
/// shared services, and the loop itself. One per loop; the shared parts
/// (sessions, hooks, storage, throttles, components, uploads) are the same
/// objects in each (`init(sharing:on:)`).
public final class ServerContext {
    public let config: ServerConfig
    /// The served domain, normalized.
    public let domain: String
    /// The served domain as a JID.
    public let domainJID: JID
    public let loop: any Loop
    public let log: Logger
    /// When the server started, on the loop's clock (XEP-0012 uptime).
    public let started: ContinuousClock.Instant
    /// The certificate for STARTTLS and direct TLS; nil offers no TLS.
    public let tlsContext: TLSContext?
    /// Whether STARTTLS must come before anything else (the effective
    /// policy; `ServerConfig` explains how it is chosen).
    public let tlsRequired: Bool
    public let accounts: any AccountService
    /// Storage for features (roster, offline messages); run jobs through
    /// `ClientSession.withStorage` so the session's stanzas keep their order.
    public let storage: any StorageJobs
    public let sessions: SessionRegistry
    /// The external components connected now (XEP-0114); like `sessions`,
    /// one registry shared by every loop's context.
    public let components: ComponentRegistry
    /// The blocklists (XEP-0191) of users with a session, for routing.
    public let blocklists: BlocklistCache
    public let hooks: Hooks
    public let router: Router
    public let loginThrottle: LoginThrottle
    public let registrationThrottle: AddressThrottle
    /// The secret SCRAM derives unknown users' fake salts from.
    let scramSecret: [UInt8]
    /// The file upload service (XEP-0363), or nil with `upload = no`.
    public let upload: UploadService?
    /// FAST tokens (XEP-0484), derived from `scramSecret`.
    let fastTokens: FASTTokens
    /// The time of day, for what outlives the process (FAST token expiry).
    public let wallClock: WallClock
    /// The counters `/metrics` shows, for this loop.
    let metrics = ServerMetrics()
    /// The loop each account's sessions live on; shared by every loop's
    /// context.
    let homes: SessionHomes

    /// Creates a loop's context.
    public init(
        config: ServerConfig, loop: any Loop, log: Logger, tlsContext: TLSContext?, tlsRequired: Bool,
        storage: any StorageJobs, sessions: SessionRegistry, blocklists: BlocklistCache, hooks: Hooks,
        loginThrottle: LoginThrottle, registrationThrottle: AddressThrottle, scramSecret: [UInt8],
        wallClock: WallClock = .system, components: ComponentRegistry = ComponentRegistry()
    ) throws(JIDError) {
        self.config = config
        self.domainJID = try JID(config.domain)
        self.domain = domainJID.domainpart
        self.loop = loop
        self.log = log
        self.started = loop.now
        self.tlsContext = tlsContext
        self.tlsRequired = tlsRequired
        self.accounts = StoredAccounts(storage: storage, iterations: config.authentication.scramIterations)
        self.storage = storage
        self.sessions = sessions
        self.components = components
        self.blocklists = blocklists
        self.hooks = hooks
        self.router = Router(domain: domainJID.domainpart)
        self.loginThrottle = loginThrottle
        self.registrationThrottle = registrationThrottle
        self.scramSecret = scramSecret
        self.wallClock = wallClock
        self.fastTokens = FASTTokens(
            serverSecret: scramSecret, lifetime: config.authentication.fastTokenLifetime,
            maxClients: config.authentication.fastMaxClients)
        self.upload = config.upload.enabled ? UploadService(config: config, serverSecret: scramSecret) : nil
        self.homes = SessionHomes()
    }

    /// Creates the context of another loop of the same server: every
    /// shared part (sessions, hooks, storage, throttles, components, the
    /// upload service, the secrets) is `base`'s; only the loop and the
    /// metrics are its own.
    public init(sharing base: ServerContext, on loop: any Loop) {
        config = base.config
        domainJID = base.domainJID
        domain = base.domain
        self.loop = loop
        log = base.log
        started = base.started
        tlsContext = base.tlsContext
        tlsRequired = base.tlsRequired
        accounts = base.accounts
        storage = base.storage
        sessions = base.sessions
        components = base.components
        blocklists = base.blocklists
        hooks = base.hooks
        router = base.router
        loginThrottle = base.loginThrottle
        registrationThrottle = base.registrationThrottle
        scramSecret = base.scramSecret
        wallClock = base.wallClock
        fastTokens = base.fastTokens
        upload = base.upload
        homes = base.homes
    }

    /// Parser limits before authentication: small, since anyone can connect.
    var unauthenticatedLimits: XMLStreamParser.Limits {
        XMLStreamParser.Limits(
            maxStanzaSize: config.limits.maxStanzaSizeUnauthenticated,
            maxTokenSize: min(4096, config.limits.maxStanzaSizeUnauthenticated))
    }

    /// Parser limits once authenticated (vCard photos need 1 MiB).
    var authenticatedLimits: XMLStreamParser.Limits {
        XMLStreamParser.Limits(maxStanzaSize: config.limits.maxStanzaSize)
    }
}

extension JID {
    /// Whether this JID is a bare domain (no localpart, no resource).
    var isDomainOnly: Bool { localpart == nil && resourcepart == nil }
}
