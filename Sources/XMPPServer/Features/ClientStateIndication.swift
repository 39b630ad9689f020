import XMPPCore

/// XEP-0352: Client State Indication. A client says whether its user is
/// looking (`<active/>`) or not (`<inactive/>`); the server records it.
///
/// XMPPFramework apps send these without checking the stream feature, and
/// an unknown top-level element would end the stream, so they are always
/// accepted. Holding back presence for inactive clients (the point of the
/// hint) is not done yet: messages and presence flow as for active ones.
public struct ClientStateIndication: ServerFeature {
    public init() {}

    public func install(_ hooks: inout Hooks) {
        hooks.streamFeature { session in
            session.phase == .authenticated ? Element("csi", namespace: NS.csi) : nil
        }
        hooks.onNonza(NS.csi, "active") { _, session in session.isInactive = false }
        hooks.onNonza(NS.csi, "inactive") { _, session in session.isInactive = true }
    }
}
