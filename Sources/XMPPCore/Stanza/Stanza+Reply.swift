/// Replies built from the stanza they answer (RFC 6120 §8.2.3, §8.3.1).
///
/// A reply goes back where the request came from: `to` and `from` are
/// swapped (an absent one stays absent; the server stamps a missing `from`)
/// and the `id` is kept so the requester can match it.
extension StanzaView {
    /// The error reply to this stanza (RFC 6120 §8.3.1).
    ///
    /// The reply is this stanza with `type="error"`, `to` and `from`
    /// swapped, and `error` appended after the original children. RFC 6120
    /// §8.3.1 allows the error to carry the XML that caused it, and ejabberd
    /// keeps it too: for an IQ that is the request payload, and for a
    /// message or presence it lets the sender see which of its stanzas
    /// failed (a client can show the undelivered body). Every other
    /// attribute, `id` and `xml:lang` included, is kept.
    ///
    /// - Parameter error: The error to report.
    /// - Returns: The reply, or `nil` when this stanza is itself of type
    ///   `error`: an error is never answered with an error, which could
    ///   loop between two entities (RFC 6120 §8.3.1). Returning `nil`
    ///   rather than trapping keeps a peer's error stanza from ever
    ///   crashing the server.
    public func errorReply(_ error: StanzaError) -> Element? {
        guard !isError else { return nil }
        var reply = element
        reply.swapAddresses()
        reply[attribute: "type"] = "error"
        reply.append(error.element(namespace: element.namespace))
        return reply
    }
}

extension IQ {
    /// The `result` reply to this `get` or `set` (RFC 6120 §8.2.3): same
    /// `id`, `to` and `from` swapped, and `payload` as its only child.
    ///
    /// - Parameter payload: The result's data; `nil` for an empty result.
    /// - Precondition: This IQ is a `get` or a `set`. Handlers only see
    ///   requests, so anything else is a bug in our own code.
    public func result(payload: Element? = nil) -> Element {
        precondition(type == .get || type == .set, "result(payload:) answers only get and set IQs")
        var reply = Element.stanza("iq", namespace: element.namespace, type: "result", to: nil, id: id)
        reply[attribute: "to"] = element[attribute: "from"]
        reply[attribute: "from"] = element[attribute: "to"]
        if let payload { reply.append(payload) }
        return reply
    }
}

extension Element {
    /// Exchanges the `to` and `from` attributes, removing the one whose
    /// counterpart is absent.
    fileprivate mutating func swapAddresses() {
        let to = self[attribute: "to"]
        self[attribute: "to"] = self[attribute: "from"]
        self[attribute: "from"] = to
    }
}
