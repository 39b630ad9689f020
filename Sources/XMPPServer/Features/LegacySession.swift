import XMPPCore

/// RFC 3921 §3: session establishment, obsolete since RFC 6121 but still
/// sent by XMPPFramework after binding. We offer it as `<optional/>`
/// (RFC 6121 Appendix E) and answer it with an empty result.
public struct LegacySession: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.onIQ(.set, NS.session, "session", to: [.host, .account]) { _ in
            .result()
        }
    }
}
