import Synchronization
import XMPPCore
import XMPPStorage

extension MessageArchive {
    /// The most JIDs in one preference list.
    static let maxPreferenceJIDs = 1000

    /// Sets the user's preferences (XEP-0441 §2.1) and answers with them.
    func setPreferences(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let preferences = try Self.preferences(from: request.iq.payload!)
        let policy = policy
        return .afterStorage({ stores in
            try stores.archive.setPreferences(preferences, of: username)
            policy.set(preferences, for: username)
        }) { .result(preferences.element) }
    }

    /// Reloads a user's preferences when a session binds, in case the
    /// account was deleted and made again, or changed by another process.
    func refreshPreferences(of session: ClientSession) {
        guard let username = session.username else { return }
        let policy = policy
        session.server.storage.submit({ stores in
            policy.set(try stores.archive.preferences(of: username), for: username)
        }, completion: { _ in })
    }

    /// Reads a `<prefs/>` of a set.
    ///
    /// - Throws: `bad-request` for a missing or unknown `default` or an
    ///   invalid JID, `not-acceptable` for an overlong list.
    static func preferences(from prefs: Element) throws(StanzaError) -> ArchivePreferences {
        guard let rule = prefs[attribute: "default"].flatMap(ArchivePreferences.Default.init(rawValue:)) else {
            throw StanzaError(.badRequest, text: "'default' must be always, never or roster")
        }
        func list(_ name: String) throws(StanzaError) -> [String] {
            var jids: [String] = []
            var seen: Set<String> = []
            for element in prefs.child(name)?.elements ?? [] where element.name == "jid" {
                guard let jid = try? JID(element.text) else {
                    throw StanzaError(.badRequest, text: "'\(element.text)' is not a JID")
                }
                guard seen.insert(jid.description).inserted else { continue }
                guard jids.count < maxPreferenceJIDs else {
                    throw StanzaError(.notAcceptable, text: "at most \(maxPreferenceJIDs) JIDs in <\(name)/>")
                }
                jids.append(jid.description)
            }
            return jids
        }
        return ArchivePreferences(defaultRule: rule, always: try list("always"), never: try list("never"))
    }
}

extension ArchivePreferences {
    /// The `<prefs/>` element (XEP-0441 §2.1): `<always/>` and `<never/>`
    /// are always present, even empty.
    var element: Element {
        func list(_ name: String, _ jids: [String]) -> Element {
            Element(name, namespace: NS.mam, children: jids.map { .element(Element("jid", namespace: NS.mam, children: [.text($0)])) })
        }
        return Element(
            "prefs", namespace: NS.mam, attributes: ["default": defaultRule.rawValue],
            children: [.element(list("always", always)), .element(list("never", never))])
    }
}

/// Every user's archiving preferences, in memory, so that routing decides
/// without a storage round trip. Only users who set preferences have an
/// entry; the others follow `mam_default`. Loaded at start, changed in the
/// storage jobs that write them (so it never disagrees with the store for
/// longer than a job), reloaded when a user's session binds.
///
/// Shared by every loop, so guarded by a mutex held only for a lookup.
final class ArchivePolicy: Sendable {
    /// What to do with one archive's copy of a message.
    enum Decision: Equatable {
        /// Keep it.
        case archive
        /// Keep it if the peer's bare JID is in the owner's roster, which
        /// the storage thread checks.
        case ifInRoster
        /// Do not keep it.
        case skip
    }

    /// Preferences with their lists as JIDs, ready to match.
    private struct Rules: Sendable {
        let preferences: ArchivePreferences
        let always: Set<JID>
        let never: Set<JID>

        init(_ preferences: ArchivePreferences) {
            self.preferences = preferences
            always = Set(preferences.always.compactMap { try? JID($0) })
            never = Set(preferences.never.compactMap { try? JID($0) })
        }
    }

    private let defaultRule: ArchivePreferences.Default
    private let rules = Mutex<[String: Rules]>([:])

    init(defaultRule: ArchivePreferences.Default) {
        self.defaultRule = defaultRule
    }

    /// The preferences `username` sees: stored ones, or the default.
    func preferences(of username: String) -> ArchivePreferences {
        rules.withLock { $0[username]?.preferences } ?? ArchivePreferences(defaultRule: defaultRule)
    }

    /// Whether `owner`'s archive keeps a message with `peer` (XEP-0441
    /// §2.3): a listed full JID matches itself, a listed bare JID any of
    /// its resources; `never` wins over `always`, then the default rule.
    func decision(for owner: String, with peer: JID) -> Decision {
        guard let rules = rules.withLock({ $0[owner] }) else { return Self.decision(defaultRule) }
        if rules.never.contains(peer) || rules.never.contains(peer.bare) { return .skip }
        if rules.always.contains(peer) || rules.always.contains(peer.bare) { return .archive }
        return Self.decision(rules.preferences.defaultRule)
    }

    private static func decision(_ rule: ArchivePreferences.Default) -> Decision {
        switch rule {
        case .always: .archive
        case .never: .skip
        case .roster: .ifInRoster
        }
    }

    /// Records `username`'s preferences; `nil` forgets them.
    func set(_ preferences: ArchivePreferences?, for username: String) {
        let compiled = preferences.map(Rules.init)
        rules.withLock { $0[username] = compiled }
    }

    /// Replaces every entry, with the store's.
    func replaceAll(_ all: [String: ArchivePreferences]) {
        let compiled = all.mapValues(Rules.init)
        rules.withLock { $0 = compiled }
    }
}
