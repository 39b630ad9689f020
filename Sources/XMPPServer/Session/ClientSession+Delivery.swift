import XMPPCore

extension ClientSession {
    /// Delivers a stanza routed to this client, unless a delivery filter
    /// keeps it back (XEP-0352 holds presence while the client is inactive).
    /// Every stanza from another entity ends here.
    public func deliver(_ element: Element) {
        if server.hooks.holdsBack(element, for: self) { return }
        send(element)
    }
}
