import XMPPCore

/// XEP-0157: Contact Addresses for XMPP Services. The server's disco#info
/// carries a `http://jabber.org/network/serverinfo` form with the
/// `contact_*` addresses of the config, one `list-multi` field per kind
/// that is set (`abuse-addresses`, `admin-addresses`…); with none set,
/// nothing is added.
public struct ContactAddresses: ServerFeature {
    private let contact: ServerConfig.Contact

    /// The feature publishing `contact`.
    public init(_ contact: ServerConfig.Contact) {
        self.contact = contact
    }

    public func install(_ hooks: Hooks) {
        let kinds = contact.kinds
        guard !kinds.isEmpty else { return }
        let form = DataForm(
            type: "result",
            fields: [DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.serverInfo])]
                + kinds.map { DataForm.Field("\($0.name)-addresses", type: "list-multi", values: $0.addresses) })
        hooks.advertiseForm(form.element)
    }
}
