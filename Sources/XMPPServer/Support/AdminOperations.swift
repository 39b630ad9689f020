import Foundation
import XMPPCore
import XMPPNet

/// What the server's administrators can do to accounts and sessions, for
/// every admin front end: the ad-hoc commands (XEP-0133, `AdHocCommands`)
/// and a web page.
///
/// Runs on the server's loop; each operation completes later, on the loop,
/// never inside the call. Deleting an account and changing a password go
/// through the paths in-band registration and `swiftletd deluser`/`passwd`
/// take (`ServerContext.deleteAccount`, `AccountService.changePassword`,
/// `revokeSessions`), so sessions end and FAST tokens go the same way.
///
/// Accounts are named as admins name them: `alice` or `alice@localhost`.
/// Failures an admin can correct are `AdminOperationError`s; anything else
/// (storage) is passed on as it came.
public struct AdminOperations {
    private let server: ServerContext

    /// The operations on `server`'s accounts and sessions.
    public init(server: ServerContext) {
        self.server = server
    }

    /// How many accounts there are.
    public func accountCount(_ completion: @escaping (Result<Int, any Error>) -> Void) {
        server.storage.run(on: server.loop, { try $0.accounts.accountCount() }, then: completion)
    }

    /// Every account's bare JID, sorted by username.
    public func accounts(_ completion: @escaping (Result<[JID], any Error>) -> Void) {
        let domain = server.domain
        server.storage.run(
            on: server.loop, { stores in try stores.accounts.usernames().map { try JID(localpart: $0, domainpart: domain) } },
            then: completion)
    }

    /// Every bound session (detached ones waiting for resumption
    /// included), sorted by JID.
    public func onlineSessions(_ completion: @escaping ([OnlineSession]) -> Void) {
        let handles = server.sessions.all
        let collected = LoopBound(SessionCollector(count: handles.count, completion), on: server.loop)
        guard !handles.isEmpty else { return server.loop.execute { collected.wrapped.finish() } }
        for (index, handle) in handles.enumerated() {
            handle.withSession { session in
                let found = OnlineSession(session)
                collected.loop.execute { collected.wrapped.add(found, at: index) }
            }
        }
    }

    /// Creates an account.
    /// - Parameter completion: The account's bare JID, or an
    ///   `AdminOperationError` when the name or password is unusable or
    ///   the account exists.
    public func addAccount(
        _ account: String, password: String, _ completion: @escaping (Result<JID, any Error>) -> Void
    ) {
        onAccount(account, password: password, completion, ifNot: { AdminOperationError(.exists, "\($0) already exists") }) {
            [server] username, jid, done in
            server.accounts.register(username: username, password: password, on: server.loop) { result in
                if case .success(true) = result { server.log.info("admin: account \(jid) added") }
                done(result)
            }
        }
    }

    /// Deletes an account with everything stored for it, ends its
    /// sessions and tells its contacts (`ServerContext.deleteAccount`).
    /// - Parameter completion: The account's bare JID, or an
    ///   `AdminOperationError` when there is no such account.
    public func deleteAccount(_ account: String, _ completion: @escaping (Result<JID, any Error>) -> Void) {
        onAccount(account, completion, ifNot: Self.noAccount) { [server] username, _, done in
            server.deleteAccount(username, then: done)
        }
    }

    /// Sets a new password, which ends the account's FAST tokens, then
    /// ends its sessions but `keeping` (the admin's own, when an admin
    /// changes their own password), as XEP-0077 does.
    /// - Parameter completion: The account's bare JID, or an
    ///   `AdminOperationError` when the password is unusable or there is no
    ///   such account.
    public func resetPassword(
        _ account: String, password: String, keeping: ClientSession? = nil,
        _ completion: @escaping (Result<JID, any Error>) -> Void
    ) {
        onAccount(account, password: password, completion, ifNot: Self.noAccount) { [server] username, jid, done in
            server.accounts.changePassword(username: username, password: password, on: server.loop) { result in
                if case .success(true) = result {
                    server.log.info("admin: password of \(jid) changed")
                    server.revokeSessions(of: username, except: keeping, because: "the password was changed")
                }
                done(result)
            }
        }
    }

    /// Ends the sessions of an account (`alice@localhost`: all of them,
    /// and a session that authenticated but has not bound yet cannot
    /// bind), or the one session of a full JID (`alice@localhost/phone`),
    /// with the stream error `not-authorized` (XEP-0133 §4.5).
    /// - Parameter completion: How many bound sessions were ended, or an
    ///   `AdminOperationError` for a name that is no account of the domain.
    public func endSessions(of account: String, _ completion: @escaping (Result<Int, any Error>) -> Void) {
        let reason = "an administrator ended the session"
        do {
            if let full = try? JID(account), full.resourcepart != nil, full.domainpart == server.domain {
                let handle = server.sessions.session(full)
                handle?.withSession { $0.fail(StreamError(.notAuthorized, text: reason)) }
                return later(completion, .success(handle == nil ? 0 : 1))
            }
            let username = try self.username(account)
            let ended = server.sessions.sessions(of: try JID(localpart: username, domainpart: server.domain)).count
            server.revokeSessions(of: username, because: reason)
            server.log.info("admin: \(ended) session(s) of \(username)@\(server.domain) ended")
            later(completion, .success(ended))
        } catch {
            later(completion, .failure(error))
        }
    }

    /// Sends `text` as a message from the server to every bound session
    /// (XEP-0133 §4.23).
    /// - Parameter completion: How many sessions it went to.
    public func announce(_ text: String, _ completion: @escaping (Result<Int, any Error>) -> Void) {
        let handles = server.sessions.all
        for handle in handles {
            var message = Element("message", namespace: NS.client, attributes: ["from": server.domain, "to": handle.jid.description])
            message.append(Element("body", namespace: NS.client, children: [.text(text)]))
            handle.deliver(message)
        }
        server.log.info("admin: announcement sent to \(handles.count) session(s)")
        later(completion, .success(handles.count))
    }

    /// Runs `operation` on the account `account` names (with `password`
    /// checked first, when given), and completes with the account's bare
    /// JID when it reports `true`, with `ifNot` when it reports `false`; an
    /// unusable name or password completes with why, in a later loop turn.
    private func onAccount(
        _ account: String, password: String? = nil, _ completion: @escaping (Result<JID, any Error>) -> Void,
        ifNot refusal: @escaping (JID) -> AdminOperationError,
        _ operation: (_ username: String, _ jid: JID, _ done: @escaping (Result<Bool, any Error>) -> Void) -> Void
    ) {
        let jid: JID
        do {
            jid = try JID(localpart: try username(account), domainpart: server.domain)
            if let password { try Self.check(password) }
        } catch {
            return later(completion, .failure(error))
        }
        operation(jid.localpart!, jid) { result in
            completion(result.flatMap { done in done ? .success(jid) : .failure(refusal(jid)) })
        }
    }

    /// The username of `account`.
    private func username(_ account: String) throws(AdminOperationError) -> String {
        do {
            return try Username.of(account: account, domain: server.domain)
        } catch {
            throw AdminOperationError(.invalid, error.text ?? "invalid account \(account)")
        }
    }

    private static func check(_ password: String) throws(AdminOperationError) {
        do {
            try Username.checkPassword(password)
        } catch {
            throw AdminOperationError(.invalid, error.text ?? "invalid password")
        }
    }

    private static func noAccount(_ jid: JID) -> AdminOperationError {
        AdminOperationError(.notFound, "no account \(jid)")
    }

    /// Completes with `result` in a later loop turn, as every operation does.
    private func later<Value>(_ completion: @escaping (Result<Value, any Error>) -> Void, _ result: Result<Value, any Error>) {
        let bound = LoopBound({ completion(result) }, on: server.loop)
        server.loop.execute { bound.wrapped() }
    }
}

/// A bound session as an administrator sees it.
public struct OnlineSession: Sendable, Equatable {
    /// The full JID.
    public var jid: JID
    /// The client software the client named when it logged in (SASL2), if
    /// any.
    public var clientSoftware: String?
    /// The client's address and port.
    public var peerAddress: String
    /// When the connection was accepted.
    public var since: Date
    /// Whether the stream is encrypted (STARTTLS or direct TLS).
    public var isSecure: Bool
    /// Whether stream management (XEP-0198) is on.
    public var streamManagement: Bool
    /// Whether the connection is gone and the session waits to be resumed.
    public var isDetached: Bool

    /// The resource.
    public var resource: String { jid.resourcepart ?? "" }

    /// What `session` shows; call on its loop.
    init(_ session: ClientSession) {
        jid = session.jid!
        clientSoftware = session.clientSoftware
        peerAddress = session.transport?.peerAddress ?? session.peerHost
        since = session.connectedAt
        isSecure = session.tls != nil
        streamManagement = session.streamManagement != nil
        isDetached = session.isDetached
    }
}

/// An admin operation refused for a reason the admin can correct.
public struct AdminOperationError: Error, StanzaErrorConvertible, CustomStringConvertible {
    /// Why.
    public enum Reason: Sendable {
        /// The name or password is unusable (`not-acceptable`).
        case invalid
        /// The account already exists (`conflict`).
        case exists
        /// There is no such account (`item-not-found`).
        case notFound
    }

    public let reason: Reason
    /// What went wrong, for the admin.
    public let description: String

    init(_ reason: Reason, _ description: String) {
        self.reason = reason
        self.description = description
    }

    public var stanzaError: StanzaError {
        switch reason {
        case .invalid: StanzaError(.notAcceptable, text: description)
        case .exists: StanzaError(.conflict, text: description)
        case .notFound: StanzaError(.itemNotFound, text: description)
        }
    }
}

/// Gathers the sessions' answers on the loop, in the order asked, and
/// completes once all are in.
private final class SessionCollector {
    private var found: [OnlineSession?]
    private var missing: Int
    private let completion: ([OnlineSession]) -> Void

    init(count: Int, _ completion: @escaping ([OnlineSession]) -> Void) {
        found = Array(repeating: nil, count: count)
        missing = count
        self.completion = completion
    }

    func add(_ session: OnlineSession, at index: Int) {
        found[index] = session
        missing -= 1
        if missing == 0 { finish() }
    }

    func finish() {
        completion(found.compactMap { $0 })
    }
}
