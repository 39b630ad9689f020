import XMPPCore

/// What a push notification tells (XEP-0357 §7, the
/// `urn:xmpp:push:summary` form), and the publish request that carries it.
struct PushSummary: Sendable, Equatable {
    /// How many messages wait (`message-count`).
    var count: Int
    /// Who sent the last one (`last-message-sender`).
    var sender: String?
    /// What it said (`last-message-body`), when the operator allows it.
    var body: String?

    /// The summary as a submit form.
    var form: DataForm {
        var fields = [
            DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.pushSummary]),
            DataForm.Field("message-count", values: [String(count)]),
        ]
        if let sender { fields.append(DataForm.Field("last-message-sender", values: [sender])) }
        if let body { fields.append(DataForm.Field("last-message-body", values: [body])) }
        return DataForm(type: "submit", fields: fields)
    }

    /// The pubsub publish of `summary` to `node` of the push service `to`,
    /// with the client's `publishOptions` form, if it gave one.
    static func publishRequest(
        _ summary: PushSummary, id: String, from: String, to: String, node: String, publishOptions: Element?
    ) -> Element {
        let notification = Element("notification", namespace: NS.push, children: [.element(summary.form.element)])
        let item = Element("item", namespace: NS.pubsub, children: [.element(notification)])
        var publish = Element("publish", namespace: NS.pubsub, children: [.element(item)])
        if !node.isEmpty { publish[attribute: "node"] = node }
        var pubsub = Element("pubsub", namespace: NS.pubsub, children: [.element(publish)])
        if let publishOptions {
            pubsub.append(Element("publish-options", namespace: NS.pubsub, children: [.element(publishOptions)]))
        }
        return Element(
            "iq", namespace: NS.client, attributes: ["type": "set", "id": id, "from": from, "to": to],
            children: [.element(pubsub)])
    }
}
