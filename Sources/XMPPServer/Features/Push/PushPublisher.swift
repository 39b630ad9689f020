import Foundation
import Synchronization
import XMPPCore
import XMPPNet
import XMPPStorage

/// Sends push notifications (XEP-0357 §7) and hears their answers, for
/// every loop: which users have a registration at all (so that routing
/// asks storage for none of the others), and which notifications await an
/// answer from their push service.
///
/// The set of users changes only inside storage jobs, right after the
/// write that makes it true, so it follows the stored registrations in
/// storage order: a message stored after an `<enable/>` committed finds
/// its user in it.
final class PushPublisher: Sendable {
    /// A notification sent and not answered yet.
    private struct Pending {
        var username: String
        var target: PushTarget
        var deadline: ContinuousClock.Instant
    }

    private struct State {
        var users: Set<String> = []
        var pending: [String: Pending] = [:]
        /// The pending ids in the order they were sent, to expire them.
        var sent: [String] = []
        var sentHead = 0
    }

    /// How long a push service has to answer before its notification is
    /// forgotten (not counted as a failure).
    static let answerTimeout = Duration.seconds(60)
    /// Most notifications awaiting an answer; past it the oldest is
    /// forgotten, so an unanswering service cannot make the server hold
    /// more.
    static let maxPending = 10_000

    private let state = Mutex(State())
    /// The built-in APNs service's client, once the server has started.
    private let apns = Mutex<APNsClient?>(nil)

    /// Starts the built-in APNs service (`apns_key_file`), on the loop
    /// `server` runs on; logs why not if it cannot.
    func startAPNs(_ server: ServerContext) {
        let config = server.config
        guard config.push.apns.isEnabled, let loop = server.loop as? EventLoop else { return }
        do {
            let client = try APNsClient(
                settings: config.push.apns, endpoint: config.apnsEndpoint, log: server.log, on: loop)
            apns.withLock { $0 = client }
            server.log.notice("push service \(config.apnsService): APNs \(config.apnsEndpoint), topic \(config.push.apns.topic)")
        } catch {
            server.log.error("push service \(config.apnsService) is off: \(error)")
        }
    }

    /// Reads which users have registrations, once, at start.
    func loadUsers(_ server: ServerContext) {
        server.storage.run(on: server.loop, { [self] stores in
            let users = try stores.pushRegistrations.usernamesWithRegistrations()
            state.withLock { $0.users.formUnion(users) }
        }) { result in
            if case .failure(let error) = result { server.log.error("push registrations not read: \(error)") }
        }
    }

    /// Records, on the storage thread, that `username` has a registration.
    func userRegistered(_ username: String) {
        state.withLock { _ = $0.users.insert(username) }
    }

    /// Drops `username` from the users with registrations if it has none
    /// left; call on the storage thread, after the change.
    func forgetUnlessRegistered(_ username: String, _ stores: Stores) throws {
        guard try stores.pushRegistrations.registrations(of: username).isEmpty else { return }
        state.withLock { _ = $0.users.remove(username) }
    }

    /// Announces `notice` to the push services of `username`: only
    /// `target`, or all of them.
    func notify(
        _ username: String, of notice: Notice, only target: PushTarget? = nil, settings: ServerConfig.PushSettings,
        server: ServerContext
    ) {
        guard state.withLock({ $0.users.contains(username) }) else { return }
        server.storage.run(on: server.loop, { [self] stores in
            var registrations = try stores.pushRegistrations.registrations(of: username)
            if registrations.isEmpty { state.withLock { _ = $0.users.remove(username) } }
            if let target { registrations.removeAll { $0.service != target.service || $0.node != target.node } }
            guard !registrations.isEmpty else { return (registrations, PushSummary(sender: nil)) }
            var summary: PushSummary
            switch notice {
            case .message(let message, let count):
                summary = PushSummary(sender: message[attribute: "from"])
                summary.count = try count ?? stores.offline.count(for: username)
                if settings.includeBody { summary.body = Message(message)?.body }
            case .subscriptionRequest(let contact):
                summary = PushSummary(sender: contact.description)
                summary.pendingSubscriptions = try stores.roster.items(of: username).count(where: { $0.state.pendingIn })
            }
            return (registrations, summary)
        }) { [self] result in
            switch result {
            case .success(let (registrations, summary)):
                for registration in registrations {
                    publish(summary, to: registration, for: username, settings: settings, server: server)
                }
            case .failure(let error):
                server.log.error("push registrations of \(username) not read: \(error)")
            }
        }
    }

    /// Sends one notification to the component that is `registration`'s
    /// push service.
    private func publish(
        _ summary: PushSummary, to registration: PushRegistration, for username: String,
        settings: ServerConfig.PushSettings, server: ServerContext
    ) {
        if registration.service == server.config.apnsService {
            return sendToAPNs(summary, to: registration, for: username, settings: settings, server: server)
        }
        guard let service = try? JID(registration.service),
            let component = server.components.component(service.domainpart)
        else {
            server.log.info("push service \(registration.service) of \(username) is not connected; notification lost")
            return
        }
        let id = "push-" + Base64.encodeURLSafe(Crypto.randomBytes(count: 9))
        let target = PushTarget(service: registration.service, node: registration.node)
        let now = ContinuousClock.now
        let expired = state.withLock { state in
            let expired = Self.expire(&state, at: now)
            state.pending[id] = Pending(username: username, target: target, deadline: now + Self.answerTimeout)
            state.sent.append(id)
            return expired
        }
        for pending in expired {
            server.log.info("push service \(pending.target.service) of \(pending.username) did not answer")
        }
        var options: Element?
        if let xml = registration.publishOptions { options = StoredStanza.parse(xml) }
        component.deliver(
            PushSummary.publishRequest(
                summary, id: id, from: server.domain, to: registration.service, node: registration.node,
                publishOptions: options))
    }

    /// Sends one notification through the built-in APNs service, the
    /// registration's node being the device token.
    private func sendToAPNs(
        _ summary: PushSummary, to registration: PushRegistration, for username: String,
        settings: ServerConfig.PushSettings, server: ServerContext
    ) {
        guard let client = apns.withLock({ $0 }) else {
            server.log.info("push service \(registration.service) of \(username) is off; notification lost")
            return
        }
        let pushType = settings.apns.pushType
        let notification = APNsClient.Notification(
            deviceToken: registration.node, payload: summary.apnsPayload(pushType), pushType: pushType,
            collapseID: summary.collapseID)
        let target = PushTarget(service: registration.service, node: registration.node)
        // The answer comes on the APNs client's loop; the registration is
        // updated from the loop the notification came from.
        let origin = LoopBound(server, on: server.loop)
        client.send(notification) { [self] outcome in
            origin.execute { [self] server in
                switch outcome {
                case .delivered: record(.accepted, username, target, settings, server)
                case .unregistered(let reason): record(.gone(reason: reason), username, target, settings, server)
                // Apple unreachable, or refusing our key or topic: the
                // device's registration is not to blame (logged already).
                case .failed: break
                }
            }
        }
    }

    /// Takes the pending notifications past their deadline, or beyond
    /// `maxPending`, out of `state`.
    private static func expire(_ state: inout State, at now: ContinuousClock.Instant) -> [Pending] {
        var expired: [Pending] = []
        while state.sentHead < state.sent.count {
            let id = state.sent[state.sentHead]
            if let pending = state.pending[id] {
                guard pending.deadline <= now || state.pending.count >= maxPending else { break }
                expired.append(pending)
                state.pending[id] = nil
            }
            state.sentHead += 1
        }
        if state.sentHead > 1024, state.sentHead * 2 > state.sent.count {
            state.sent.removeFirst(state.sentHead)
            state.sentHead = 0
        }
        return expired
    }

    /// Takes a component's answer to a notification: an error counts
    /// against the registration (§7.1), a result clears its count.
    /// - Returns: Whether `iq` answered a notification.
    func answered(_ iq: IQ, settings: ServerConfig.PushSettings, server: ServerContext) -> Bool {
        guard let id = iq.id else { return false }
        let pending: Pending? = state.withLock { state in
            guard let pending = state.pending[id], iq.from?.description == pending.target.service else { return nil }
            state.pending[id] = nil
            return pending
        }
        guard let pending else { return false }
        record(iq.type == .error ? .refused : .accepted, pending.username, pending.target, settings, server)
        return true
    }

    /// How a push service took a notification.
    enum Answer {
        /// It took it: the registration's failures are forgotten.
        case accepted
        /// It refused it: one more failure in a row (§7.1).
        case refused
        /// The device is gone (APNs: the token is no longer valid): the
        /// registration is removed at once.
        case gone(reason: String)
    }

    /// Updates the registration `target` of `username` after `answer`.
    private func record(
        _ answer: Answer, _ username: String, _ target: PushTarget, _ settings: ServerConfig.PushSettings,
        _ server: ServerContext
    ) {
        let limit = settings.maxFailures
        server.storage.run(on: server.loop, { [self] stores -> Int in
            let registrations = stores.pushRegistrations
            switch answer {
            case .accepted:
                try registrations.clearFailures(service: target.service, node: target.node, of: username)
                return 0
            case .refused:
                let failures = try registrations.recordFailure(
                    service: target.service, node: target.node, of: username, limit: limit)
                if failures >= limit { try forgetUnlessRegistered(username, stores) }
                return failures
            case .gone:
                try registrations.remove(service: target.service, node: target.node, of: username)
                try forgetUnlessRegistered(username, stores)
                return limit
            }
        }) { result in
            switch (result, answer) {
            case (.success, .gone(let reason)):
                server.log.notice("push service \(target.service) of \(username): the device is gone (\(reason)); disabled")
            case (.success(let failures), _) where failures >= limit:
                server.log.notice("push service \(target.service) of \(username) refused \(failures) in a row; disabled")
            case (.success(let failures), _) where failures > 0:
                server.log.info("push service \(target.service) of \(username) refused a notification (\(failures) in a row)")
            case (.success, _):
                break
            case (.failure(let error), _):
                server.log.error("push registration of \(username) not updated: \(error)")
            }
        }
    }
}
