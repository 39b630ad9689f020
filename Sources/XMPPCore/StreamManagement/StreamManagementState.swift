/// XEP-0198 bookkeeping for one end of a stream, server or client: the
/// counters both sides keep and the stanzas sent but not yet acknowledged,
/// which are sent again after resumption (and, on a server, handed to
/// offline storage when the session ends).
///
/// Counters are 32-bit and wrap (XEP-0198 §4: "h" is an unsigned 32-bit
/// value and wraps to zero after 2^32 − 1), so all arithmetic on them is
/// wrapping.
///
/// `Sent` is the form an unacknowledged stanza is kept in: the client kit
/// keeps `Element`s; the server keeps the bytes it wrote, since a parsed
/// tree takes several times the memory and the server only needs it back
/// when a session ends unacknowledged.
public struct StreamManagementState<Sent: Sendable>: Sendable {
    /// The resumption id given in `<enabled/>`; nil when resumption was not
    /// asked for or is off.
    public var resumptionID: String?
    /// How long a detached session waits to be resumed.
    public var resumeTimeout: Duration = .zero
    /// Stanzas received from the client since `<enable/>` (our `h`).
    public var handledInbound: UInt32 = 0
    /// The client's last acknowledged count of our stanzas.
    public private(set) var acknowledgedOutbound: UInt32 = 0
    /// Stanzas sent since `<enable/>` and not acknowledged, oldest first:
    /// the first one is number `acknowledgedOutbound + 1`.
    public private(set) var unacknowledged: [Sent] = []
    /// The size of each of `unacknowledged` as sent, in the same order.
    private var unacknowledgedSizes: [Int] = []
    /// The total size of `unacknowledged` as sent, in bytes.
    public private(set) var unacknowledgedByteCount = 0
    /// Whether we sent `<r/>` and wait for its `<a/>`.
    public var ackRequested = false

    /// How many stanzas were sent since `<enable/>`, modulo 2^32.
    public var sentOutbound: UInt32 { acknowledgedOutbound &+ UInt32(truncatingIfNeeded: unacknowledged.count) }

    /// Records a stanza sent to the peer, `byteCount` bytes as sent.
    public mutating func recordSent(_ stanza: Sent, byteCount: Int) {
        unacknowledged.append(stanza)
        unacknowledgedSizes.append(byteCount)
        unacknowledgedByteCount += byteCount
    }

    /// Applies the client's count `h` of our stanzas it has handled and
    /// returns how many stanzas that newly acknowledged.
    /// - Throws: `StreamManagementCountTooHigh` when `h` acknowledges stanzas never sent
    ///   (XEP-0198 §4 `handled-count-too-high`); nothing changes then.
    @discardableResult
    public mutating func acknowledge(_ h: UInt32) throws(StreamManagementCountTooHigh) -> Int {
        let newly = Int(h &- acknowledgedOutbound)
        guard newly <= unacknowledged.count else { throw StreamManagementCountTooHigh(claimed: h, sent: sentOutbound) }
        unacknowledged.removeFirst(newly)
        unacknowledgedByteCount -= unacknowledgedSizes.prefix(newly).reduce(0, +)
        unacknowledgedSizes.removeFirst(newly)
        acknowledgedOutbound = h
        return newly
    }

    /// Takes the unacknowledged stanzas (to resend them or hand them off).
    public mutating func takeUnacknowledged() -> [Sent] {
        let taken = unacknowledged
        acknowledgedOutbound = sentOutbound
        unacknowledged = []
        unacknowledgedSizes = []
        unacknowledgedByteCount = 0
        return taken
    }

    /// Starts counting, from zero or from values carried over (which is how
    /// tests reach the wrap-around).
    public init(acknowledgedOutbound: UInt32 = 0, handledInbound: UInt32 = 0) {
        self.acknowledgedOutbound = acknowledgedOutbound
        self.handledInbound = handledInbound
    }
}

/// Why an `<a/>` or `<resume/>` count cannot be right.
public struct StreamManagementCountTooHigh: Error, Equatable {
    /// The count the client claimed.
    public var claimed: UInt32
    /// What we have sent.
    public var sent: UInt32
}
