import Foundation
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

    /// The APNs payload (Apple's "Generating a remote notification"): an
    /// alert titled with the sender, its text (or "New message"), the count
    /// as the badge; or, for a background push, only `content-available`.
    /// The summary is also under `xmpp` for the app.
    func apnsPayload(_ pushType: ServerConfig.APNs.PushType) -> [UInt8] {
        var xmpp: [String: Any] = ["count": count]
        if let sender { xmpp["from"] = sender }
        let aps: [String: Any] =
            switch pushType {
            case .alert:
                [
                    "alert": ["title": bareSender ?? "Message", "body": body ?? "New message"],
                    "badge": count, "sound": "default", "mutable-content": 1,
                ]
            case .background:
                ["content-available": 1]
            }
        let data = try? JSONSerialization.data(withJSONObject: ["aps": aps, "xmpp": xmpp], options: [.sortedKeys])
        return data.map { Array($0) } ?? []
    }

    /// The sender's bare JID, if it has one.
    private var bareSender: String? {
        sender.flatMap { try? JID($0) }?.bare.description
    }

    /// What makes notifications of one conversation replace each other on
    /// the device: the sender's bare JID, when it fits APNs' 64 bytes.
    var collapseID: String? {
        bareSender.flatMap { $0.utf8.count <= 64 ? $0 : nil }
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
