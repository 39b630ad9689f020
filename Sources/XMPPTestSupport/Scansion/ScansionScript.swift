import XMPPCore

/// A scansion script (`.scs`): a scripted conversation between XMPP clients
/// and a server, in the format of Prosody's `spec/scansion/` tests.
///
/// ```
/// # Title
/// # More description
///
/// [Client] Romeo
///     jid: romeo@localhost
///     password: password
///
/// -----
///
/// Romeo connects
///
/// Romeo sends:
///     <presence/>
///
/// Romeo receives:
///     <presence from="${Romeo's full JID}"/>
///
/// Romeo disconnects
/// ```
///
/// Layout: `#` comment lines before the first object are the metadata
/// (title, then description); each `[Client] Name` line starts an object
/// whose properties follow on indented `key: value` lines; a line of three
/// or more dashes ends the header. In the body, a line at column 0 is an
/// action (`Name connects`, `Name disconnects`, `Name sends:`,
/// `Name receives:`, the colon optional, `Name receives: nothing`) or a
/// comment (`#`, `//`, `--`); indented lines are the XML of the action
/// above them; blank lines separate nothing.
///
/// Swiftlet's extensions, for replaying a particular client's bytes (the
/// scripts in `Tests/Scripts/xmppframework/`):
///
/// * Client properties `style: xmppframework` (the runner checks every
///   byte the server writes to it against what XMPPFramework's parser
///   needs, and the script must account for every element it gets; see
///   `ScansionRunner`) and `registered: false` (no account is created
///   before the script: the script registers it).
/// * `Name sends raw:` sends its lines verbatim, each trimmed, joined with
///   nothing between them (`${…}` variables substituted).
/// * `Name receives raw:` compares each line with the raw text of the
///   next top-level unit the server wrote (a stream header, an element,
///   the closing tag); `{scansion:any}` in a line matches any run of
///   characters.
/// * `Name opens a stream`, `Name starts TLS`, `Name authenticates with
///   SCRAM-SHA-1` (or another SCRAM mechanism), `Name sends a keepalive`
///   (one space), `Name drops the connection` (no closing tag),
///   `Name is disconnected` (the server closed the connection),
///   `Name waits N seconds` (the server's clock moves on). What each does
///   exactly is in `ScansionRunner`.
/// * `{scansion:capture:name}` in an expected attribute value or text
///   matches any value and remembers it as `${name}` for later actions.
public struct ScansionScript: Sendable {
    /// One `[Client]` object of the header.
    public struct Client: Sendable, Hashable {
        /// The name actions refer to it by (`Juliet's phone`).
        public var name: String
        /// The `jid:` property: a bare JID, or a full one fixing the resource.
        public var jid: String
        /// The `password:` property.
        public var password: String
        /// The `resource:` property, if any; overrides a resource in `jid`.
        public var resource: String?
        /// The `style:` property: whose wire behaviour the client replays.
        public var style: Style = .scansion
        /// The `registered:` property: whether the runner creates the
        /// account before the script runs (default `true`).
        public var isRegistered = true
    }

    /// Whose client a `[Client]` stands for.
    public enum Style: String, Sendable, Hashable {
        /// A scansion client: `connects` logs in with SCRAM-SHA-256 and
        /// binds; stanzas nobody waits for are ignored.
        case scansion
        /// An unchanged XMPPFramework 4.1 app (`XMPPFRAMEWORK.md`):
        /// `connects` writes its bytes in its order, every reply is
        /// checked for the shape its parser needs, and every element it
        /// gets must be expected by the script.
        case xmppframework
    }

    /// What an action does.
    public enum Step: Sendable, Hashable {
        /// Connect, authenticate and bind.
        case connects
        /// Close the stream.
        case disconnects
        /// Send this XML (one or more stanzas, with `${…}` variables).
        case sends(String)
        /// Expect this XML (one or more stanzas, with `${…}` variables).
        case receives(String)
        /// Expect that nothing arrives.
        case receivesNothing
        /// Send this text as it is (lines trimmed and joined, `${…}`
        /// variables substituted), opening a connection if there is none.
        case sendsRaw(String)
        /// Expect the next units on the wire to have these raw texts, one
        /// pattern per unit (`{scansion:any}` matches any characters).
        case receivesRaw([String])
        /// Send the client's stream header and expect the server's.
        case opensStream
        /// STARTTLS and a TLS 1.2 handshake; the script then opens a stream.
        case startsTLS
        /// Run a SCRAM exchange up to the client-final message; the
        /// script then expects `<success/>` or `<failure/>`.
        case authenticates(SASLMechanism)
        /// Send a single space, the whitespace keepalive.
        case sendsKeepalive
        /// Drop the connection without closing the stream.
        case dropsConnection
        /// Expect that the server closed the connection.
        case isDisconnected
        /// Let this many seconds pass on the server's clock.
        case waits(seconds: Int)
    }

    /// One line of the script body that does something.
    public struct Action: Sendable, Hashable, CustomStringConvertible {
        /// The 1-based line of the action's first line in the file.
        public var line: Int
        /// The client acting.
        public var client: String
        /// What it does.
        public var step: Step

        public var description: String {
            switch step {
            case .connects: "\(client) connects"
            case .disconnects: "\(client) disconnects"
            case .sends: "\(client) sends:"
            case .receives: "\(client) receives:"
            case .receivesNothing: "\(client) receives: nothing"
            case .sendsRaw: "\(client) sends raw:"
            case .receivesRaw: "\(client) receives raw:"
            case .opensStream: "\(client) opens a stream"
            case .startsTLS: "\(client) starts TLS"
            case .authenticates(let mechanism): "\(client) authenticates with \(mechanism.rawValue)"
            case .sendsKeepalive: "\(client) sends a keepalive"
            case .dropsConnection: "\(client) drops the connection"
            case .isDisconnected: "\(client) is disconnected"
            case .waits(let seconds): "\(client) waits \(seconds) second\(seconds == 1 ? "" : "s")"
            }
        }
    }

    /// The script's name, usually its file name without `.scs`.
    public var name: String
    /// The first metadata comment line, without `#`.
    public var title: String
    /// The further metadata comment lines before the first object.
    public var description: [String]
    /// The clients, in the order declared.
    public var clients: [Client]
    /// The actions, in order.
    public var actions: [Action]
}

/// Why a script could not be parsed.
public struct ScansionSyntaxError: Error, CustomStringConvertible {
    /// The script's name.
    public var script: String
    /// The 1-based line of the problem.
    public var line: Int
    /// What is wrong.
    public var message: String

    public var description: String { "\(script).scs:\(line): \(message)" }
}

extension ScansionScript {
    /// Parses the text of a script.
    /// - Parameters:
    ///   - text: The whole file.
    ///   - name: The script's name, for messages.
    /// - Throws: `ScansionSyntaxError` for an unknown object class,
    ///   property or action, an action by an undeclared client, XML with no
    ///   action above it, or a `sends`/`receives` without XML.
    public init(parsing text: String, name: String) throws(ScansionSyntaxError) {
        var parser = ScansionParser(name: name)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            try parser.consume(String(line.hasSuffix("\r") ? line.dropLast() : line), number: index + 1)
        }
        self = try parser.finish()
    }
}

/// The line-by-line state of `ScansionScript.init(parsing:name:)`.
private struct ScansionParser {
    private enum Section { case metadata, header, body }

    let name: String
    private var section = Section.metadata
    private var title = ""
    private var description: [String] = []
    private var clients: [ScansionScript.Client] = []
    /// The client being declared: its name, line and properties so far.
    private var object: (name: String, line: Int, properties: [String: String])?
    private var actions: [ScansionScript.Action] = []
    /// The XML lines of the last `sends`/`receives`, while it takes XML.
    private var xml: [String]?

    init(name: String) { self.name = name }

    mutating func consume(_ line: String, number: Int) throws(ScansionSyntaxError) {
        let trimmed = line.trimmingSpaces
        let indented = line.first == " " || line.first == "\t"
        switch section {
        case .metadata where trimmed.hasPrefix("#"):
            let text = String(trimmed.drop { $0 == "#" }).trimmingSpaces
            if title.isEmpty { title = text } else { description.append(text) }
        case .metadata, .header:
            if trimmed.isEmpty || (isComment(trimmed) && !isSeparator(trimmed)) { return }
            if isSeparator(trimmed) {
                try endObject()
                section = .body
            } else if indented {
                try property(trimmed, number: number)
            } else {
                try startObject(trimmed, number: number)
            }
        case .body:
            if indented && !trimmed.isEmpty {
                guard xml != nil else { throw error(number, "XML with no sends/receives above it") }
                xml!.append(line)
            } else if trimmed.isEmpty {
                xml?.append("")  // kept in case it is inside text; trimmed at the ends
            } else if !isComment(trimmed) {
                try endAction()
                try action(trimmed, number: number)
            }
        }
    }

    mutating func finish() throws(ScansionSyntaxError) -> ScansionScript {
        guard section == .body else { throw error(0, "no '-----' line between the objects and the actions") }
        try endAction()
        return ScansionScript(
            name: name, title: title, description: description, clients: clients, actions: actions)
    }

    // MARK: - Header

    private mutating func startObject(_ line: String, number: Int) throws(ScansionSyntaxError) {
        try endObject()
        section = .header
        guard line.hasPrefix("[Client]") else {
            throw error(number, "only [Client] objects are supported: \(line)")
        }
        let clientName = String(line.dropFirst("[Client]".count)).trimmingSpaces
        guard !clientName.isEmpty else { throw error(number, "a client needs a name") }
        object = (clientName, number, [:])
    }

    private mutating func property(_ line: String, number: Int) throws(ScansionSyntaxError) {
        guard object != nil, let colon = line.firstIndex(of: ":") else {
            throw error(number, "expected 'key: value' under a [Client] line: \(line)")
        }
        let key = String(line[..<colon]).trimmingSpaces
        let value = String(line[line.index(after: colon)...]).trimmingSpaces
        switch key {
        case "jid", "password", "resource": break
        case "style" where ScansionScript.Style(rawValue: value) != nil: break
        case "registered" where value == "true" || value == "false": break
        case "style", "registered": throw error(number, "bad value for '\(key)': \(value)")
        default: throw error(number, "unknown property '\(key)'")
        }
        object!.properties[key] = value
    }

    private mutating func endObject() throws(ScansionSyntaxError) {
        guard let object else { return }
        self.object = nil
        guard let jid = object.properties["jid"], let password = object.properties["password"] else {
            throw error(object.line, "client '\(object.name)' needs a jid and a password")
        }
        clients.append(
            .init(
                name: object.name, jid: jid, password: password, resource: object.properties["resource"],
                style: object.properties["style"].flatMap(ScansionScript.Style.init) ?? .scansion,
                isRegistered: object.properties["registered"] != "false"))
    }

    // MARK: - Body

    private mutating func action(_ line: String, number: Int) throws(ScansionSyntaxError) {
        // Names may hold spaces ("Juliet's phone"): the longest declared
        // name the line starts with is the actor, the rest is the verb.
        let names = clients.map(\.name).filter { line.hasPrefix($0 + " ") || line.hasPrefix($0 + "\t") }
        guard let client = names.max(by: { $0.count < $1.count }) else {
            throw error(number, "no client named at the start of: \(line)")
        }
        let phrase = line.dropFirst(client.count).split(whereSeparator: { $0 == " " || $0 == "\t" })
            .joined(separator: " ")
        guard let step = Self.step(phrase) else { throw error(number, "unknown action '\(phrase)': \(line)") }
        actions.append(.init(line: number, client: client, step: step))
        switch step {
        case .sends, .receives, .sendsRaw, .receivesRaw: xml = []
        default: break
        }
    }

    /// The step a verb phrase names, or nil.
    private static func step(_ phrase: String) -> ScansionScript.Step? {
        switch phrase {
        case "connects": return .connects
        case "disconnects": return .disconnects
        case "sends", "sends:": return .sends("")
        case "receives", "receives:": return .receives("")
        case "receives nothing", "receives: nothing": return .receivesNothing
        case "sends raw", "sends raw:": return .sendsRaw("")
        case "receives raw", "receives raw:": return .receivesRaw([])
        case "opens a stream": return .opensStream
        case "starts TLS": return .startsTLS
        case "sends a keepalive": return .sendsKeepalive
        case "drops the connection": return .dropsConnection
        case "is disconnected": return .isDisconnected
        default: break
        }
        let words = phrase.split(separator: " ")
        if words.count == 3, words[0] == "authenticates", words[1] == "with",
            let mechanism = SASLMechanism(rawValue: String(words[2])), mechanism.scramHashFunction != nil,
            !mechanism.usesChannelBinding
        {
            return .authenticates(mechanism)
        }
        if words.count == 3, words[0] == "waits", words[2] == "seconds" || words[2] == "second",
            let seconds = Int(words[1]), seconds >= 0
        {
            return .waits(seconds: seconds)
        }
        return nil
    }

    /// Attaches the XML collected to the last action.
    private mutating func endAction() throws(ScansionSyntaxError) {
        guard let lines = xml, let last = actions.indices.last else { return }
        xml = nil
        let text = lines.joined(separator: "\n").trimmingSpaces
        switch actions[last].step {
        case .sends:
            guard !text.isEmpty else { throw error(actions[last].line, "sends without XML") }
            actions[last].step = .sends(text)
        case .receives:
            guard !text.isEmpty else { throw error(actions[last].line, "receives without XML (or 'nothing')") }
            actions[last].step = text == "nothing" ? .receivesNothing : .receives(text)
        case .sendsRaw:
            guard !text.isEmpty else { throw error(actions[last].line, "sends raw without text") }
            actions[last].step = .sendsRaw(lines.map(\.trimmingSpaces).joined())
        case .receivesRaw:
            let patterns = lines.map(\.trimmingSpaces).filter { !$0.isEmpty }
            guard !patterns.isEmpty else { throw error(actions[last].line, "receives raw without text") }
            actions[last].step = .receivesRaw(patterns)
        default:
            break
        }
    }

    // MARK: - Helpers

    private func isSeparator(_ line: String) -> Bool {
        line.count >= 3 && line.allSatisfy { $0 == "-" }
    }

    private func isComment(_ line: String) -> Bool {
        line.hasPrefix("#") || line.hasPrefix("//") || line.hasPrefix("--")
    }

    private func error(_ line: Int, _ message: String) -> ScansionSyntaxError {
        ScansionSyntaxError(script: name, line: line, message: message)
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
