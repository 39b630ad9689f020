import XMPPCore

/// One ad-hoc command (XEP-0050): its node, its name, the form of its
/// first stage (if it has one) and what it does with the submitted form.
///
/// A command with a form takes two stages: `execute` answers with the form
/// (`executing`, one action: `complete`), the submitted form completes it.
/// A command without one completes at once.
struct AdHocCommand: Sendable {
    /// A note of the last stage (XEP-0050 §6.3).
    struct Note: Sendable, Equatable {
        enum Kind: String, Sendable {
            case info, warn, error
        }

        var kind: Kind
        var text: String
    }

    /// What the last stage shows: notes, and a result form.
    struct Outcome: Sendable {
        var notes: [Note] = []
        var form: DataForm?
    }

    /// Completes with the outcome, on the loop.
    typealias Operation = (_ completion: @escaping (Result<Outcome, any Error>) -> Void) -> Void

    /// Starts the command with the submitted form (nil for a command
    /// without one); throws `AdHocError.badPayload` for a form it cannot
    /// read. An `AdminOperationError` the operation completes with becomes
    /// an error note (XEP-0050 §4.4: a command that completes but fails
    /// says why in a note).
    typealias Run = @Sendable (_ submitted: DataForm?, _ request: IQRequest) throws -> Operation

    /// The node, such as `http://jabber.org/protocol/admin#add-user`.
    var node: String
    /// The name disco#items shows.
    var name: String
    /// The form of the first stage; nil, the command completes at once.
    var form: Form?
    var run: Run

    /// A form to fill in (XEP-0004 §3.1), with the FORM_TYPE of XEP-0133.
    struct Form: Sendable {
        var title: String
        var instructions: String
        var fields: [DataForm.Field]

        /// The `<x type='form'/>`.
        var element: Element {
            var element = AdHocCommand.adminForm(type: "form", fields).element
            element.children.insert(contentsOf: [
                .element(Element("title", namespace: NS.dataForms, children: [.text(title)])),
                .element(Element("instructions", namespace: NS.dataForms, children: [.text(instructions)])),
            ], at: 0)
            return element
        }
    }

    /// A form of `type` whose first field is the hidden FORM_TYPE of
    /// XEP-0133 (`http://jabber.org/protocol/admin`).
    static func adminForm(type: String, _ fields: [DataForm.Field]) -> DataForm {
        DataForm(type: type, fields: [DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.admin])] + fields)
    }
}

/// The errors of XEP-0050 §4.6: a general condition with a specific one in
/// the commands namespace.
enum AdHocError {
    /// The action is not one XEP-0050 defines.
    static let malformedAction = error(.badRequest, "malformed-action", "unknown action")
    /// The action is not allowed at this stage.
    static let badAction = error(.badRequest, "bad-action", "that action is not allowed at this stage")
    /// The session id is unknown, or not the requester's.
    static let badSessionID = error(.badRequest, "bad-sessionid", "no such command session")
    /// The session expired.
    static let sessionExpired = error(.notAllowed, "session-expired", "the command session expired")

    /// The submitted data is not what the command takes.
    static func badPayload(_ text: String) -> StanzaError {
        error(.badRequest, "bad-payload", text)
    }

    private static func error(_ condition: StanzaError.Condition, _ specific: String, _ text: String) -> StanzaError {
        StanzaError(condition, text: text, applicationCondition: Element(specific, namespace: NS.commands))
    }
}

extension DataForm {
    /// The values of the field `name`, empty ones left out.
    func values(_ name: String) -> [String] {
        fields.first { $0.name == name }?.values.filter { !$0.isEmpty } ?? []
    }

    /// The first non-empty value of the field `name`.
    /// - Throws: `bad-payload` when there is none.
    func required(_ name: String) throws(StanzaError) -> String {
        guard let value = values(name).first else { throw AdHocError.badPayload("the field \(name) is required") }
        return value
    }
}
