import Foundation
import Synchronization
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A wall clock that moves only when the test moves it, starting at
/// 2024-01-01T00:00:00Z.
final class SettableClock: Sendable {
    static let start = 1_704_067_200_000
    private let milliseconds = Mutex(SettableClock.start)

    var wallClock: WallClock {
        WallClock { [self] in Date(timeIntervalSince1970: Double(milliseconds.withLock { $0 }) / 1000) }
    }

    var now: Int { milliseconds.withLock { $0 } }

    func advance(seconds: Int) {
        milliseconds.withLock { $0 += seconds * 1000 }
    }
}

/// What one archive query brought back.
struct ArchiveAnswer {
    /// The `<message/>`s with a `<result/>`, in order.
    var results: [Element]
    /// The IQ that ended the query: a result with `<fin/>`, or an error.
    var reply: Element

    var fin: Element? { reply.child("fin", namespace: NS.mam) }
    var complete: Bool { fin?[attribute: "complete"] == "true" }
    var resultSet: Element? { fin?.child("set", namespace: NS.rsm) }
    var first: String? { resultSet?.childText("first", namespace: NS.rsm) }
    var last: String? { resultSet?.childText("last", namespace: NS.rsm) }
    var count: Int? { resultSet?.childText("count", namespace: NS.rsm).flatMap { Int($0) } }
    /// The archive ids of the results.
    var ids: [String] { results.compactMap { $0.child("result", namespace: NS.mam)?[attribute: "id"] } }
    /// The forwarded messages' bodies.
    var bodies: [String] { results.compactMap { forwarded($0)?.childText("body") } }
    /// The error condition, if the query failed.
    var errorCondition: String? {
        reply.child("error")?.elements.first { $0.namespace == NS.stanzas }?.name
    }

    func forwarded(_ result: Element) -> Element? {
        result.child("result", namespace: NS.mam)?.child("forwarded", namespace: NS.forward)?
            .child("message", namespace: NS.client)
    }
}

extension TestClient {
    /// Sends an archive query with `form` fields and an RSM `set`, and
    /// collects what comes back.
    func queryArchive(
        _ fields: [(String, String)] = [], set: String = "", id: String = "q", queryID: String = "Q", extra: String = "",
        to: String? = nil
    ) -> ArchiveAnswer {
        let form = fields.isEmpty ? "" : Self.mamForm(fields)
        let address = to.map { " to='\($0)'" } ?? ""
        let rsm = set.isEmpty ? "" : "<set xmlns='http://jabber.org/protocol/rsm'>\(set)</set>"
        send("<iq type='set' id='\(id)'\(address)><query xmlns='urn:xmpp:mam:2' queryid='\(queryID)'>\(form)\(rsm)\(extra)</query></iq>")
        let elements = receiveElements()
        return ArchiveAnswer(
            results: elements.filter { $0.name == "message" && $0.child("result", namespace: NS.mam) != nil },
            reply: elements.first { $0.name == "iq" && $0[attribute: "id"] == id } ?? Element("none", namespace: ""))
    }

    /// A submitted MAM form with `fields`, typed as most clients type them.
    static func mamForm(_ fields: [(String, String)]) -> String {
        "<x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE' type='hidden'><value>urn:xmpp:mam:2</value></field>"
            + fields.map { "<field var='\($0.0)'><value>\($0.1)</value></field>" }.joined() + "</x>"
    }

    /// Sends a chat message with `body`.
    func chat(_ body: String, to: String, extra: String = "") {
        send("<message to='\(to)' type='chat'><body>\(body)</body>\(extra)</message>")
    }
}

/// A server (with a settable clock) with romeo (orchard) and juliet
/// (balcony) logged in; juliet is available unless `julietOnline` is false.
func archiveCouple(
    config: ServerConfig = ServerConfig(), clock: SettableClock = SettableClock(), julietOnline: Bool = true
) throws -> (TestServer, TestClient, TestClient) {
    let server = try TestServer(config: config, clock: clock.wallClock)
    for name in ["romeo", "juliet", "nurse"] { try server.addUser(name, password: "pw") }
    let romeo = server.connect()
    try romeo.login("romeo", "pw", resource: "orchard")
    let juliet = server.connect()
    try juliet.login("juliet", "pw", resource: "balcony")
    if julietOnline {
        juliet.send("<presence/>")
        _ = juliet.receive()
    }
    return (server, romeo, juliet)
}
