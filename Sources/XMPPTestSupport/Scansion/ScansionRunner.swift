import XMPPCore

/// Plays a scansion script against a `TestServer`, one action at a time.
///
/// * Before the first action, every client's account is created with its
///   password: Prosody's test configuration has them all, and scripts
///   send to users that have not connected yet (a subscription request
///   kept for later, a pre-approval).
/// * `connects` authenticates and binds the resource of the `resource:`
///   or `jid:` property, or lets the server choose one.
/// * `sends` substitutes `${Name's full JID}` (the bound JID) and
///   `${Name's JID}` (the `jid:` property) and sends the stanzas, without
///   the script's indentation.
/// * `receives` compares what arrived, in order, with the expected
///   stanzas (`ScansionMatcher`); `receives: nothing` requires that nothing
///   arrived.
/// * `disconnects` closes the stream (again: nothing).
///
/// When a stanza counts: scansion compares a stanza only if it arrives
/// while the script waits for that client to receive, and drops anything
/// else unseen. Prosody's scripts rely on it: in `basic_message.scs`
/// Juliet's laptop, when it becomes available, is also sent the presence
/// of her phone, which the script never mentions. Our server answers at
/// once, so the runner models that moment: the `receives` steps that
/// follow an action (of any clients, in any order) consume what it
/// caused, strictly and in order, so an unexpected stanza ahead of an
/// expected one fails; what is still unread when the script next sends,
/// connects or disconnects, or ends, arrived while nobody listened and is
/// ignored (a later failure of that client lists it, in case it only came
/// too early).
public final class ScansionRunner {
    /// A connected client.
    private struct Connection {
        let client: TestClient
        let jid: JID
        /// Stanzas received and not yet compared.
        var unread: [Element] = []
    }

    private let script: ScansionScript
    private let server: TestServer
    private var connections: [String: Connection] = [:]
    /// The `jid:` property of each client, by name.
    private let jids: [String: String]
    /// Stanzas each client got that the script did not wait for.
    private var ignored: [String: [Element]] = [:]

    private init(script: ScansionScript, server: TestServer) {
        self.script = script
        self.server = server
        jids = Dictionary(script.clients.map { ($0.name, $0.jid) }, uniquingKeysWith: { first, _ in first })
    }

    /// Plays `script` against `server` (a fresh one, normally).
    /// - Throws: `ScansionFailure` at the first action that fails.
    public static func run(_ script: ScansionScript, on server: TestServer) throws(ScansionFailure) {
        let runner = ScansionRunner(script: script, server: server)
        try runner.createAccounts()
        for action in script.actions {
            try runner.perform(action)
        }
    }

    private func perform(_ action: ScansionScript.Action) throws(ScansionFailure) {
        switch action.step {
        case .receives(let xml):
            let expected = try elements(xml, for: action)
            try receive(expected, for: action)
        case .receivesNothing:
            try receive([], for: action)
        case .connects:
            ignoreUnread()
            try connect(action)
        case .sends(let xml):
            ignoreUnread()
            let client = try connection(for: action).client
            for element in try elements(xml, for: action) {
                client.send(ScansionXML.string(element.droppingScansionAttributes()))
            }
        case .disconnects:
            ignoreUnread()
            // Prosody's presence_preapproval.scs disconnects Bob twice;
            // scansion lets that pass, so a second disconnect does nothing.
            guard let client = connections[action.client]?.client else { return }
            client.send("</stream:stream>")
            ignored[action.client, default: []] += client.receiveElements()
            connections[action.client] = nil
        }
    }

    // MARK: - Actions

    /// Creates each distinct account the clients use.
    private func createAccounts() throws(ScansionFailure) {
        var created: Set<String> = []
        for client in script.clients {
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
        guard connections[action.client] == nil else { throw failure(action, "is already connected") }
        let definition = script.clients.first { $0.name == action.client }!
        let jid = try! JID(definition.jid)  // checked by createAccounts()
        do {
            let client = server.connect()
            let bound = try client.login(
                jid.localpart!, definition.password, resource: definition.resource ?? jid.resourcepart)
            connections[action.client] = Connection(client: client, jid: bound)
        } catch {
            throw failure(action, "could not log in: \(error)")
        }
    }

    /// Compares the unread stanzas of the action's client with `expected`;
    /// an empty `expected` means nothing may have arrived.
    private func receive(_ expected: [Element], for action: ScansionScript.Action) throws(ScansionFailure) {
        _ = try connection(for: action)
        readAll()
        if expected.isEmpty, let first = connections[action.client]!.unread.first {
            throw failure(action, "expected nothing", expected: nil, received: first)
        }
        for wanted in expected {
            guard let got = connections[action.client]!.unread.first else {
                throw failure(action, "nothing arrived", expected: wanted, received: nil)
            }
            if let problem = ScansionMatcher.mismatch(expected: wanted, received: got) {
                throw failure(action, problem, expected: wanted, received: got)
            }
            connections[action.client]!.unread.removeFirst()
        }
    }

    // MARK: - Helpers

    /// Moves what the server wrote to each client into its unread list.
    private func readAll() {
        for name in connections.keys {
            connections[name]!.unread += connections[name]!.client.receiveElements()
        }
    }

    /// Reads everything, then sets every unread stanza aside as ignored.
    private func ignoreUnread() {
        readAll()
        for name in connections.keys {
            ignored[name, default: []] += connections[name]!.unread
            connections[name]!.unread = []
        }
    }

    private func connection(for action: ScansionScript.Action) throws(ScansionFailure) -> Connection {
        guard let connection = connections[action.client] else { throw failure(action, "is not connected") }
        return connection
    }

    /// The stanzas of an action's XML, variables substituted.
    private func elements(_ xml: String, for action: ScansionScript.Action) throws(ScansionFailure) -> [Element] {
        do {
            let text = try ScansionXML.substitute(xml, jids: jids, fullJIDs: connections.mapValues(\.jid))
            return try ScansionXML.parse(text)
        } catch {
            throw failure(action, "bad XML: \(error)")
        }
    }

    private func failure(
        _ action: ScansionScript.Action, _ reason: String, expected: Element? = nil, received: Element? = nil
    ) -> ScansionFailure {
        ScansionFailure(
            script: script.name, line: action.line, action: action.description, reason: reason,
            expected: expected.map(ScansionXML.string), received: received.map(ScansionXML.string),
            ignored: (ignored[action.client] ?? []).map(ScansionXML.string))
    }
}

/// A script action that failed: where, why, and the stanzas concerned.
public struct ScansionFailure: Error, CustomStringConvertible {
    /// The script's name.
    public var script: String
    /// The 1-based line of the action.
    public var line: Int
    /// The action, as written (`Romeo receives:`).
    public var action: String
    /// What went wrong, with the path to the first difference.
    public var reason: String
    /// The expected stanza, if the action expected one.
    public var expected: String?
    /// The stanza received instead, if any.
    public var received: String?
    /// Stanzas this client got earlier that the script did not wait for.
    public var ignored: [String]

    public var description: String {
        var text = "\(script).scs:\(line): \(action) \(reason)"
        if let expected { text += "\n  expected: \(expected)" }
        if let received { text += "\n  received: \(received)" }
        if !ignored.isEmpty { text += "\n  ignored earlier:\n" + ignored.map { "    \($0)" }.joined(separator: "\n") }
        return text
    }
}
