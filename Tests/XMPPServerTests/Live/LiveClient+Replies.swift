import XMPPCore

extension LiveClient {
    /// Reads elements until the IQ with `id`; returns that reply and
    /// everything the server sent before it (messages, presence, roster
    /// pushes), each wait bounded by `LiveClient.timeout`.
    /// - Throws: `TestFailure` if the server goes quiet or closes first.
    func elements(upTo id: String) throws -> (before: [Element], reply: Element) {
        var before: [Element] = []
        while true {
            let element = try nextElement()
            if element.name == "iq", element[attribute: "id"] == id { return (before, element) }
            before.append(element)
        }
    }

    /// The IQ with `id`, skipping whatever the server sends before it.
    func reply(to id: String) throws -> Element {
        try elements(upTo: id).reply
    }
}
