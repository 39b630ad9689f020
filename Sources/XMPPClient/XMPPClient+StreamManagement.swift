import XMPPCore

/// XEP-0198 on the client: answering the server's `<r/>`, applying its
/// `<a/>`, and resending what it had not acknowledged after a resumption.
extension XMPPClient {
    /// Whether the current session is resumable after a drop.
    public var isResumable: Bool { streamManagement?.resumptionID != nil }

    func handleStreamManagement(_ element: Element) {
        switch element.name {
        case "r":
            guard let handled = streamManagement?.handledInbound else { return }
            connection?.transport.send(
                ClientWire.bytes(Element("a", namespace: NS.sm, attributes: ["h": String(handled)])))
        case "a":
            guard let h = element[attribute: "h"].flatMap(UInt32.init) else { return }
            // A count beyond what we sent is the server's mistake; keep the
            // queue rather than drop stanzas it may not have.
            _ = try? streamManagement?.acknowledge(h)
            streamManagement?.ackRequested = false
        case "enabled":
            let resumable = ["true", "1"].contains(element[attribute: "resume"] ?? "")
            streamManagement?.resumptionID = resumable ? element[attribute: "id"] : nil
        case "failed":
            streamManagement = nil
        default:
            break
        }
    }

    /// Sends again, as they were, the stanzas the server had not
    /// acknowledged before the drop, then asks for an acknowledgement.
    func resendUnacknowledged() {
        guard let connection, let stanzas = streamManagement?.unacknowledged, !stanzas.isEmpty else { return }
        for stanza in stanzas { connection.transport.send(ClientWire.bytes(stanza)) }
        streamManagement?.ackRequested = true
        connection.transport.send(ClientWire.bytes(Element("r", namespace: NS.sm)))
    }
}
