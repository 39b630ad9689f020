import XMPPCore

extension Element {
    /// `<delay xmlns='urn:xmpp:delay' from='domain' stamp='…'/>` (XEP-0203):
    /// when the server first had a stanza it sends later (an offline
    /// message, a remembered presence), in milliseconds since 1970.
    static func delay(from domain: String, at milliseconds: Int) -> Element {
        Element(
            "delay", namespace: NS.delay,
            attributes: ["from": domain, "stamp": DateTimeProfile.string(millisecondsSince1970: milliseconds)])
    }
}
