import XMPPCore

extension ClientSession {
    /// Delivers a stanza routed to this client, unless a delivery filter
    /// keeps it back (XEP-0352 holds presence while the client is inactive).
    /// Every stanza from another entity ends here. While a backlog loads
    /// (`holdDeliveries()`), it waits behind the backlog, unless it is
    /// this session's own, echoed back to it (its presence), which keeps
    /// its place among what the session itself causes.
    public func deliver(_ element: Element) {
        if server.hooks.holdsBack(element, for: self) { return }
        guard deliveryHolds > 0, element[attribute: "from"] != jid?.description else { return send(element) }
        guard phase != .closed, let kind = Stanza(element)?.kind, let bytes = serialized(element) else { return }
        heldDeliveries.append((bytes, kind))
        heldDeliveryByteCount += bytes.count
        // What waits here waits for this client as much as what waits on
        // the connection, and has the same bound.
        checkQueuedOutput(heldDeliveryByteCount)
    }

    /// Holds what is delivered to this client from now on until as many
    /// `releaseDeliveries()`: a backlog that loads from storage (the
    /// offline messages at initial presence) then reaches the client
    /// before what was routed to it while it loaded, in the order sent.
    func holdDeliveries() {
        deliveryHolds += 1
    }

    /// Ends one `holdDeliveries()`; the last one sends what was held.
    func releaseDeliveries() {
        guard deliveryHolds > 0 else { return }
        deliveryHolds -= 1
        guard deliveryHolds == 0, !heldDeliveries.isEmpty else { return }
        let held = takeHeldDeliveries()
        sendingTogether {
            for stanza in held { send(stanza: stanza.bytes, kind: stanza.kind) }
        }
    }

    /// Takes the stanzas held for this client: to send them, or, when the
    /// session ends first, to hand them on as unacknowledged ones are.
    func takeHeldDeliveries() -> [(bytes: [UInt8], kind: Stanza.Kind)] {
        defer {
            heldDeliveries = []
            heldDeliveryByteCount = 0
        }
        return heldDeliveries
    }
}
