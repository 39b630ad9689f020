import XMPPCore
import XMPPStorage
import XMPPTestSupport

@testable import XMPPServer

/// Records what features ask of PEP (`PEPPublishRequest`,
/// `PEPRetractRequest`), so that conversions can be checked without PEP
/// carrying the requests out.
final class PEPRequestRecorder: ServerFeature, @unchecked Sendable {
    // @unchecked: the test server runs on the test's one thread.

    /// One request, as PEP got it.
    enum Request: Equatable {
        case publish(node: String, item: Element, configuration: PEPNodeConfiguration, enforced: Bool = false)
        case retract(node: String, id: String)
    }

    private(set) var requests: [Request] = []

    func install(_ hooks: Hooks) {
        hooks.on(PEPPublishRequest.self) { request in
            self.requests.append(
                .publish(
                    node: request.node, item: request.item, configuration: request.configuration,
                    enforced: request.enforcesConfiguration))
        }
        hooks.on(PEPRetractRequest.self) { request in
            self.requests.append(.retract(node: request.node, id: request.itemID))
        }
    }

    /// The requests recorded since the last call.
    func take() -> [Request] {
        defer { requests = [] }
        return requests
    }
}

/// Parses one element of test XML in the client namespace.
func parsedElement(_ xml: String) -> Element {
    let parser = XMLStreamParser()
    _ = parser.feed("<stream xmlns='jabber:client'>")
    guard case .element(let element)? = parser.feed(xml).first else { fatalError("bad XML: \(xml)") }
    return element
}

extension TestClient {
    /// Sends a `jabber:iq:private` request of `type` holding `content`
    /// (to `to` when given) and returns the reply.
    func privateStorage(_ type: String, _ content: String, to: String? = nil, id: String = "private") -> Element? {
        let address = to.map { " to='\($0)'" } ?? ""
        return request("<iq type='\(type)' id='\(id)'\(address)><query xmlns='jabber:iq:private'>\(content)</query></iq>", id: id)
    }
}

extension Element {
    /// The element inside a `jabber:iq:private` result.
    var privateElement: Element? {
        child("query", namespace: NS.privateStorage)?.elements.first
    }
}
