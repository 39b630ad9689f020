import XMPPCore

/// XEP-0357 push notifications: telling our server whom to ask to wake
/// this device when messages arrive while the app is suspended. The
/// server keeps the session meanwhile (enable stream management with
/// resumption, as the kit does by default) and the app resumes it.
extension XMPPClient {
    /// Asks the server to announce messages for this account to `service`
    /// at `node` (XEP-0357 §5), with `options` as the publish options the
    /// service gets back with each notification (a secret, a token),
    /// which the server shows to no one else. Enabling the same service
    /// and node again replaces the options.
    /// - Throws: `.stanzaError` when the server refuses (a service it
    ///   cannot reach: `remote-server-not-found`; too many enabled:
    ///   `resource-constraint`), `.notConnected`, `.timedOut`.
    public func enablePush(service: JID, node: String, options: [String: String] = [:]) async throws(XMPPClientError) {
        var enable = Element("enable", namespace: NS.push, attributes: ["jid": service.description, "node": node])
        if !options.isEmpty {
            let fields = [DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.pubsubPublishOptions])]
                + options.sorted { $0.key < $1.key }.map { DataForm.Field($0.key, values: [$0.value]) }
            enable.append(DataForm(type: "submit", fields: fields).element)
        }
        _ = try await request(.set, payload: enable)
    }

    /// Enables the server's built-in Apple push service (`apns.DOMAIN`
    /// unless the server names another) for this device: pass the device
    /// token the app delegate got from
    /// `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`
    /// as it is.
    public func enableApplePush(deviceToken: some Sequence<UInt8>, service: JID? = nil) async throws(XMPPClientError) {
        let node = Hex.encode(deviceToken)
        let apns: JID
        do {
            apns = try service ?? JID("apns.\(account.domainpart)")
        } catch {
            throw .invalidRequest("no push service address for \(account.domainpart)")
        }
        try await enablePush(service: apns, node: node)
    }

    /// Stops announcements to `service`: to `node` only, or to all its
    /// nodes when nil (XEP-0357 §6). Call it when the user logs out.
    public func disablePush(service: JID, node: String? = nil) async throws(XMPPClientError) {
        var disable = Element("disable", namespace: NS.push, attributes: ["jid": service.description])
        if let node { disable[attribute: "node"] = node }
        _ = try await request(.set, payload: disable)
    }
}
