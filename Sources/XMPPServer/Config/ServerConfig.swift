import Foundation
import XMPPNet
import XMPPStorage

/// Everything `swiftletd` can be told, with a working default for each, so
/// the server starts with no config file at all: `localhost` on
/// 127.0.0.1:5222 and [::1]:5222, data in `./data`, a self-signed
/// certificate generated on first run.
///
/// Read from `swiftletd.conf` (see `ConfigFile` for the syntax, and
/// `etc/swiftletd.conf` for every key with its default) and command-line
/// overrides by `ServerConfig.load(from:overrides:)`, which also validates.
/// Relative paths are relative to the server's working directory.
public struct ServerConfig: Sendable, Equatable {
    /// The XMPP domain served (the JIDs' domainpart), normalized as RFC 7622
    /// §3.2 prepares a domainpart: a host name (`ydc.local`), an IPv4 address
    /// (`192.168.1.20`) or a bracketed IPv6 address (`[::1]`). Clients put it
    /// in the stream header's `to`. Key `domain`, default `localhost`.
    public var domain = "localhost"
    /// Where the database and the generated certificate live. Key
    /// `data_directory`, default `data`.
    public var dataDirectory = "data"
    /// Plain TCP listeners that offer STARTTLS (RFC 6120 §5). Key `listen`,
    /// default `127.0.0.1:5222, [::1]:5222` (XMPPFramework tries IPv6 first).
    public var listen = [
        ListenAddress(SocketAddress(ip: "127.0.0.1", port: 5222)!),
        ListenAddress(SocketAddress(ip: "::1", port: 5222)!),
    ]
    /// Listeners where TLS starts at once, before any XML (XEP-0368), usually
    /// port 5223. Key `direct_tls_listen`, default none.
    public var directTLSListen: [ListenAddress] = []
    /// The accounts of this domain that may administer the server through
    /// ad-hoc commands (XEP-0133): localparts or bare JIDs, normalized to
    /// localparts by validation. Key `admins`, default empty: nobody.
    public var admins: [String] = []
    /// Event loop threads. Connections are accepted on each in turn, and
    /// a client's moves, once authenticated, to its account's
    /// (`SessionHomes`). Key `threads`, from 1 to 256, default the number
    /// of processors (`defaultThreads`).
    public var threads = Self.defaultThreads
    /// One event loop per processor the process may use, at most 256.
    public static let defaultThreads = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 256)
    /// The least severe log level written. Key `log_level`, default `info`.
    public var logLevel = LogLevel.info
    /// TLS policy and certificate.
    public var tls = TLS()
    /// In-band registration (XEP-0077).
    public var registration = Registration()
    /// SASL authentication (RFC 6120 §6).
    public var authentication = Authentication()
    /// Connection timers.
    public var timeouts = Timeouts()
    /// Size limits.
    public var limits = Limits()
    /// What a software version query (XEP-0092) to the server learns. Key
    /// `version_reply`, default `full`.
    public var versionReply = VersionReply.full
    /// Message archiving (XEP-0313).
    public var archive = Archive()
    /// The built-in HTTP server, which serves file uploads.
    public var http = HTTP()
    /// HTTP file upload (XEP-0363).
    public var upload = Upload()
    /// Group chat (XEP-0045).
    public var muc = MUC()
    /// Contact addresses of the service (XEP-0157).
    public var contact = Contact()
    /// STUN and TURN services for calls (XEP-0215).
    public var externalServices = ExternalServiceSettings()
    /// External components (XEP-0114).
    public var components = Components()
    /// Push notifications (XEP-0357).
    public var push = PushSettings()

    /// The defaults.
    public init() {}

    /// Whether STARTTLS must happen before authentication.
    public enum TLSPolicy: String, Sendable, CaseIterable {
        /// `required` when a `listen` address is not loopback, `optional`
        /// when all are (see `effectiveTLSPolicy`).
        case auto
        /// STARTTLS is offered with `<required/>`; nothing else is accepted
        /// before it.
        case required
        /// STARTTLS is offered without `<required/>`: unchanged XMPPFramework
        /// apps then stay in plaintext. SCRAM still works; PLAIN never does
        /// without TLS.
        case optional
    }

    /// TLS settings (RFC 6120 §5).
    public struct TLS: Sendable, Equatable {
        /// Key `tls`, default `auto`.
        public var policy = TLSPolicy.auto
        /// PEM certificate chain file. Key `certificate`, default empty: a
        /// self-signed certificate for the domain is generated on first run
        /// into the data directory (see `certificateSource`).
        public var certificate = ""
        /// PEM private key file for `certificate`. Key `private_key`,
        /// default empty; set both or neither.
        public var privateKey = ""
    }

    /// Whether clients may create accounts in-band (XEP-0077).
    public enum RegistrationMode: String, Sendable, CaseIterable {
        /// Anyone who can connect may register.
        case open
        /// Accounts are made by `swiftletd adduser` only.
        case closed
    }

    /// In-band registration settings (XEP-0077).
    public struct Registration: Sendable, Equatable {
        /// Key `registration`, default `open`.
        public var mode = RegistrationMode.open
        /// Most registration attempts (taken usernames too) per client
        /// address block (an IPv4 address, an IPv6 /64) in a period, or `nil`
        /// for no limit. Key `registration_throttle`, default `5 per 1h`.
        public var throttle: Throttle? = Throttle(5, per: .seconds(3600))
        /// Whether loopback clients skip `throttle`, so local tests, tools and
        /// demos register freely. Key `registration_throttle_exempt_loopback`,
        /// default yes.
        public var throttleExemptsLoopback = true
    }

    /// SASL settings (RFC 6120 §6, RFC 5802, RFC 7677).
    public struct Authentication: Sendable, Equatable {
        /// Failed SASL attempts allowed on one stream before it is closed;
        /// apps retry, or register and retry, on the same stream. Key
        /// `sasl_max_attempts`, default 5, from 1 to 100.
        public var saslMaxAttempts = 5
        /// PBKDF2 iterations for new SCRAM credentials. Key
        /// `scram_iterations`, default 4096, from 4096 (RFC 7677 §4;
        /// XMPPFramework gives up below it) to 1000000.
        public var scramIterations = 4096
        /// Most failed logins per client address block (an IPv4 address, an
        /// IPv6 /64) in a period, or `nil` for no limit. Past it, logins from
        /// the block are answered one per period/count (30 s by default),
        /// the right password included (`LoginThrottle`). Key
        /// `login_throttle`, default `10 per 5m`.
        public var loginThrottle: Throttle? = Throttle(10, per: .seconds(300))
        /// Most failed logins to one account, from any address, in a period,
        /// or `nil` for no limit. Past it, logins to the account are answered
        /// one per period/count; its owner's success clears the count. Key
        /// `login_account_throttle`, default `10 per 5m`.
        public var accountLoginThrottle: Throttle? = Throttle(10, per: .seconds(300))
        /// How long a FAST token (XEP-0484) stays valid; a login with a
        /// token past half its life gets the next one. `.zero` offers no
        /// FAST. Key `fast_token_lifetime`, default 21 days, at most a year.
        public var fastTokenLifetime = Duration.seconds(21 * 86400)
        /// Most clients (SASL2 user-agent ids) of one account holding FAST
        /// tokens; one more makes the account forget the client whose
        /// tokens expire first. Key `fast_max_clients`, default 16, from 1
        /// to 1000.
        public var fastMaxClients = 16
    }

    /// Connection timers.
    public struct Timeouts: Sendable, Equatable {
        /// Time from connect until authenticated and bound; then the stream
        /// gets `connection-timeout`. Key `handshake_timeout`, default 30s,
        /// from 1s to 1h.
        public var handshake = Duration.seconds(30)
        /// Silence after which a stream is closed; whitespace counts as
        /// traffic. Key `idle_timeout`, default 5m; must be more than 150s,
        /// since XMPPFramework sends a space only every 120 to 150 s.
        public var idle = Duration.seconds(300)
        /// Interval of the server's whitespace keepalive on a quiet stream.
        /// Key `keepalive_interval`, default 60s, at least 1s.
        public var keepaliveInterval = Duration.seconds(60)
        /// How long a closing stream may take to hand its last bytes (a
        /// stream error, the closing tag) to a peer that does not read; then
        /// the connection is dropped. Key `close_timeout`, default 5s, from
        /// 1s to 60s. Accepted connections also get `TCP_USER_TIMEOUT` of
        /// `idle`: a peer that acknowledges nothing for that long is gone.
        public var close = Duration.seconds(5)
        /// How long a session whose connection dropped waits for its client
        /// to resume it (XEP-0198 §5); the client may ask for less. Key
        /// `resume_timeout`, default 5m, from 0 (no resumption) to 1h.
        public var resume = Duration.seconds(300)
        /// How long a client using stream management (XEP-0198) may leave
        /// our `<r/>` unanswered; then its connection is closed as if it
        /// had dropped, and the session waits to be resumed. Key
        /// `sm_ack_timeout`, default 60s, from 5s to 1h.
        public var acknowledgement = Duration.seconds(60)
    }

    /// Size limits, in bytes.
    public struct Limits: Sendable, Equatable {
        /// Largest stanza from an authenticated client. Key
        /// `max_stanza_size`, default 1MiB (XMPPFramework apps send vCard
        /// photos unresized), from `maxStanzaSizeUnauthenticated` to 64MiB.
        public var maxStanzaSize = 1 << 20
        /// Largest element before authentication. Key
        /// `max_stanza_size_unauthenticated`, default 16KiB, at least 10000
        /// (RFC 6120 §13.12).
        public var maxStanzaSizeUnauthenticated = 16 << 10
        /// Most stanzas sent to a client under stream management (XEP-0198)
        /// and not yet acknowledged; past it the stream is closed with
        /// `resource-constraint` (the stanzas go to the user's other
        /// resources or offline storage). Key `sm_max_unacked`, default
        /// 5000, from `offlineQuota` + 1000 (a login gets the whole offline
        /// backlog at once) to 2000000.
        public var smMaxUnacked = 5000
        /// Most bytes of such stanzas, as sent; past it the same happens.
        /// Key `sm_max_unacked_size`, default 16MiB, from
        /// `offlineQuotaSize` + `maxStanzaSize` to 2GiB.
        public var smMaxUnackedSize = 16 << 20
        /// Most bytes that may wait to be sent to one client that is not
        /// reading (beyond what the kernel's socket buffer holds); past it
        /// the stream is closed with `resource-constraint`. Key
        /// `max_queued_output`, default 16MiB, from `offlineQuotaSize` +
        /// twice `maxStanzaSize` (a login gets the whole offline backlog
        /// at once) to 2GiB.
        public var maxQueuedOutput = 16 << 20
        /// Most messages kept for one offline user (XEP-0160); beyond it
        /// senders get `resource-constraint`. Key `offline_quota`, default
        /// 1000, from 0 (keep none) to 1000000.
        public var offlineQuota = 1000
        /// Most bytes kept for one offline user, counting each message as
        /// stored (serialized XML, which may be larger than it was on the
        /// wire); a message that does not fit gets `resource-constraint`,
        /// like one beyond `offlineQuota`. All of it is read at once when
        /// the user comes online. Key `offline_quota_size`, default 10MiB,
        /// from 0 (keep none) to 1GiB.
        public var offlineQuotaSize = 10 << 20
        /// Largest vCard a user may store (XEP-0054), as serialized XML;
        /// beyond it a set gets `policy-violation`. Key `vcard_max_size`,
        /// default 1MiB, from 1KiB to 64MiB. A vCard also travels in one
        /// stanza, so `maxStanzaSize` bounds it too: the default lets
        /// through every vCard the stanza limit lets through, unresized
        /// XMPPFramework photos included.
        public var maxVCardSize = 1 << 20
        /// Most JIDs one user may block (XEP-0191); a block beyond it gets
        /// `policy-violation`. The lists of online users are kept in
        /// memory. Key `blocklist_max_items`, default 1000, from 1 to 100000.
        public var blocklistMaxItems = 1000
        /// Largest element a user may keep in private XML storage
        /// (XEP-0049), as serialized XML; a bigger one gets
        /// `not-acceptable`. XEP-0048 bookmarks stored there go to PEP
        /// instead, each conference under `pepMaxItemSize`. Key
        /// `private_storage_max_size`, default 64KiB, from 1KiB to 16MiB.
        public var privateStorageMaxSize = 64 << 10
        /// Most elements (distinct namespace and name) one user may keep in
        /// private XML storage; storing one more gets `resource-constraint`.
        /// Key `private_storage_max_elements`, default 100, from 1 to 10000.
        public var privateStorageMaxElements = 100
        /// Most items one personal eventing node keeps (XEP-0163): the
        /// largest `pubsub#max_items` a user may ask for, and what `max`
        /// means; a new node keeps one unless asked. Asking for more is
        /// refused: `conflict` + `<precondition-not-met/>` in
        /// publish-options, `not-acceptable` in a configuration form.
        /// Bookmarks (XEP-0402) keep one item per room, and clients ask
        /// for 255 or `max`. `pepMaxItemSize` bounds each item's size. It
        /// also bounds the items one `<items/>` answers (the newest), and
        /// lowering it lowers the nodes that keep more. Key
        /// `pep_max_items`, default 256, from 1 to 10000.
        public var pepMaxItems = 256
        /// Most personal eventing nodes one user may have (XEP-0163; OMEMO
        /// takes one per device, plus bookmarks, avatars, nickname and the
        /// like); creating one more gets `policy-violation` with
        /// `max-nodes-exceeded`. Key `pep_max_nodes`, default 250, from 1 to
        /// 100000.
        public var pepMaxNodes = 250
        /// Largest payload of one personal eventing item, as stored; a bigger
        /// one gets `not-acceptable` with `payload-too-big` (XEP-0060
        /// §7.1.3.4). Contacts get the last item of each node whenever they
        /// come online, so this and `pepMaxNodes` bound what that costs. Key
        /// `pep_max_item_size`, default 256KiB (avatars are published resized),
        /// from 1KiB to 64MiB.
        public var pepMaxItemSize = 256 << 10
        /// Most explicit subscriptions (XEP-0060 §6.1) one personal eventing
        /// node keeps, contacts' included, besides the contacts who get its
        /// events through presence alone; one more gets `policy-violation`.
        /// Each publication goes to every subscriber. Key
        /// `pep_max_subscribers`, default 1000, from 1 to 100000.
        public var pepMaxSubscribers = 1000
        /// Most explicit subscriptions one user may hold to other users'
        /// personal eventing nodes, each subscribed resource counted; one
        /// more gets `policy-violation` + `<too-many-subscriptions/>`
        /// (XEP-0060 §6.1.3.7). Clients subscribe to a few nodes of each
        /// correspondent (an OMEMO device list, say), so the default leaves
        /// room for hundreds of them while bounding the rows one account
        /// adds. Key `pep_max_subscriptions`, default 1000, from 1 to 100000.
        public var pepMaxSubscriptions = 1000
        /// Most bytes the stored personal eventing items of one user may
        /// take, payloads summed as serialized; a publish beyond it gets
        /// `resource-constraint` (the items an item of the same id
        /// replaces do not count, the older ones `max_items` would drop
        /// do). The default holds forty items of `pepMaxItemSize`, far more
        /// than avatars, OMEMO bundles and bookmarks take. Key `pep_quota`,
        /// default 10MiB, from 1KiB to 1GiB.
        public var pepQuota = 10 << 20
        /// Longest personal eventing node name, item id and `pubsub#title`,
        /// in UTF-8 bytes; a longer one gets `not-acceptable`. Key
        /// `pep_max_name_size`, default 1KiB, from 64 bytes to 64KiB.
        public var pepMaxNameSize = 1 << 10
        /// Most items in one user's roster (RFC 6121 §2); adding one beyond
        /// it gets `policy-violation`. The roster is read on every broadcast
        /// presence. Key `roster_max_items`, default 2000, from 1 to 100000.
        public var rosterMaxItems = 2000
        /// Most groups one roster item may be in; a roster set with more gets
        /// `policy-violation`. Key `roster_max_groups`, default 64, from 1 to
        /// 10000.
        public var rosterMaxGroups = 64
        /// Most entities one resource may have sent directed available presence
        /// to (RFC 6121 §4.6), which the server remembers to send them its
        /// unavailable presence at the end; one more gets `policy-violation`.
        /// Key `max_directed_presence`, default 100, from 1 to 100000.
        public var maxDirectedPresence = 100
        /// Most sessions (resources) one account may have bound at once,
        /// detached stream management sessions included; binding one more gets
        /// `resource-constraint` (RFC 6120 §7.6.2.1). Each resource multiplies
        /// what a message to the account costs (carbons, bare-JID delivery).
        /// Key `max_resources_per_account`, default 10, from 1 to 1000.
        public var maxResourcesPerAccount = 10
        /// Most client connections open at once; one more is answered with
        /// `resource-constraint` and closed. At start the open-file limit is
        /// raised to its hard limit, and this is lowered to fit under it (with
        /// a reserve for files). Key `max_connections`, default 10000, from 1
        /// to 1000000.
        public var maxConnections = 10000
        /// Most client connections open at once from one IPv4 address or one
        /// IPv6 /64; one more is answered with `policy-violation` and closed.
        /// Loopback clients are not counted per address. Key
        /// `max_connections_per_address`, default 100 (a household or office
        /// behind one address), from 1 to 1000000.
        public var maxConnectionsPerNetwork = 100
    }

    /// The built-in HTTP server (`HTTPServer`): file upload (XEP-0363),
    /// WebSocket, the web chat, metrics and the admin page.
    public struct HTTP: Sendable, Equatable {
        /// Plain HTTP listeners; loopback addresses only (validation refuses
        /// others), for local development and for a TLS reverse proxy on the
        /// same machine. Key `http_listen`, default `127.0.0.1:5280, [::1]:5280`.
        public var listen = [
            ListenAddress(SocketAddress(ip: "127.0.0.1", port: 5280)!),
            ListenAddress(SocketAddress(ip: "::1", port: 5280)!),
        ]
        /// HTTPS listeners, with the server's certificate; upload URLs use
        /// the first, since Gajim, Dino and iOS apps refuse plain HTTP. Key
        /// `https_listen`, default `127.0.0.1:5281, [::1]:5281`.
        public var tlsListen = [
            ListenAddress(SocketAddress(ip: "127.0.0.1", port: 5281)!),
            ListenAddress(SocketAddress(ip: "::1", port: 5281)!),
        ]
        /// How long a client may take to send a request's head, and may
        /// stay silent while sending its body, before it gets `408`. Key
        /// `http_timeout`, default 30s, from 1s to 1h.
        public var timeout = Duration.seconds(30)
        /// Whether XMPP over WebSocket (RFC 7395) is served at
        /// `/xmpp-websocket` on the HTTP and HTTPS listeners. Key
        /// `websocket`, default yes.
        public var webSocket = true
        /// The `Origin`s (`scheme://host[:port]`) whose pages may open a
        /// WebSocket stream; empty allows any origin, as a WebSocket client
        /// authenticates inside the stream, never with a cookie. Key
        /// `websocket_origins`, default empty.
        public var webSocketOrigins: [String] = []
        /// The public URL of the WebSocket endpoint, such as
        /// `wss://chat.example.org/xmpp-websocket` behind a reverse proxy:
        /// XEP-0156 discovery then names it alone. Empty: the `wss://` and
        /// `ws://` URLs of the listeners at the domain. Key `websocket_url`,
        /// default empty.
        public var webSocketURL = ""
        /// Whether the web chat is served at `/chat` (`WebChatResponder`);
        /// it connects at `/xmpp-websocket`, so it needs `webSocket` too.
        /// Key `web_chat`, default yes.
        public var webChat = true
        /// Whether the server's metrics are served at `/metrics` in the
        /// OpenMetrics text format (`MetricsEndpoint`). Key `metrics`,
        /// default no.
        public var metrics = false
        /// The bearer token a scraper of `/metrics` must send; empty
        /// serves loopback clients only, without a token. Key
        /// `metrics_token`, default empty; at least 16 characters of
        /// `A-Z a-z 0-9 - . _ ~ + /`.
        public var metricsToken = ""
        /// Whether the admin page is served at `/admin` (on HTTPS, and on
        /// plain HTTP to loopback clients) for the accounts `admins`
        /// names. Key `admin_page`, default yes.
        public var adminPage = true
    }

    /// HTTP file upload settings (XEP-0363).
    public struct Upload: Sendable, Equatable {
        /// Whether users may upload files. Key `upload`, default yes. Off,
        /// the service answers `service-unavailable` and nothing listens
        /// for HTTP.
        public var enabled = true
        /// The upload service's address. Key `upload_service`, default
        /// empty: `upload.<domain>` (see `uploadService`). The service
        /// answers at `httpfileupload.<domain>` too, the name of Openfire's
        /// plugin, which unchanged XMPPFramework apps may use.
        public var service = ""
        /// The public base URL of upload and download URLs, such as
        /// `https://files.example.com` for a reverse proxy. Key
        /// `upload_url`, default empty: derived from the listeners (see
        /// `effectiveUploadURL`).
        public var url = ""
        /// Largest file, in bytes. Key `upload_max_size`, default 100MiB,
        /// from 1KiB to 64GiB.
        public var maxFileSize = 100 << 20
        /// Most bytes one user may keep uploaded (files not yet expired,
        /// and slots handed out but not used yet, each counted as at least
        /// `UploadRecord.minimumQuotaCharge`). Key `upload_quota`,
        /// default 1GiB, from `upload_max_size` to 1TiB.
        public var quota = 1 << 30
        /// How long a slot's PUT URL stays valid. Key
        /// `upload_slot_lifetime`, default 5m, from 10s to 1d.
        public var slotLifetime = Duration.seconds(300)
        /// How long an uploaded file is kept. Key `upload_expiry`, default
        /// 30d, from 1h to 3650d.
        public var expiry = Duration.seconds(30 * 86_400)
    }

    /// Group chat settings (XEP-0045). Rooms live in memory; a temporary
    /// one vanishes with its last occupant, a persistent one is also kept
    /// in storage.
    public struct MUC: Sendable, Equatable {
        /// Whether users may create and join rooms. Key `muc_enabled`,
        /// default yes. Off, requests and messages to the service's address
        /// get `service-unavailable`, presence to it is dropped, and disco
        /// does not list it.
        public var enabled = true
        /// The group chat service's address. Key `muc_domain`, default
        /// empty: `conference.<domain>` (see `mucService`).
        public var domain = ""
        /// How many of a room's latest messages it keeps for history on
        /// join. Key `muc_history_length`, default 20, from 0 to 1000.
        public var historyLength = 20
        /// Most occupants (one per nickname) a room holds; one more joining
        /// gets `service-unavailable` (XEP-0045 §7.2.10). Key
        /// `muc_max_occupants`, default 200, from 1 to 100000.
        public var maxOccupants = 200
        /// Most rooms one user may have created that exist at once; one
        /// more gets `resource-constraint`. Key `muc_max_rooms_per_user`,
        /// default 10, from 1 to 10000.
        public var maxRoomsPerUser = 10
        /// Longest room name (the localpart of its address), in bytes; a
        /// longer one gets `not-acceptable`. Key `muc_max_room_name_length`,
        /// default 64, from 1 to 1023.
        public var maxRoomNameLength = 64
        /// Longest nickname, in bytes; a longer one gets `not-acceptable`.
        /// Key `muc_max_nick_length`, default 64, from 1 to 1023.
        public var maxNickLength = 64
        /// Largest message or presence a room takes, serialized, in bytes:
        /// a room keeps its history, subject and occupants' presence in
        /// memory and sends each message to every occupant. A larger one
        /// gets `not-acceptable`. Key `muc_max_stanza_size`, default 64KiB,
        /// from 1KiB to 1MiB.
        public var maxStanzaSize = 64 << 10
        /// Most users one room keeps an affiliation with (members, admins,
        /// owners, outcasts); one more gets `resource-constraint`. Key
        /// `muc_max_affiliations`, default 1000, from 1 to 100000.
        public var maxAffiliations = 1000
        /// The users (bare JIDs) who may create rooms; empty, every user of
        /// the server may. Others get `not-allowed` when they join a room
        /// that does not exist. Key `muc_room_creators`, default empty.
        public var roomCreators: [String] = []
        /// Most messages one room's archive keeps (XEP-0313 §6); past it
        /// the oldest go. Key `muc_archive_max_messages`, default 10000,
        /// from 1 to 10000000.
        public var archiveMaxMessages = 10_000
    }

    /// How much the server tells about its software (XEP-0092).
    public enum VersionReply: String, Sendable, CaseIterable {
        /// Name (Swiftlet), version and operating system.
        case full
        /// The name alone.
        case nameOnly = "name_only"
        /// Nothing: the query gets `service-unavailable`, as for a
        /// feature the server lacks, and disco does not list it.
        case off
    }

    /// Message archiving (XEP-0313, XEP-0441).
    public struct Archive: Sendable, Equatable {
        /// Whether one-to-one messages are archived for their sender and
        /// recipient, and users can query their archive. Off removes the
        /// feature entirely: nothing is archived, nothing advertised, and
        /// archive requests get `service-unavailable`. Key `archive`,
        /// default on.
        public var enabled = true
        /// The rule for users who have not set archiving preferences:
        /// always, never, or roster (messages with roster contacts only).
        /// Key `mam_default`, default `always`.
        public var defaultRule = ArchivePreferences.Default.always
        /// How long archived messages are kept, in the users' archives and
        /// the rooms' (XEP-0313 §6), or `nil` for ever; older ones are
        /// deleted at start and every hour. Key `mam_retention`,
        /// default 365d (anyone can add to a user's archive by writing to
        /// them, so it must not grow for ever unless asked to), at least 1h.
        public var retention: Duration? = .seconds(365 * 86_400)
    }

    /// A rate limit per client IP address: at most `count` events per
    /// `period`. Written `5 per 1h` in the config, or `off`.
    public struct Throttle: Sendable, Equatable, CustomStringConvertible {
        /// Events allowed in one period, at least 1.
        public var count: Int
        /// The period, at least 1 s.
        public var period: Duration

        /// At most `count` events per `period`.
        public init(_ count: Int, per period: Duration) {
            self.count = count
            self.period = period
        }

        /// `5 per 1h`.
        public var description: String {
            "\(count) per \(ConfigValueType<Duration>.duration.format(period))"
        }
    }
}

extension ServerConfig {
    /// The TCP settings of accepted connections, XMPP and HTTP: a closing
    /// connection gets `close_timeout` to deliver its last bytes, and
    /// `idle_timeout` is its `TCP_USER_TIMEOUT`.
    var connectionOptions: TCPConnection.Options {
        TCPConnection.Options(closeTimeout: timeouts.close, unacknowledgedTimeout: timeouts.idle)
    }
}
