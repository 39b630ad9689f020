import Foundation
import XMPPCore

/// What a push notification tells (XEP-0357 §7, the
/// `urn:xmpp:push:summary` form), and the publish request that carries it.
struct PushSummary: Sendable, Equatable {
    /// Who sent the last message, or the subscription request
    /// (`last-message-sender`).
    var sender: String?
    /// How many messages wait (`message-count`), for a message.
    var count: Int?
    /// How many subscription requests wait
    /// (`pending-subscription-count`), for a request.
    var pendingSubscriptions: Int?
    /// What the message said (`last-message-body`), when the operator
    /// allows it.
    var body: String?

    /// The summary as a submit form.
    var form: DataForm {
        var fields = [DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.pushSummary])]
        if let count { fields.append(DataForm.Field("message-count", values: [String(count)])) }
        if let pendingSubscriptions {
            fields.append(DataForm.Field("pending-subscription-count", values: [String(pendingSubscriptions)]))
        }
        if let sender { fields.append(DataForm.Field("last-message-sender", values: [sender])) }
        if let body { fields.append(DataForm.Field("last-message-body", values: [body])) }
        return DataForm(type: "submit", fields: fields)
    }

    /// The APNs payload (Apple's "Generating a remote notification"): an
    /// alert titled with the sender, the text (or "New message", or
    /// "Contact request"), the count as the badge; or, for a background
    /// push, only `content-available`. The summary is also under `xmpp`
    /// for the app.
    func apnsPayload(_ pushType: ServerConfig.APNs.PushType) -> [UInt8] {
        var xmpp: [String: Any] = [:]
        xmpp["count"] = count
        xmpp["pending-subscriptions"] = pendingSubscriptions
        xmpp["from"] = sender
        let text = body ?? (pendingSubscriptions == nil ? "New message" : "Contact request")
        let aps: [String: Any] =
            switch pushType {
            case .alert:
                [
                    "alert": ["title": bareSender ?? "Message", "body": text],
                    "badge": count ?? pendingSubscriptions ?? 1, "sound": "default", "mutable-content": 1,
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
