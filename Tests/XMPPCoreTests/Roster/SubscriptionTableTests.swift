import Testing

@testable import XMPPCore

/// The eight tables of RFC 6121 Appendix A.2 and A.3, row by row.
///
/// The first three columns are the RFC's: existing state, "ROUTE?" (A.2) or
/// "DELIVER?" (A.3), and new state. The rest are what §3 says besides: the
/// roster push, the server's own `subscribed` (A.3.1's footnote) and the
/// presence sent to the contact from the user's resources.
@Suite("RFC 6121 Appendix A tables") struct SubscriptionTableTests {
    // MARK: A.2.1, outbound "subscribe" (§3.1.2)

    static let outboundSubscribe: [Row] = [
        // EXISTING STATE     ROUTE?  NEW STATE
        Row(.none,             yes,   .becomes(.nonePendingOut),   push: yes),
        Row(.nonePendingOut,   yes,   .noStateChange,              push: no),
        Row(.nonePendingIn,    yes,   .becomes(.nonePendingOutIn), push: yes),
        Row(.nonePendingOutIn, yes,   .noStateChange,              push: no),
        Row(.to,               yes,   .noStateChange,              push: no),
        Row(.toPendingIn,      yes,   .noStateChange,              push: no),
        Row(.from,             yes,   .becomes(.fromPendingOut),   push: yes),
        Row(.fromPendingOut,   yes,   .noStateChange,              push: no),
        Row(.both,             yes,   .noStateChange,              push: no),
    ]

    // MARK: A.2.2, outbound "unsubscribe" (§3.3.2)

    static let outboundUnsubscribe: [Row] = [
        // EXISTING STATE     ROUTE?  NEW STATE
        Row(.none,             yes,   .noStateChange,              push: no),
        Row(.nonePendingOut,   yes,   .becomes(.none),             push: yes),
        Row(.nonePendingIn,    yes,   .noStateChange,              push: no),
        Row(.nonePendingOutIn, yes,   .becomes(.nonePendingIn),    push: yes),
        Row(.to,               yes,   .becomes(.none),             push: yes),
        Row(.toPendingIn,      yes,   .becomes(.nonePendingIn),    push: yes),
        Row(.from,             yes,   .noStateChange,              push: no),
        Row(.fromPendingOut,   yes,   .becomes(.from),             push: yes),
        Row(.both,             yes,   .becomes(.from),             push: yes),
    ]

    // MARK: A.2.3, outbound "subscribed" (§3.1.5; pre-approval §3.4.2)

    static let outboundSubscribed: [Row] = [
        // EXISTING STATE     ROUTE?  NEW STATE
        Row(.none,             no,    .preApprovalNoted,           push: yes),
        Row(.nonePendingOut,   no,    .preApprovalNoted,           push: yes),
        Row(.nonePendingIn,    yes,   .becomes(.from),             push: yes, presence: .available),
        Row(.nonePendingOutIn, yes,   .becomes(.fromPendingOut),   push: yes, presence: .available),
        Row(.to,               no,    .preApprovalNoted,           push: yes),
        Row(.toPendingIn,      yes,   .becomes(.both),             push: yes, presence: .available),
        Row(.from,             no,    .noStateChange,              push: no),
        Row(.fromPendingOut,   no,    .noStateChange,              push: no),
        Row(.both,             no,    .noStateChange,              push: no),
    ]

    // MARK: A.2.4, outbound "unsubscribed" (§3.2.2)

    static let outboundUnsubscribed: [Row] = [
        // EXISTING STATE     ROUTE?  NEW STATE
        Row(.none,             no,    .noStateChange,              push: no),
        Row(.nonePendingOut,   no,    .noStateChange,              push: no),
        Row(.nonePendingIn,    yes,   .becomes(.none),             push: no),
        Row(.nonePendingOutIn, yes,   .becomes(.nonePendingOut),   push: no),
        Row(.to,               no,    .noStateChange,              push: no),
        Row(.toPendingIn,      yes,   .becomes(.to),               push: no),
        Row(.from,             yes,   .becomes(.none),             push: yes, presence: .unavailable),
        Row(.fromPendingOut,   yes,   .becomes(.nonePendingOut),   push: yes, presence: .unavailable),
        Row(.both,             yes,   .becomes(.to),               push: yes, presence: .unavailable),
    ]

    // MARK: A.3.1, inbound "subscribe" (§3.1.3)

    static let inboundSubscribe: [Row] = [
        // EXISTING STATE     DELIVER?  NEW STATE
        Row(.none,             yes,     .becomes(.nonePendingIn),    push: no),
        Row(.nonePendingOut,   yes,     .becomes(.nonePendingOutIn), push: no),
        Row(.nonePendingIn,    no,      .noStateChange,              push: no),
        Row(.nonePendingOutIn, no,      .noStateChange,              push: no),
        Row(.to,               yes,     .becomes(.toPendingIn),      push: no),
        Row(.toPendingIn,      no,      .noStateChange,              push: no),
        Row(.from,             no,      .noStateChange,              push: no, reply: .subscribed, presence: .available),
        Row(.fromPendingOut,   no,      .noStateChange,              push: no, reply: .subscribed, presence: .available),
        Row(.both,             no,      .noStateChange,              push: no, reply: .subscribed, presence: .available),
    ]

    // MARK: A.3.2, inbound "unsubscribe" (§3.3.3)

    static let inboundUnsubscribe: [Row] = [
        // EXISTING STATE     DELIVER?  NEW STATE
        Row(.none,             no,      .noStateChange,              push: no),
        Row(.nonePendingOut,   no,      .noStateChange,              push: no),
        Row(.nonePendingIn,    yes,     .becomes(.none),             push: no),
        Row(.nonePendingOutIn, yes,     .becomes(.nonePendingOut),   push: no),
        Row(.to,               no,      .noStateChange,              push: no),
        Row(.toPendingIn,      yes,     .becomes(.to),               push: no),
        Row(.from,             yes,     .becomes(.none),             push: yes, presence: .unavailable),
        Row(.fromPendingOut,   yes,     .becomes(.nonePendingOut),   push: yes, presence: .unavailable),
        Row(.both,             yes,     .becomes(.to),               push: yes, presence: .unavailable),
    ]

    // MARK: A.3.3, inbound "subscribed" (§3.1.6)

    static let inboundSubscribed: [Row] = [
        // EXISTING STATE     DELIVER?  NEW STATE
        Row(.none,             no,      .noStateChange,              push: no),
        Row(.nonePendingOut,   yes,     .becomes(.to),               push: yes),
        Row(.nonePendingIn,    no,      .noStateChange,              push: no),
        Row(.nonePendingOutIn, yes,     .becomes(.toPendingIn),      push: yes),
        Row(.to,               no,      .noStateChange,              push: no),
        Row(.toPendingIn,      no,      .noStateChange,              push: no),
        Row(.from,             no,      .noStateChange,              push: no),
        Row(.fromPendingOut,   yes,     .becomes(.both),             push: yes),
        Row(.both,             no,      .noStateChange,              push: no),
    ]

    // MARK: A.3.4, inbound "unsubscribed" (§3.2.3)

    static let inboundUnsubscribed: [Row] = [
        // EXISTING STATE     DELIVER?  NEW STATE
        Row(.none,             no,      .noStateChange,              push: no),
        Row(.nonePendingOut,   yes,     .becomes(.none),             push: yes),
        Row(.nonePendingIn,    no,      .noStateChange,              push: no),
        Row(.nonePendingOutIn, yes,     .becomes(.nonePendingIn),    push: yes),
        Row(.to,               yes,     .becomes(.none),             push: yes),
        Row(.toPendingIn,      yes,     .becomes(.nonePendingIn),    push: yes),
        Row(.from,             no,      .noStateChange,              push: no),
        Row(.fromPendingOut,   yes,     .becomes(.from),             push: yes),
        Row(.both,             yes,     .becomes(.from),             push: yes),
    ]

    // MARK: The tests

    @Test("A.2.1 outbound subscribe", arguments: outboundSubscribe)
    func a21(row: Row) { row.check(row.existing.outboundSubscribe()) }

    @Test("A.2.2 outbound unsubscribe", arguments: outboundUnsubscribe)
    func a22(row: Row) { row.check(row.existing.outboundUnsubscribe()) }

    @Test("A.2.3 outbound subscribed", arguments: outboundSubscribed)
    func a23(row: Row) { row.check(row.existing.outboundSubscribed()) }

    @Test("A.2.4 outbound unsubscribed", arguments: outboundUnsubscribed)
    func a24(row: Row) { row.check(row.existing.outboundUnsubscribed()) }

    @Test("A.3.1 inbound subscribe", arguments: inboundSubscribe)
    func a31(row: Row) { row.check(row.existing.inboundSubscribe()) }

    @Test("A.3.2 inbound unsubscribe", arguments: inboundUnsubscribe)
    func a32(row: Row) { row.check(row.existing.inboundUnsubscribe()) }

    @Test("A.3.3 inbound subscribed", arguments: inboundSubscribed)
    func a33(row: Row) { row.check(row.existing.inboundSubscribed()) }

    @Test("A.3.4 inbound unsubscribed", arguments: inboundUnsubscribed)
    func a34(row: Row) { row.check(row.existing.inboundUnsubscribed()) }

    /// Each table has one row per defined state, in the order of A.1.
    @Test func everyTableCoversTheNineStatesInOrder() {
        let tables = [
            Self.outboundSubscribe, Self.outboundUnsubscribe, Self.outboundSubscribed,
            Self.outboundUnsubscribed, Self.inboundSubscribe, Self.inboundUnsubscribe,
            Self.inboundSubscribed, Self.inboundUnsubscribed,
        ]
        for table in tables {
            #expect(table.map(\.existing) == SubscriptionState.definedStates)
        }
    }
}

private let yes = true
private let no = false

extension SubscriptionTableTests {
    /// The "NEW STATE" column.
    enum NewState: Sendable {
        /// "no state change".
        case noStateChange
        /// The named state.
        case becomes(SubscriptionState)
        /// No change among the nine states, but the pre-approval of §3.4.2 is
        /// noted (the `approved` flag of the item).
        case preApprovalNoted
    }

    /// One row of an Appendix A table.
    struct Row: Sendable, CustomTestStringConvertible {
        let existing: SubscriptionState
        let forward: Bool
        let newState: NewState
        let push: Bool
        let reply: Presence.PresenceType?
        let presence: Presence.PresenceType?

        init(
            _ existing: SubscriptionState, _ forward: Bool, _ newState: NewState, push: Bool,
            reply: Presence.PresenceType? = nil, presence: Presence.PresenceType? = nil
        ) {
            self.existing = existing
            self.forward = forward
            self.newState = newState
            self.push = push
            self.reply = reply
            self.presence = presence
        }

        var testDescription: String { "\"\(existing)\"" }

        var expectedState: SubscriptionState {
            switch newState {
            case .noStateChange: existing
            case .becomes(let state): state
            case .preApprovalNoted: SubscriptionState(
                    existing.subscription, pendingOut: existing.pendingOut,
                    pendingIn: existing.pendingIn, preApproved: true)
            }
        }

        func check(_ outcome: SubscriptionState.Outcome) {
            #expect(outcome.forward == forward, "ROUTE?/DELIVER?")
            #expect(outcome.state == expectedState, "NEW STATE")
            #expect(outcome.rosterPush == push, "roster push")
            #expect(outcome.autoReply == reply, "auto-reply")
            #expect(outcome.presenceToContact == presence, "presence to contact")
        }
    }
}
