import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// A service at `echo.localhost` that answers messages with their body
/// and presence with presence: a feature the router knows nothing of,
/// found only through the hooks it installs.
private struct EchoService: ServerFeature {
    func install(_ hooks: Hooks) {
        hooks.onMessage(to: [.service("echo.localhost")]) { message in
            guard let body = message.element.childText("body"), body != "ignore me" else { return .passed }
            var echo = Element("message", namespace: NS.client, attributes: ["from": "echo.localhost", "type": "chat"])
            echo[attribute: "to"] = message.sender.description
            echo.append(Element("body", namespace: NS.client, children: [.text(body)]))
            message.session.deliver(echo)
            return .handled
        }
        hooks.onPresence([.service("echo.localhost")]) { presence in
            let echo = Element("presence", namespace: NS.client, attributes: ["from": "echo.localhost", "to": presence.sender.description])
            presence.session.deliver(echo)
            return .handled
        }
    }
}

/// Stamps messages to bare JIDs before delivery, and keeps back (takes)
/// the ones whose body is "swallow".
private struct Stamper: ServerFeature {
    func install(_ hooks: Hooks) {
        hooks.onMessage(to: [.bare], priority: 20) { message in
            message.element.childText("body") == "swallow" ? .handled : .passed
        }
        hooks.onMessage(to: [.bare], priority: 10) { message in
            message.element.append(Element("stamped", namespace: "urn:example:stamp"))
            return .passed
        }
        hooks.onPreRoute { stanza in
            stanza.element.child("veto", namespace: "urn:example:stamp") != nil ? .handled : .passed
        }
    }
}

/// Records the order in which observers of one event run.
private final class Calls: @unchecked Sendable {
    var names: [String] = []
}

private struct ObservedEvent: ServerEvent {}

private struct Observers: ServerFeature {
    let calls: Calls
    func install(_ hooks: Hooks) {
        hooks.on(ObservedEvent.self) { _ in calls.names.append("default, first") }
        hooks.on(ObservedEvent.self, priority: 5) { _ in calls.names.append("high") }
        hooks.on(ObservedEvent.self) { _ in calls.names.append("default, second") }
    }
}

private struct Broken: Error {}

/// IQ handlers in each way they may answer.
private struct Answers: ServerFeature {
    func install(_ hooks: Hooks) {
        hooks.onIQ(.get, "urn:example:answers", "refuse", to: [.host]) { _ in
            throw StanzaError(.notAcceptable, text: "refused on purpose")
        }
        hooks.onIQ(.get, "urn:example:answers", "break", to: [.host]) { _ in throw Broken() }
        hooks.onIQ(.get, "urn:example:answers", "store", to: [.host]) { _ in
            .afterStorage({ _ in throw Broken() }) { .result() }
        }
        hooks.onIQ(.get, "urn:example:answers", "then", to: [.host]) { request in
            .afterStorage({ _ in 42 }) { value in
                .result(Element("value", namespace: "urn:example:answers", children: [.text(String(value))])) {
                    request.session.deliver(Element("message", namespace: NS.client, attributes: ["id": "after"]))
                }
            }
        }
    }
}

/// The typed stanza events: service domains, priorities, vetoes, the
/// fallback for what nobody takes, typed events, and the IQ answer contract.
@Suite struct StanzaEventsTests {
    private func pair(extra: [any ServerFeature]) throws -> (TestServer, TestClient, TestClient) {
        let (server, romeo, juliet) = try romeoAndJuliet(extraFeatures: extra)
        juliet.send("<presence/>")
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()
        return (server, romeo, juliet)
    }

    @Test func aServiceDomainIsAFeatureThatRegistersForIt() throws {
        let (_, romeo, _) = try pair(extra: [EchoService()])
        romeo.send("<message to='echo.localhost' type='chat'><body>hello</body></message>")
        let echo = try romeo.receiveOne()
        #expect(echo[attribute: "from"] == "echo.localhost" && echo.childText("body") == "hello")
        romeo.send("<presence to='echo.localhost'/>")
        #expect(try romeo.receiveOne()[attribute: "from"] == "echo.localhost")
        // What the service passes on is answered once, by the router.
        romeo.send("<message to='echo.localhost' type='chat' id='x'><body>ignore me</body></message>")
        let error = try romeo.receiveOne()
        #expect(error[attribute: "type"] == "error" && error[attribute: "id"] == "x")
        #expect(error.child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
    }

    @Test func withoutTheServiceItsDomainIsRemote() throws {
        let (_, romeo, _) = try pair(extra: [])
        romeo.send("<message to='echo.localhost' type='chat' id='x'><body>hello</body></message>")
        #expect(try romeo.receiveOne().child("error")?.child("remote-server-not-found", namespace: NS.stanzas) != nil)
    }

    @Test func handlersRunByPriorityAndTheFirstToTakeItStopsIt() throws {
        let (_, romeo, juliet) = try pair(extra: [Stamper()])
        romeo.send("<message to='juliet@localhost' type='chat'><body>hi</body></message>")
        let delivered = try juliet.receiveOne()
        #expect(delivered.childText("body") == "hi")
        #expect(delivered.child("stamped", namespace: "urn:example:stamp") != nil)
        romeo.send("<message to='juliet@localhost' type='chat'><body>swallow</body></message>")
        #expect(juliet.receiveElements().isEmpty)
        #expect(romeo.receiveElements().isEmpty, "taken: no error either")
    }

    @Test func aPreRouteHookVetoesAnyStanza() throws {
        let (_, romeo, juliet) = try pair(extra: [Stamper()])
        romeo.send("<message to='juliet@localhost/balcony' type='chat'><body>hi</body><veto xmlns='urn:example:stamp'/></message>")
        romeo.send("<iq to='juliet@localhost/balcony' type='get' id='v'><veto xmlns='urn:example:stamp'/></iq>")
        #expect(juliet.receiveElements().isEmpty)
        #expect(romeo.receiveElements().isEmpty)
    }

    @Test func observersRunByPriorityThenInstallOrder() throws {
        let calls = Calls()
        let (server, _, _) = try pair(extra: [Observers(calls: calls)])
        server.context.hooks.fire(ObservedEvent())
        #expect(calls.names == ["high", "default, first", "default, second"])
    }

    @Test func aThrownStanzaErrorIsTheAnswer() throws {
        let (server, romeo, _) = try pair(extra: [Answers()])
        romeo.send("<iq to='localhost' type='get' id='r'><refuse xmlns='urn:example:answers'/></iq>")
        let error = try romeo.receiveOne().child("error")
        #expect(error?.child("not-acceptable", namespace: NS.stanzas) != nil)
        #expect(error?.childText("text", namespace: NS.stanzas) == "refused on purpose")
        #expect(!server.logLines.lines.contains { $0.contains("failed") })
    }

    @Test func anyOtherErrorIsAnInternalServerErrorAndOneLogLine() throws {
        let (server, romeo, _) = try pair(extra: [Answers()])
        for (id, name) in [("b", "break"), ("s", "store")] {
            let before = server.logLines.lines.count
            romeo.send("<iq to='localhost' type='get' id='\(id)'><\(name) xmlns='urn:example:answers'/></iq>")
            let reply = try romeo.receiveOne()
            #expect(reply[attribute: "id"] == id)
            #expect(reply.child("error")?.child("internal-server-error", namespace: NS.stanzas) != nil)
            let logged = server.logLines.lines[before...].filter { $0.contains("Broken") }
            #expect(logged.count == 1)
        }
    }

    @Test func aResultAfterStorageComesBeforeWhatFollowsIt() throws {
        let (_, romeo, _) = try pair(extra: [Answers()])
        romeo.send("<iq to='localhost' type='get' id='t'><then xmlns='urn:example:answers'/></iq>")
        let elements = romeo.receiveElements()
        #expect(elements.map { $0[attribute: "id"] } == ["t", "after"])
        #expect(elements.first?.child("value", namespace: "urn:example:answers")?.text == "42")
    }
}
