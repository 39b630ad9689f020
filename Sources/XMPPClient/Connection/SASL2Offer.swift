import XMPPCore

/// What a stream's features offer for an XEP-0388 (SASL2) login: the
/// mechanisms, the XEP-0440 channel-binding types, and what may be done
/// inline in the `<authenticate/>` request (XEP-0386 Bind 2, XEP-0198
/// resumption, XEP-0484 FAST).
struct SASL2Offer: Sendable, Hashable {
    /// The SASL mechanisms of `<authentication/>`, in the server's order.
    var mechanisms: [String]
    /// The channel-binding types of `<sasl-channel-binding/>`; `nil` when
    /// the features have none (then only `tls-server-end-point` is assumed,
    /// XEP-0440 §4).
    var channelBindings: [String]?
    /// Whether Bind 2 may be requested inline.
    var bind: Bool
    /// The features Bind 2 can enable inline, by namespace (carbons,
    /// stream management, …).
    var bindFeatures: Set<String>
    /// Whether a stream-management session may be resumed inline.
    var resume: Bool
    /// The FAST mechanisms tokens may be issued and used for.
    var fastMechanisms: [FASTMechanism]

    /// The offer in `features`; `nil` when they offer no SASL2.
    init?(_ features: Element) {
        guard let authentication = features.child("authentication", namespace: NS.sasl2) else { return nil }
        mechanisms = authentication.elements.filter { $0.name == "mechanism" }.map(\.text)
        channelBindings = features.child("sasl-channel-binding", namespace: NS.saslChannelBinding).map {
            $0.elements.filter { $0.name == "channel-binding" }.compactMap { $0[attribute: "type"] }
        }
        let inline = authentication.child("inline", namespace: NS.sasl2)
        let bind = inline?.child("bind", namespace: NS.bind2)
        self.bind = bind != nil
        bindFeatures = Set(
            bind?.child("inline", namespace: NS.bind2)?.elements
                .filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] } ?? [])
        resume = inline?.child("sm", namespace: NS.sm) != nil
        fastMechanisms =
            inline?.child("fast", namespace: NS.fast)?.elements
            .filter { $0.name == "mechanism" }.compactMap { FASTMechanism(rawValue: $0.text) } ?? []
    }

    /// What the stream advertised, for the XEP-0474 check of SCRAM.
    var advertisement: SCRAMDowngradeProtection.Advertisement {
        .init(mechanisms: mechanisms, channelBindings: channelBindings)
    }

    /// Whether the server takes channel binding of `type`: any type it
    /// lists, or `tls-server-end-point` when it lists none.
    func acceptsChannelBinding(_ type: ChannelBindingType) -> Bool {
        channelBindings?.contains(type.rawValue) ?? (type == .tlsServerEndPoint)
    }
}
