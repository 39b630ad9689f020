import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A server whose `admins` names juliet, with juliet (the admin, at
/// `balcony`) and romeo (`orchard`) logged in (`romeoAndJuliet`).
func adminAndRomeo() throws -> (TestServer, TestClient, TestClient) {
    var config = ServerConfig()
    config.admins = ["juliet"]
    let (server, romeo, juliet) = try romeoAndJuliet(config: try config.validated())
    return (server, juliet, romeo)
}

/// The node of the XEP-0133 command `name`.
func adminNode(_ name: String) -> String { "http://jabber.org/protocol/admin#\(name)" }

extension TestClient {
    /// Sends a XEP-0050 `<command/>` for `node` to the server and returns
    /// the reply: with `action` and `sessionID` when given, and a submitted
    /// form of `fields` (var: values) when given.
    func command(
        _ node: String, action: String? = nil, sessionID: String? = nil, submit fields: [(String, [String])]? = nil,
        formType: String = "http://jabber.org/protocol/admin"
    ) -> Element? {
        var attributes = "node='\(node)'"
        if let action { attributes += " action='\(action)'" }
        if let sessionID { attributes += " sessionid='\(sessionID)'" }
        var form = ""
        if let fields {
            form = "<x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE'><value>\(formType)</value></field>"
            for (name, values) in fields {
                form += "<field var='\(name)'>" + values.map { "<value>\($0)</value>" }.joined() + "</field>"
            }
            form += "</x>"
        }
        send("<iq type='set' id='cmd' to='localhost'><command xmlns='http://jabber.org/protocol/commands' \(attributes)>\(form)</command></iq>")
        return receiveElements().first { $0[attribute: "id"] == "cmd" }
    }

    /// Runs a form command to its end: executes `node`, then submits
    /// `fields` in its session; returns the last reply.
    func run(_ node: String, _ fields: [(String, [String])]) -> Element? {
        let first = command(node)?.child("command", namespace: NS.commands)
        return command(node, action: "complete", sessionID: first?[attribute: "sessionid"], submit: fields)
    }
}

extension Element {
    /// The `<command/>` of an ad-hoc reply.
    var adHoc: Element? { child("command", namespace: NS.commands) }

    /// The texts of the `<note/>`s of type `type` in an ad-hoc reply.
    func notes(_ type: String) -> [String] {
        adHoc?.elements.filter { $0.name == "note" && $0[attribute: "type"] == type }.map(\.text) ?? []
    }

    /// The XEP-0050 specific condition of an error reply.
    var commandErrorCondition: String? {
        child("error")?.elements.first { $0.namespace == NS.commands }?.name
    }

    /// The values of the field `name` of the data form in an ad-hoc reply.
    func formValues(_ name: String) -> [String]? {
        adHoc?.child("x", namespace: NS.dataForms).flatMap(DataForm.init)?.fields.first { $0.name == name }?.values
    }
}
