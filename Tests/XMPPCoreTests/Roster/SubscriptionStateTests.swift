import Testing

@testable import XMPPCore

/// Pre-approval (RFC 6121 §3.4), the state invariants, and two servers
/// talking through the transitions.
@Suite struct SubscriptionStateTests {
    // MARK: Names and validity (Appendix A.1)

    @Test func definedStatesCarryTheRFCNames() {
        #expect(
            SubscriptionState.definedStates.map(\.description) == [
                "None", "None + Pending Out", "None + Pending In", "None + Pending Out+In",
                "To", "To + Pending In", "From", "From + Pending Out", "Both",
            ])
        #expect(preApproved(.to).description == "To (pre-approved)")
    }

    /// A.1: `ask='subscribe'` shows in exactly these three states.
    @Test func pendingOutIsTheAskAttribute() {
        let asking = SubscriptionState.definedStates.filter(\.pendingOut)
        #expect(asking == [.nonePendingOut, .nonePendingOutIn, .fromPendingOut])
    }

    @Test func validStatesAreTheNinePlusThreePreApproved() {
        let valid = allCombinations.filter(\.isValid)
        let expected =
            SubscriptionState.definedStates
            + [preApproved(.none), preApproved(.nonePendingOut), preApproved(.to)]
        #expect(Set(valid) == Set(expected))
        #expect(valid.count == 12)
    }

    // MARK: Properties over every valid state

    @Test(arguments: Transition.allCases)
    func everyTransitionKeepsValidStatesValid(transition: Transition) {
        for state in allCombinations where state.isValid {
            let next = transition.apply(to: state).state
            #expect(next.isValid, "\(transition) in \"\(state)\" gave \"\(next)\"")
        }
    }

    @Test(arguments: Transition.allCases)
    func rosterPushOnlyWhenTheStateChanges(transition: Transition) {
        for state in allCombinations where state.isValid {
            let outcome = transition.apply(to: state)
            if outcome.rosterPush { #expect(outcome.state != state, "\(transition) in \"\(state)\"") }
        }
    }

    @Test(arguments: Transition.allCases)
    func onlyAnInboundSubscribeIsAnsweredByTheServer(transition: Transition) {
        for state in allCombinations where state.isValid {
            let reply = transition.apply(to: state).autoReply
            #expect(reply == nil || (transition == .inboundSubscribe && reply == .subscribed))
        }
    }

    // MARK: Pre-approval (§3.4)

    /// §3.4.2: in "None", "None + Pending Out" and "To" the server notes the
    /// pre-approval, pushes the item and does not route the stanza.
    @Test(arguments: [SubscriptionState.none, .nonePendingOut, .to])
    func outboundSubscribedPreApproves(state: SubscriptionState) {
        let outcome = state.outboundSubscribed()
        #expect(outcome.state == preApproved(state))
        #expect(!outcome.forward)
        #expect(outcome.rosterPush)
        #expect(outcome.presenceToContact == nil)
    }

    @Test func repeatedPreApprovalChangesNothing() {
        let outcome = preApproved(.none).outboundSubscribed()
        #expect(outcome.state == preApproved(.none))
        #expect(!outcome.forward && !outcome.rosterPush)
    }

    /// The contact's later request is approved by the server in the user's
    /// name and never reaches the user's clients.
    @Test(arguments: [
        (preApproved(.none), SubscriptionState.from),
        (preApproved(.nonePendingOut), .fromPendingOut),
        (preApproved(.to), .both),
    ])
    func preApprovedSubscribeIsAutoApproved(state: SubscriptionState, approved: SubscriptionState) {
        let outcome = state.inboundSubscribe()
        #expect(outcome.state == approved)
        #expect(!outcome.forward)
        #expect(outcome.rosterPush)
        #expect(outcome.autoReply == .subscribed)
        #expect(outcome.presenceToContact == .available)
    }

    /// §3.2.2: `unsubscribed` withdraws a pre-approval without being routed.
    @Test(arguments: [SubscriptionState.none, .nonePendingOut, .to])
    func outboundUnsubscribedWithdrawsPreApproval(state: SubscriptionState) {
        let outcome = preApproved(state).outboundUnsubscribed()
        #expect(outcome.state == state)
        #expect(!outcome.forward)
        #expect(outcome.rosterPush)
    }

    /// The user's own subscription coming and going leaves the pre-approval.
    @Test func preApprovalOutlivesTheUsersOwnSubscription() {
        var state = preApproved(.none)
        state = state.outboundSubscribe().state
        #expect(state == preApproved(.nonePendingOut))
        state = state.inboundSubscribed().state
        #expect(state == preApproved(.to))
        state = state.inboundUnsubscribed().state
        #expect(state == preApproved(.none))
    }

    // MARK: Two servers

    @Test func requestAndApprovalGiveToAndFrom() {
        var link = Link()
        link.romeo(sends: .subscribe)
        #expect(link.romeo == .nonePendingOut && link.juliet == .nonePendingIn)
        link.juliet(sends: .subscribed)
        #expect(link.romeo == .to && link.juliet == .from)
        link.juliet(sends: .subscribe)
        link.romeo(sends: .subscribed)
        #expect(link.romeo == .both && link.juliet == .both)
        link.romeo(sends: .unsubscribe)
        #expect(link.romeo == .from && link.juliet == .to)
        link.romeo(sends: .unsubscribed)
        #expect(link.romeo == .none && link.juliet == .none)
    }

    @Test func preApprovalAnswersTheRequestAtOnce() {
        var link = Link()
        link.juliet(sends: .subscribed)
        #expect(link.juliet == preApproved(.none) && link.romeo == .none)
        link.romeo(sends: .subscribe)
        #expect(link.romeo == .to && link.juliet == .from)
        #expect(link.delivered == ["romeo: subscribed"])
    }

    /// A.3.1's footnote: the server that lost nothing answers for the one
    /// that lost its state.
    @Test func repeatedRequestIsAnsweredByTheServer() {
        var link = Link(romeo: .none, juliet: .from)
        link.romeo(sends: .subscribe)
        #expect(link.romeo == .to && link.juliet == .from)
        #expect(link.delivered == ["romeo: subscribed"])
    }
}

extension SubscriptionStateTests {
    /// The eight functions, by stanza and direction.
    enum Transition: CaseIterable, Sendable {
        case outboundSubscribe, outboundUnsubscribe, outboundSubscribed, outboundUnsubscribed
        case inboundSubscribe, inboundUnsubscribe, inboundSubscribed, inboundUnsubscribed

        func apply(to state: SubscriptionState) -> SubscriptionState.Outcome {
            switch self {
            case .outboundSubscribe: state.outboundSubscribe()
            case .outboundUnsubscribe: state.outboundUnsubscribe()
            case .outboundSubscribed: state.outboundSubscribed()
            case .outboundUnsubscribed: state.outboundUnsubscribed()
            case .inboundSubscribe: state.inboundSubscribe()
            case .inboundUnsubscribe: state.inboundUnsubscribe()
            case .inboundSubscribed: state.inboundSubscribed()
            case .inboundUnsubscribed: state.inboundUnsubscribed()
            }
        }

        static func outbound(_ type: Presence.PresenceType) -> Transition {
            switch type {
            case .subscribe: .outboundSubscribe
            case .unsubscribe: .outboundUnsubscribe
            case .subscribed: .outboundSubscribed
            default: .outboundUnsubscribed
            }
        }

        static func inbound(_ type: Presence.PresenceType) -> Transition {
            switch type {
            case .subscribe: .inboundSubscribe
            case .unsubscribe: .inboundUnsubscribe
            case .subscribed: .inboundSubscribed
            default: .inboundUnsubscribed
            }
        }
    }
}

/// Romeo's and Juliet's servers, each keeping its account's state for the
/// other, joined by a link that loses nothing.
private struct Link {
    var romeo = SubscriptionState.none
    var juliet = SubscriptionState.none
    /// Subscription stanzas that reached a client, as "name: type".
    var delivered: [String] = []

    mutating func romeo(sends type: Presence.PresenceType) { send(type, from: \.romeo, to: \.juliet) }

    mutating func juliet(sends type: Presence.PresenceType) { send(type, from: \.juliet, to: \.romeo) }

    private mutating func send(_ type: Presence.PresenceType, from sender: Account, to receiver: Account) {
        let outbound = SubscriptionStateTests.Transition.outbound(type).apply(to: self[keyPath: sender])
        self[keyPath: sender] = outbound.state
        if outbound.forward { receive(type, at: receiver, from: sender) }
    }

    /// The receiving server's side; its own `subscribed` goes straight back.
    private mutating func receive(_ type: Presence.PresenceType, at receiver: Account, from sender: Account) {
        let inbound = SubscriptionStateTests.Transition.inbound(type).apply(to: self[keyPath: receiver])
        self[keyPath: receiver] = inbound.state
        if inbound.forward { delivered.append("\(receiver == \Link.romeo ? "romeo" : "juliet"): \(type)") }
        if let reply = inbound.autoReply { receive(reply, at: sender, from: receiver) }
    }

    typealias Account = WritableKeyPath<Link, SubscriptionState>
}

/// All 32 combinations of the four fields, valid or not.
private let allCombinations: [SubscriptionState] = SubscriptionState.Subscription.allCases.flatMap {
    subscription in
    [false, true].flatMap { pendingOut in
        [false, true].flatMap { pendingIn in
            [false, true].map { approved in
                SubscriptionState(
                    subscription, pendingOut: pendingOut, pendingIn: pendingIn, preApproved: approved)
            }
        }
    }
}

private func preApproved(_ state: SubscriptionState) -> SubscriptionState {
    var state = state
    state.preApproved = true
    return state
}
