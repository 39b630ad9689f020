import Foundation
import XMPPCore

/// A token the server issued for XEP-0484 (FAST) logins: one round trip,
/// no password or SCRAM keys, bound to this client's user-agent id
/// (``ClientConfiguration/userAgentID``) and to the mechanism it was asked
/// for.
///
/// It is as good as a password until it expires or is invalidated
/// (``XMPPClient/logOut()``), so `description` leaves it out.
public struct FASTToken: Sendable, Hashable {
    /// The token as the server sent it; the HMAC key is its UTF-8.
    public var token: String
    /// The Hashed Token mechanism the server issued it for.
    public var mechanism: FASTMechanism
    /// When the server stops accepting it.
    public var expiry: Date

    /// A token as the server issued it.
    public init(token: String, mechanism: FASTMechanism, expiry: Date) {
        self.token = token
        self.mechanism = mechanism
        self.expiry = expiry
    }

    /// The token of `element`, a `<token xmlns='urn:xmpp:fast:0'/>` for
    /// `mechanism`; `nil` without a token or a XEP-0082 expiry.
    init?(_ element: Element, mechanism: FASTMechanism) {
        guard element.name == "token", element.namespace == NS.fast,
            let token = element[attribute: "token"], !token.isEmpty,
            let expiry = element[attribute: "expiry"].flatMap(Self.date(from:))
        else { return nil }
        self.init(token: token, mechanism: mechanism, expiry: expiry)
    }

    /// The expiry as an XEP-0082 DateTime.
    var expiryText: String {
        DateTimeProfile.string(millisecondsSince1970: Int((expiry.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// The time an XEP-0082 DateTime names; `nil` for anything else.
    static func date(from text: String) -> Date? {
        DateTimeProfile.milliseconds(from: text).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}

extension FASTToken: CustomStringConvertible, CustomReflectable {
    /// The mechanism and expiry; never the token.
    public var description: String {
        "FASTToken(\(mechanism.rawValue), expires \(expiry), token: <redacted>)"
    }

    public var customMirror: Mirror { Mirror(self, children: ["mechanism": mechanism, "expiry": expiry]) }
}
