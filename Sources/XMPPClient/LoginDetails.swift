import XMPPCore

/// How the client proved who it is on the current connection: the SASL
/// profile, the mechanism, and the TLS channel binding, for a user or an
/// operator who wants to see that the strongest login was used.
public struct LoginDetails: Sendable, Hashable {
    /// The SASL framing the login ran in.
    public enum Profile: String, Sendable, Hashable {
        /// XEP-0388 Extensible SASL Profile (`urn:xmpp:sasl:2`).
        case sasl2 = "SASL2"
        /// RFC 6120 §6 SASL, followed by a stream restart.
        case rfc6120 = "RFC 6120 SASL"
    }

    /// The SASL framing.
    public var profile: Profile
    /// The mechanism's registered name: `SCRAM-SHA-256-PLUS`,
    /// `HT-SHA-256-EXPR`, `PLAIN`, …
    public var mechanism: String
    /// The channel binding the exchange covered; `nil` when it covered
    /// none.
    public var channelBinding: ChannelBindingType?
    /// Whether the server's XEP-0474 hash confirmed the mechanisms and
    /// channel-binding types we saw are those it advertised.
    public var downgradeProtected: Bool
    /// Whether the login used a FAST token (XEP-0484) instead of the
    /// password or SCRAM keys.
    public var usedToken: Bool

    /// Login details as described by their parts.
    public init(
        profile: Profile, mechanism: String, channelBinding: ChannelBindingType?, downgradeProtected: Bool,
        usedToken: Bool
    ) {
        self.profile = profile
        self.mechanism = mechanism
        self.channelBinding = channelBinding
        self.downgradeProtected = downgradeProtected
        self.usedToken = usedToken
    }
}

extension LoginDetails: CustomStringConvertible {
    /// One line, such as `SASL2, SCRAM-SHA-256-PLUS with tls-exporter,
    /// downgrade-protected`.
    public var description: String {
        var text = "\(profile.rawValue), \(mechanism)"
        text += channelBinding.map { " with \($0.rawValue)" } ?? " without channel binding"
        if downgradeProtected { text += ", downgrade-protected (XEP-0474)" }
        return text
    }
}
