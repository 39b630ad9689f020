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
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
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
        guard ["jid", "password", "resource"].contains(key) else { throw error(number, "unknown property '\(key)'") }
        object!.properties[key] = String(line[line.index(after: colon)...]).trimmingSpaces
    }

    private mutating func endObject() throws(ScansionSyntaxError) {
        guard let object else { return }
        self.object = nil
        guard let jid = object.properties["jid"], let password = object.properties["password"] else {
            throw error(object.line, "client '\(object.name)' needs a jid and a password")
        }
        clients.append(.init(name: object.name, jid: jid, password: password, resource: object.properties["resource"]))
    }

    // MARK: - Body

    private mutating func action(_ line: String, number: Int) throws(ScansionSyntaxError) {
        var words = line.split(separator: " ").map(String.init)
        var nothing = false
        if words.count >= 3, words.last == "nothing" {
            nothing = true
            words.removeLast()
        }
        guard words.count >= 2 else { throw error(number, "not an action: \(line)") }
        let verb = String(words.removeLast().trimmingSuffix(":"))
        let client = words.joined(separator: " ")
        guard clients.contains(where: { $0.name == client }) else { throw error(number, "no client named '\(client)'") }
        let step: ScansionScript.Step
        switch (verb, nothing) {
        case ("connects", false): step = .connects
        case ("disconnects", false): step = .disconnects
        case ("sends", false): step = .sends("")
        case ("receives", false): step = .receives("")
        case ("receives", true): step = .receivesNothing
        default: throw error(number, "unknown action '\(verb)': \(line)")
        }
        actions.append(.init(line: number, client: client, step: step))
        if case .sends = step { xml = [] }
        if case .receives = step { xml = [] }
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

    /// Without one trailing `suffix`, if present.
    func trimmingSuffix(_ suffix: String) -> Substring {
        hasSuffix(suffix) ? dropLast(suffix.count) : Substring(self)
    }
}
