#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import XMPPCore

/// Plays a scansion script against a `TestServer`, one action at a time.
///
/// * Before the first action, every client's account is created with its
///   password (unless the client says `registered: false`): Prosody's test
///   configuration has them all, and scripts send to users that have not
///   connected yet (a subscription request kept for later, a pre-approval).
/// * `connects` authenticates and binds the resource of the `resource:`
///   or `jid:` property, or lets the server choose one; for an
///   `xmppframework` client, with XMPPFramework's bytes (see
///   `ScansionRunner+XMPPFramework.swift`).
/// * `sends` substitutes `${Name's full JID}` (the bound JID),
///   `${Name's JID}` (the `jid:` property) and `${name}` (a captured value)
///   and sends the stanzas, without the script's indentation; `sends raw:`
///   sends its text as it is, after the same substitutions.
/// * `receives` compares what arrived, in order, with the expected
///   stanzas (`ScansionMatcher`); `receives: nothing` requires that nothing
///   arrived; `receives raw:` compares the raw text of the next units
///   (`ScansionWireUnit`: headers, elements, the closing tag).
/// * `disconnects` closes the stream (again: nothing); `drops the
///   connection` goes away without closing it; `is disconnected` expects
///   the server to have closed the connection.
/// * `waits N seconds` moves the server's clock on (timers fire).
///
/// Every byte the server writes is split into units as it is read; units
/// that do not parse fail the action in progress, and so does, for an
/// `xmppframework` client, anything its parser would misread
/// (`XMPPFrameworkWireCheck`) and a `<success/>` without the SCRAM server
/// signature after `authenticates with`. The runner also learns a
/// client's full JID from any bind result it receives.
///
/// When a stanza counts: Prosody's scripts rely on two things. What
/// arrives together with a stanza a client waited for, and was not
/// waited for too, is dropped unseen: in `basic_message.scs` Juliet's
/// laptop, when it becomes available, gets its own presence and then
/// that of her phone, which the script never mentions. What arrives for
/// a client that nobody waits for yet stays for its next `receives`: in
/// `pep_itemreply.scs` Juliet receives Romeo's presence after Romeo has
/// acted three more times. So a client's `receives` steps consume its
/// units strictly and in order (an unexpected stanza ahead of an
/// expected one fails), and at the next action (of any client) the units
/// still unread by a client whose `receives` consumed any since the last
/// action are ignored (a later failure of that client lists them, in case
/// they only came too early), as is everything unread when the script
/// ends. Not for an `xmppframework` client: its app sees everything, so
/// the script must expect everything it gets, and anything still unread
/// at an action fails.
public final class ScansionRunner {
    /// A connection of a client.
    struct Connection {
        let client: TestClient
        /// Splits what the server writes into units.
        let reader: ScansionWireReader
        /// The bound JID, once known.
        var jid: JID?
        /// Units received and not yet compared.
        var unread: [ScansionWireUnit] = []
        /// Whether a `receives` step consumed units since the last action.
        var receivedSinceAction = false
        /// How many stream headers the client sent on this connection.
        var streamsOpened = 0
        /// The XMPPFramework checks of this connection's bytes, if the
        /// client has that style.
        var wireCheck: XMPPFrameworkWireCheck?
        /// A SCRAM exchange whose `<success/>` is still to come.
        var scram: SCRAMClient?
    }

    let script: ScansionScript
    let server: TestServer
    var connections: [String: Connection] = [:]
    /// The clients of the script, by name.
    let clients: [String: ScansionScript.Client]
    /// Units each client got that the script did not wait for.
    var ignored: [String: [String]] = [:]
    /// The JID each client bound last, kept after it disconnects: later
    /// steps still name it (`blocking.scs` expects presence from Juliet's
    /// full JID after she left).
    var boundJIDs: [String: JID] = [:]
    /// Values captured by `{scansion:capture:name}`.
    var captures: [String: String] = [:]

    private init(script: ScansionScript, server: TestServer) {
        self.script = script
        self.server = server
        clients = Dictionary(script.clients.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Plays `script` against `server` (a fresh one, normally).
    /// - Throws: `ScansionFailure` at the first action that fails.
    public static func run(_ script: ScansionScript, on server: TestServer) throws(ScansionFailure) {
        let runner = ScansionRunner(script: script, server: server)
        try runner.createAccounts()
        for action in script.actions {
            try runner.perform(action)
        }
        if let last = script.actions.last {
            var end = last
            end.line = 0
            try runner.ignoreUnread(before: end, what: "the end of the script")
        }
    }

    private func perform(_ action: ScansionScript.Action) throws(ScansionFailure) {
        switch action.step {
        case .receives(let xml):
            let expected = try elements(xml, for: action)
            try receive(expected, for: action)
        case .receivesNothing:
            try receive([], for: action)
        case .receivesRaw(let patterns):
            try receiveRaw(patterns, for: action)
        case .isDisconnected:
            try expectDisconnected(action)
        default:
            let readers = Set(connections.filter(\.value.receivedSinceAction).keys)
            try ignoreUnread(before: action, of: readers)
            for name in connections.keys { connections[name]!.receivedSinceAction = false }
            try act(action)
        }
    }

    private func act(_ action: ScansionScript.Action) throws(ScansionFailure) {
        switch action.step {
        case .connects:
            guard connections[action.client] == nil else { throw failure(action, "is already connected") }
            if client(of: action).style == .xmppframework {
                try loginAsXMPPFramework(action)
            } else {
                try connect(action)
            }
        case .sends(let xml):
            let client = try connection(for: action).client
            for element in try elements(xml, for: action) {
                client.send(ScansionXML.string(element.droppingScansionAttributes()))
            }
        case .sendsRaw(let text):
            let text = try substitute(text, for: action)
            openConnectionIfNeeded(for: action)
            if text.contains("<stream:stream") { connections[action.client]!.streamsOpened += 1 }
            connections[action.client]!.client.send(text)
        case .opensStream:
            try openStream(action)
        case .startsTLS:
            try startTLS(action)
        case .authenticates(let mechanism):
            try authenticate(with: mechanism, action)
        case .sendsKeepalive:
            openConnectionIfNeeded(for: action)
            connections[action.client]!.client.send(" ")
        case .dropsConnection:
            guard let connection = connections.removeValue(forKey: action.client) else {
                throw failure(action, "is not connected")
            }
            connection.client.dropConnection()
        case .waits(let seconds):
            server.loop.advance(by: .seconds(seconds))
        case .disconnects:
            // Prosody's presence_preapproval.scs disconnects Bob twice;
            // scansion lets that pass, so a second disconnect does nothing.
            guard let connection = connections.removeValue(forKey: action.client) else { return }
            connection.client.send("</stream:stream>")
            ignored[action.client, default: []] += connection.unread.map(\.raw)
            ignored[action.client, default: []] += connection.reader.feed(connection.client.receiveBytes()).map(\.raw)
        case .receives, .receivesNothing, .receivesRaw, .isDisconnected:
            preconditionFailure("handled by perform(_:)")
        }
    }

    // MARK: - Actions

    /// Creates each distinct account the clients use.
    private func createAccounts() throws(ScansionFailure) {
        var created: Set<String> = []
        for client in script.clients where client.isRegistered {
            let problem: String
            do {
                guard let username = try JID(client.jid).localpart else { throw TestFailure("no localpart") }
                if created.insert(username).inserted { try server.addUser(username, password: client.password) }
                continue
            } catch {
                problem = "cannot create the account of '\(client.jid)': \(error)"
            }
            throw ScansionFailure(
                script: script.name, line: 0, action: "[Client] \(client.name)", reason: problem, expected: nil,
                received: nil, ignored: [])
        }
    }

    private func connect(_ action: ScansionScript.Action) throws(ScansionFailure) {
        let definition = client(of: action)
        let jid: JID
        do { jid = try JID(definition.jid) } catch { throw failure(action, "bad jid: \(error)") }
        do {
            let client = server.connect()
            // Scansion's client library declares English in its stream header.
            client.language = "en"
            let bound = try client.login(
                jid.localpart ?? "", definition.password, resource: definition.resource ?? jid.resourcepart)
            connections[action.client] = Connection(
                client: client, reader: ScansionWireReader(insideStream: true), jid: bound)
            boundJIDs[action.client] = bound
        } catch {
            throw failure(action, "could not log in: \(error)")
        }
    }

    /// Compares the unread elements of the action's client with `expected`;
    /// an empty `expected` means nothing may have arrived.
    private func receive(_ expected: [Element], for action: ScansionScript.Action) throws(ScansionFailure) {
        _ = try connection(for: action)
        try readAll(for: action)
        if expected.isEmpty, let first = connections[action.client]!.unread.first {
            throw failure(action, "expected nothing", received: first.raw)
        }
        for wanted in expected {
            guard let got = connections[action.client]!.unread.first else {
                throw failure(action, "nothing arrived", expected: wanted)
            }
            guard let element = got.element else {
                throw failure(action, "expected an element, got other bytes", expected: wanted, received: got.raw)
            }
            if let problem = ScansionMatcher.mismatch(expected: wanted, received: element, captures: &captures) {
                throw failure(action, problem, expected: wanted, received: got.raw)
            }
            connections[action.client]!.unread.removeFirst()
            connections[action.client]!.receivedSinceAction = true
        }
    }

    /// Compares the raw text of the next units with `patterns`, in order.
    private func receiveRaw(_ patterns: [String], for action: ScansionScript.Action) throws(ScansionFailure) {
        _ = try connection(for: action)
        try readAll(for: action)
        for pattern in patterns {
            let pattern = try substitute(pattern, for: action)
            guard let got = connections[action.client]!.unread.first else {
                throw failure(action, "nothing arrived; expected \(pattern)")
            }
            guard ScansionRawPattern.matches(pattern, got.raw) else {
                throw failure(action, "raw text differs; expected \(pattern)", received: got.raw)
            }
            connections[action.client]!.unread.removeFirst()
            connections[action.client]!.receivedSinceAction = true
        }
    }

    /// Expects the server to have closed the client's connection, after
    /// everything the script expected.
    private func expectDisconnected(_ action: ScansionScript.Action) throws(ScansionFailure) {
        let connection = try connection(for: action)
        try readAll(for: action)
        let unread = connections[action.client]!.unread
        if connection.wireCheck != nil, let first = unread.first {
            throw failure(action, "expected the connection closed after what the script expects", received: first.raw)
        }
        guard connection.client.isClosed else { throw failure(action, "the server did not close the connection") }
        ignored[action.client, default: []] += unread.map(\.raw)
        connections[action.client] = nil
    }

    // MARK: - Reading

    /// Moves what the server wrote to each client into its unread list,
    /// checking each unit as it comes (see the type's documentation).
    func readAll(for action: ScansionScript.Action) throws(ScansionFailure) {
        for name in connections.keys.sorted() {
            let bytes = connections[name]!.client.receiveBytes()
            guard !bytes.isEmpty else { continue }
            for unit in connections[name]!.reader.feed(bytes) {
                if Self.tracing { print("[scansion] \(name) <- \(unit.raw)") }
                if let problem = inspect(unit, of: name) {
                    throw failure(action, "\(name) received: \(problem)", received: unit.raw)
                }
                connections[name]!.unread.append(unit)
            }
        }
    }

    /// Reads everything, then sets the unread units of `clients` (all
    /// when nil) aside as ignored; fails if an `xmppframework` client has
    /// any.
    func ignoreUnread(
        before action: ScansionScript.Action, of clients: Set<String>? = nil, what: String = "this action"
    ) throws(ScansionFailure) {
        try readAll(for: action)
        for name in connections.keys.sorted() {
            let unread = connections[name]!.unread
            if connections[name]!.wireCheck != nil, let first = unread.first {
                throw failure(
                    action, "\(name) got \(unread.count) unit(s) the script does not expect before \(what)",
                    received: first.raw)
            }
            guard clients?.contains(name) ?? true else { continue }
            ignored[name, default: []] += unread.map(\.raw)
            connections[name]!.unread = []
        }
    }

    /// Checks a unit as it arrives: well-formed, shaped for XMPPFramework
    /// when the client has its style, the SCRAM server signature; notes a
    /// bound JID.
    private func inspect(_ unit: ScansionWireUnit, of name: String) -> String? {
        if case .malformed(let reason) = unit.kind { return "not well-formed: \(reason)" }
        if let problem = connections[name]!.wireCheck?.problem(with: unit) { return problem }
        guard let element = unit.element else { return nil }
        if element.namespace == NS.sasl, var scram = connections[name]!.scram {
            connections[name]!.scram = nil
            switch element.name {
            case "success":
                do {
                    try scram.receiveServerFinal(try Base64.decode(element.text))
                } catch {
                    return "XMPPFramework needs SCRAM's server signature v= inside <success/>: \(error)"
                }
            case "challenge":
                return "XMPPFramework takes a <challenge/> after its SCRAM response as a failure"
            default:
                break
            }
        }
        if element.name == "iq", element.namespace == NS.client, element[attribute: "type"] == "result",
            let text = element.child("bind", namespace: NS.bind)?.childText("jid"), let jid = try? JID(text)
        {
            connections[name]!.jid = jid
            boundJIDs[name] = jid
        }
        return nil
    }

    // MARK: - Helpers

    /// Whether to print every unit received, for writing scripts: set
    /// `SCANSION_TRACE=1` in the environment of `swift test`.
    static let tracing = getenv("SCANSION_TRACE").map { String(cString: $0) == "1" } ?? false

    func client(of action: ScansionScript.Action) -> ScansionScript.Client {
        clients[action.client]!  // the parser checked the name
    }

    func connection(for action: ScansionScript.Action) throws(ScansionFailure) -> Connection {
        guard let connection = connections[action.client] else { throw failure(action, "is not connected") }
        return connection
    }

    /// Opens a connection for the client if it has none: raw bytes need a
    /// connection and nothing more.
    func openConnectionIfNeeded(for action: ScansionScript.Action) {
        guard connections[action.client] == nil else { return }
        connections[action.client] = Connection(
            client: server.connect(), reader: ScansionWireReader(insideStream: false),
            wireCheck: client(of: action).style == .xmppframework ? XMPPFrameworkWireCheck() : nil)
    }

    /// `text` with variables substituted.
    func substitute(_ text: String, for action: ScansionScript.Action) throws(ScansionFailure) -> String {
        do {
            return try ScansionXML.substitute(
                text, jids: clients.mapValues(\.jid), fullJIDs: boundJIDs,
                captures: captures)
        } catch {
            throw failure(action, "\(error)")
        }
    }

    /// The stanzas of an action's XML, variables substituted.
    private func elements(_ xml: String, for action: ScansionScript.Action) throws(ScansionFailure) -> [Element] {
        let text = try substitute(xml, for: action)
        do {
            return try ScansionXML.parse(text)
        } catch {
            throw failure(action, "bad XML: \(error)")
        }
    }

    func failure(
        _ action: ScansionScript.Action, _ reason: String, expected: Element? = nil, received: String? = nil
    ) -> ScansionFailure {
        ScansionFailure(
            script: script.name, line: action.line, action: action.line == 0 ? "end of script" : action.description,
            reason: reason, expected: expected.map(ScansionXML.string), received: received,
            ignored: ignored[action.client] ?? [])
    }
}

/// A script action that failed: where, why, and the stanzas concerned.
public struct ScansionFailure: Error, CustomStringConvertible {
    /// The script's name.
    public var script: String
    /// The 1-based line of the action (0: the end of the script).
    public var line: Int
    /// The action, as written (`Romeo receives:`).
    public var action: String
    /// What went wrong, with the path to the first difference.
    public var reason: String
    /// The expected stanza, if the action expected one.
    public var expected: String?
    /// What was received instead, as written on the wire, if anything.
    public var received: String?
    /// What this client got earlier that the script did not wait for.
    public var ignored: [String]

    public var description: String {
        var text = "\(script).scs:\(line): \(action) \(reason)"
        if let expected { text += "\n  expected: \(expected)" }
        if let received { text += "\n  received: \(received)" }
        if !ignored.isEmpty { text += "\n  ignored earlier:\n" + ignored.map { "    \($0)" }.joined(separator: "\n") }
        return text
    }
}
