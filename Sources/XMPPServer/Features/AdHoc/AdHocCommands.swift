import XMPPCore

/// XEP-0050: Ad-Hoc Commands, on the server's JID, carrying the service
/// administration commands of XEP-0133 (`AdminCommands`) for the accounts
/// the `admins` setting names.
///
/// Discovery (§2): the domain's disco#info lists the commands feature;
/// disco#items of the node `http://jabber.org/protocol/commands` lists the
/// commands to admins and nothing to anyone else (as Prosody does: a
/// requester sees the commands it may run); disco#info of a command's
/// node answers admins with its identity and `forbidden` to others.
///
/// Execution (§3, §4): non-admins get `forbidden`, an unknown node
/// `item-not-found`, and the specific errors of §4.6 (`malformed-action`,
/// `bad-action`, `bad-sessionid`, `session-expired`, `bad-payload`) come
/// from `AdHocError`. Sessions between stages are bounded by
/// `AdHocSessions`.
public struct AdHocCommands: ServerFeature {
    private let commands: [String: AdHocCommand]
    private let sessions = AdHocSessions()

    /// The feature with the XEP-0133 commands.
    public init() {
        commands = Dictionary(uniqueKeysWithValues: AdminCommands.all.map { ($0.node, $0) })
    }

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.commands)
        hooks.onHostDiscoNode(NS.commands) { request in
            var query = Element("query", namespace: request.iq.payload!.namespace, attributes: ["node": NS.commands])
            if query.namespace == NS.discoInfo {
                query.append(DiscoAnswer.identity(category: "automation", type: "command-list", name: "Commands"))
            } else if Self.isAdmin(request) {
                for command in commands.values.sorted(by: { $0.node < $1.node }) {
                    query.append(Element(
                        "item", namespace: NS.discoItems,
                        attributes: ["jid": request.server.domain, "node": command.node, "name": command.name]))
                }
            }
            return .result(query)
        }
        for command in commands.values {
            hooks.onHostDiscoNode(command.node) { request in
                guard request.iq.payload!.namespace == NS.discoInfo else {
                    return .result(Element("query", namespace: NS.discoItems, attributes: ["node": command.node]))
                }
                guard Self.isAdmin(request) else { throw Self.forbidden }
                var query = Element("query", namespace: NS.discoInfo, attributes: ["node": command.node])
                query.append(DiscoAnswer.identity(category: "automation", type: "command-node", name: command.name))
                return .result(DiscoAnswer.adding([NS.commands, NS.dataForms], to: query))
            }
        }
        hooks.onIQ(.set, NS.commands, "command", to: [.host], execute)
    }

    private static let forbidden = StanzaError(.forbidden, text: "only the server's admins may run its commands")

    /// Whether the request comes from an account the `admins` setting names.
    private static func isAdmin(_ request: IQRequest) -> Bool {
        guard let username = request.session.username else { return false }
        return request.server.config.admins.contains(username)
    }

    /// XEP-0050 §3.4, §3.5: starts, continues, completes or cancels a
    /// command.
    private func execute(_ request: IQRequest) throws -> IQAnswer {
        let element = request.iq.payload!
        guard let node = element[attribute: "node"], let command = commands[node] else {
            throw StanzaError(.itemNotFound, text: "no such command")
        }
        guard Self.isAdmin(request), let requester = request.session.jid else { throw Self.forbidden }
        let action = element[attribute: "action"] ?? "execute"
        guard ["execute", "cancel", "prev", "next", "complete"].contains(action) else { throw AdHocError.malformedAction }
        let now = request.server.loop.now
        guard let id = element[attribute: "sessionid"] else {
            guard action == "execute" else { throw action == "cancel" ? AdHocError.badSessionID : AdHocError.badAction }
            guard let form = command.form else { return try complete(command, request, sessionID: nil, submitted: nil) }
            let id = sessions.open(node, for: requester, now: now)
            var reply = Self.reply(node, id, status: "executing")
            var actions = Element("actions", namespace: NS.commands, attributes: ["execute": "complete"])
            actions.append(Element("complete", namespace: NS.commands))
            reply.append(actions)
            reply.append(form.element)
            return .result(reply)
        }
        guard action != "prev", action != "next" else { throw AdHocError.badAction }
        do {
            try sessions.close(id, node: node, for: requester, now: now)
        } catch .unknown {
            throw AdHocError.badSessionID
        } catch .expired {
            throw AdHocError.sessionExpired
        }
        if action == "cancel" { return .result(Self.reply(node, id, status: "canceled")) }
        guard let submitted = element.child("x", namespace: NS.dataForms).flatMap(DataForm.init), submitted.type == "submit",
            submitted.formType == nil || submitted.formType == NS.admin
        else { throw AdHocError.badPayload("expected the submitted form of \(NS.admin)") }
        return try complete(command, request, sessionID: id, submitted: submitted)
    }

    /// The last stage: runs the command and answers `completed` with its
    /// notes and result form.
    private func complete(
        _ command: AdHocCommand, _ request: IQRequest, sessionID: String?, submitted: DataForm?
    ) throws -> IQAnswer {
        let operation = try command.run(submitted, request)
        let id = sessionID ?? Base64.encodeURLSafe(Crypto.randomBytes(count: 12))
        return .after({ completion in
            operation { result in
                if case .failure(let error as AdminOperationError) = result {
                    return completion(.success(AdHocCommand.Outcome(notes: [.init(kind: .error, text: error.description)])))
                }
                completion(result)
            }
        }) { outcome in
            var reply = Self.reply(command.node, id, status: "completed")
            for note in outcome.notes {
                reply.append(Element(
                    "note", namespace: NS.commands, attributes: ["type": note.kind.rawValue], children: [.text(note.text)]))
            }
            if let form = outcome.form { reply.append(form.element) }
            request.session.log.info("\(request.iq.from?.description ?? "?") ran the command \(command.node)")
            return .result(reply)
        }
    }

    /// `<command node sessionid status/>`.
    private static func reply(_ node: String, _ id: String, status: String) -> Element {
        Element("command", namespace: NS.commands, attributes: ["node": node, "sessionid": id, "status": status])
    }
}
