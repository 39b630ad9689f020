import Foundation
import XMPPCore
import XMPPNet

/// The counters the server keeps for `/metrics` (`MetricsEndpoint`), one
/// set per loop, in its `ServerContext`, summed when scraped.
///
/// Confined to the loop like the sessions that count into it, so a count
/// is a plain add into a preallocated slot: no lock, no atomic, no
/// string. What can be read when scraped (sessions, storage) is not
/// counted here at all.
final class ServerMetrics {
    /// Routing durations' bucket bounds, in nanoseconds: 5 µs to 100 ms.
    static let routingBounds: [Int64] = [
        5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
        25_000_000, 100_000_000,
    ]

    /// Stanzas from bound clients, by kind.
    var stanzasReceived = LabelledCounter<Stanza.Kind>()
    /// Stanzas written to clients, by kind.
    var stanzasSent = LabelledCounter<Stanza.Kind>()
    /// Successful SASL exchanges, by mechanism.
    var logins = LabelledCounter<LoginMechanism>()
    /// Failed SASL exchanges, by the mechanism the client asked for.
    var loginFailures = LabelledCounter<LoginMechanism>()
    /// Times a limit refused or ended something.
    var limitsHit = LabelledCounter<LimitKind>()
    /// How long the router took per stanza (`Router.route`).
    var routingDuration = Histogram(bounds: routingBounds)
    /// Body bytes of uploads received (XEP-0363), kept or not.
    var uploadBytesReceived: UInt64 = 0
    /// WebSocket handshakes accepted (RFC 7395).
    var webSocketsOpened: UInt64 = 0
    /// When the server started, as wall-clock time.
    let startTime: Date

    /// Counters at zero, for a server that started at `startTime`.
    init(startTime: Date = Date()) {
        self.startTime = startTime
    }

    /// Counts a stanza arriving at the router.
    /// - Returns: When it arrived, for `routed(since:on:)`.
    func received(_ kind: Stanza.Kind, on loop: any Loop) -> ContinuousClock.Instant {
        stanzasReceived.increment(kind)
        return loop.now
    }

    /// Records the routing duration of a stanza that arrived at `arrival`
    /// and has been delivered, answered or handed to storage.
    func routed(since arrival: ContinuousClock.Instant, on loop: any Loop) {
        routingDuration.observe(loop.now - arrival)
    }

    /// Every count, as values that may cross to another loop.
    struct Counts: Sendable {
        var stanzasReceived: LabelledCounter<Stanza.Kind>
        var stanzasSent: LabelledCounter<Stanza.Kind>
        var logins: LabelledCounter<LoginMechanism>
        var loginFailures: LabelledCounter<LoginMechanism>
        var limitsHit: LabelledCounter<LimitKind>
        var routingDuration: Histogram
        var uploadBytesReceived: UInt64
        var webSocketsOpened: UInt64
    }

    /// This loop's counts now.
    var counts: Counts {
        Counts(
            stanzasReceived: stanzasReceived, stanzasSent: stanzasSent, logins: logins, loginFailures: loginFailures,
            limitsHit: limitsHit, routingDuration: routingDuration, uploadBytesReceived: uploadBytesReceived,
            webSocketsOpened: webSocketsOpened)
    }

    /// Adds another loop's counts to these.
    func add(_ other: Counts) {
        stanzasReceived.add(other.stanzasReceived)
        stanzasSent.add(other.stanzasSent)
        logins.add(other.logins)
        loginFailures.add(other.loginFailures)
        limitsHit.add(other.limitsHit)
        routingDuration.add(other.routingDuration)
        uploadBytesReceived &+= other.uploadBytesReceived
        webSocketsOpened &+= other.webSocketsOpened
    }
}

extension Stanza.Kind: MetricLabel {
    var slot: Int {
        switch self {
        case .message: 0
        case .presence: 1
        case .iq: 2
        }
    }

    var labels: [(String, String)] { [("kind", rawValue)] }
}

/// A SASL mechanism as a label: those the server offers (RFC 6120 and
/// XEP-0484 FAST), and `other` for any name a client makes up, so that
/// clients cannot add label values.
struct LoginMechanism: MetricLabel {
    private static let names =
        SASLMechanism.allCases.map(\.rawValue) + FASTMechanism.allCases.map(\.rawValue) + ["other"]

    static var allCases: [LoginMechanism] { names.indices.map { LoginMechanism(slot: $0) } }

    let slot: Int

    private init(slot: Int) {
        self.slot = slot
    }

    /// The label for the mechanism a client named; `other` for a name the
    /// server does not know, or none.
    init(_ name: String?) {
        slot = name.flatMap { Self.names.dropLast().firstIndex(of: $0) } ?? Self.names.count - 1
    }

    var labels: [(String, String)] { [("mechanism", Self.names[slot])] }
}

/// The limits whose hits are counted, named by their configuration key
/// (docs/SECURITY.md lists them).
enum LimitKind: Int, MetricLabel {
    /// `max_connections`: a connection refused.
    case maxConnections
    /// `max_connections_per_address`: a connection refused.
    case maxConnectionsPerAddress
    /// `max_stanza_size` (and the parser's depth and attribute caps): a
    /// stream ended with `policy-violation`.
    case maxStanzaSize
    /// `max_queued_output`: a client that does not read, disconnected.
    case maxQueuedOutput
    /// `sm_max_unacked`, `sm_max_unacked_size`: a stream ended.
    case smMaxUnacked
    /// `login_throttle`, `login_account_throttle`: a login delayed or refused.
    case loginThrottle
    /// `sasl_max_attempts`: a stream ended after failed logins.
    case saslMaxAttempts
    /// `registration_throttle`: a registration refused.
    case registrationThrottle
    /// `max_resources_per_account`: a bind refused.
    case maxResourcesPerAccount
    /// `offline_quota`, `offline_quota_size`: a message bounced.
    case offlineQuota
    /// `max_directed_presence`: a directed presence refused.
    case maxDirectedPresence
    /// `upload_quota`: an upload slot refused.
    case uploadQuota
    /// `push_max_registrations`: a push service not enabled.
    case pushRegistrations

    var slot: Int { rawValue }

    var labels: [(String, String)] {
        let key =
            switch self {
            case .maxConnections: "max_connections"
            case .maxConnectionsPerAddress: "max_connections_per_address"
            case .maxStanzaSize: "max_stanza_size"
            case .maxQueuedOutput: "max_queued_output"
            case .smMaxUnacked: "sm_max_unacked"
            case .loginThrottle: "login_throttle"
            case .saslMaxAttempts: "sasl_max_attempts"
            case .registrationThrottle: "registration_throttle"
            case .maxResourcesPerAccount: "max_resources_per_account"
            case .offlineQuota: "offline_quota"
            case .maxDirectedPresence: "max_directed_presence"
            case .uploadQuota: "upload_quota"
            case .pushRegistrations: "push_max_registrations"
            }
        return [("limit", key)]
    }
}
