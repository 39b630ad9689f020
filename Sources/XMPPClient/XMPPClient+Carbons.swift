import XMPPCore

extension XMPPClient {
    /// Asks the server for copies of our other resources' chats
    /// (XEP-0280); a server without carbons just says no.
    func enableCarbons() async {
        guard configuration.carbons else { return }
        _ = try? await request(.set, payload: Element("enable", namespace: NS.carbons))
    }

    /// Unwraps a carbon copy: a message one of our other resources sent or
    /// received. Only our own account may send them (XEP-0280 §11): from
    /// anyone else the copy is ignored. Returns whether `message` was one.
    func handleCarbon(_ message: Message) async -> Bool {
        let wrapper =
            message.element.child("received", namespace: NS.carbons)
            ?? message.element.child("sent", namespace: NS.carbons)
        guard let wrapper else { return false }
        guard message.from == nil || message.from == account,
            let inner = wrapper.child("forwarded", namespace: NS.forward)?.child("message", namespace: NS.client),
            let copy = Message(inner)
        else { return true }
        await handleChat(copy, sentByUs: wrapper.name == "sent")
        return true
    }
}
