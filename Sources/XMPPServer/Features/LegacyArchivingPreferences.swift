import XMPPCore

/// XEP-0136 (Message Archiving) is not implemented. Not advertised.
///
/// COMPAT: XMPPFramework: it asks for the preferences after login and
/// keeps archiving locally on an error, so the request gets an explicit
/// `feature-not-implemented`: the namespace is known, the feature is not
/// there (RFC 6120 §8.3.3.3).
public struct LegacyArchivingPreferences: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        for type in [IQ.IQType.get, .set] {
            hooks.onIQ(type, NS.archive, "pref", to: [.account]) { _ in
                throw StanzaError(.featureNotImplemented, text: "message archiving (XEP-0136) is not supported")
            }
        }
    }
}
