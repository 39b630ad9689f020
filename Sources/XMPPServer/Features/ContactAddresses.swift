import XMPPCore

/// XEP-0157: Contact Addresses for XMPP Services. The server's disco#info
/// carries a `http://jabber.org/network/serverinfo` form with the
/// `contact_*` addresses of the config, one `list-multi` field per kind
/// that is set (`abuse-addresses`, `admin-addresses`…); with none set,
/// nothing is added.
public struct ContactAddresses: ServerFeature {
    /// The form's `FORM_TYPE` (XEP-0157 §4).
    static let formType = "http://jabber.org/network/serverinfo"

    private let contact: ServerConfig.Contact

    /// The feature publishing `contact`.
    public init(_ contact: ServerConfig.Contact) {
        self.contact = contact
    }

    public func install(_ hooks: Hooks) {
        let fields = contact.fields
        guard !fields.isEmpty else { return }
        let form = DataForm(
            type: "result",
            fields: [DataForm.Field("FORM_TYPE", type: "hidden", values: [Self.formType])]
                + fields.map { DataForm.Field($0.name, type: "list-multi", values: $0.addresses) })
        hooks.advertiseForm(form.element)
    }
}
