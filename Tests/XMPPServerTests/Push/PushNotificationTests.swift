import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0357 on the in-memory server: Romeo's phone enables the app's push
/// service (the component `push.localhost`), and what reaches him while
/// his session is detached, or while he has none, is announced there.
@Suite struct PushNotificationTests {
    static let options =
        "<x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE'><value>\(NS.pubsubPublishOptions)</value></field>"
        + "<field var='secret'><value>eruio234vzxc2kla-91</value></field></x>"

    /// Romeo (orchard, stream management on, push enabled to node `n1`),
    /// Juliet, and the push service connected.
    private func setUp(
        _ change: (inout ServerConfig) -> Void = { _ in }
    ) throws -> (TestServer, romeo: TestClient, juliet: TestClient, push: TestComponent, enabled: Element) {
        var config = ServerConfig()
        config.components.services = [ServerConfig.Component(domain: "push", secret: "s3cret")]
        change(&config)
        let (server, romeo, juliet, enabled) = try streamManagementCouple(config: config.validated())
        let push = TestComponent(server: server)
        try push.connect(to: "push.localhost")
        romeo.send("<iq type='set' id='e1'><enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='n1'>\(Self.options)</enable></iq>")
        let result = try romeo.receiveOne()
        #expect(result[attribute: "type"] == "result" && result[attribute: "id"] == "e1")
        return (server, romeo, juliet, push, enabled)
    }

    /// A new connection of Romeo's that resumes the session `enabled`
    /// named, having handled `h` of its stanzas.
    private func resume(_ enabled: Element, on server: TestServer, acknowledging h: Int) throws -> TestClient {
        let again = server.connect()
        try again.openStream()
        try again.authenticate("romeo", "pw")
        again.send("<resume xmlns='urn:xmpp:sm:3' previd='\(enabled[attribute: "id"]!)' h='\(h)'/>")
        return again
    }

    private func chat(_ text: String, from sender: TestClient, to: String = "romeo@localhost") {
        sender.send("<message type='chat' to='\(to)' id='\(text)'><body>\(text)</body></message>")
    }

    /// The notifications the push service got since the last call.
    private func notifications(_ push: TestComponent) -> [Element] {
        push.receiveElements().filter { $0.name == "iq" && $0.child("pubsub", namespace: NS.pubsub) != nil }
    }

    /// The summary form's fields of `notification`, by name.
    private func summary(_ notification: Element) throws -> [String: String] {
        let form = try #require(
            notification.child("pubsub", namespace: NS.pubsub)?.child("publish", namespace: NS.pubsub)?
                .child("item", namespace: NS.pubsub)?.child("notification", namespace: NS.push)?
                .child("x", namespace: NS.dataForms).flatMap(DataForm.init))
        return Dictionary(uniqueKeysWithValues: form.fields.compactMap { field in field.name.map { ($0, field.values.first ?? "") } })
    }

    /// Lets `duration` pass a minute at a time, Juliet sending whitespace
    /// and the push service answering the server's pings; returns the
    /// notifications the push service got meanwhile.
    private func pass(
        _ duration: Duration, _ server: TestServer, juliet: TestClient, push: TestComponent
    ) -> [Element] {
        var notifications: [Element] = []
        var elapsed = Duration.zero
        while elapsed < duration {
            server.loop.advance(by: .seconds(60))
            elapsed += .seconds(60)
            _ = juliet.receiveElements()
            juliet.send(" ")
            for element in push.receiveElements() {
                if element.child("ping", namespace: NS.ping) != nil {
                    push.send("<iq type='result' from='push.localhost' to='localhost' id='\(element[attribute: "id"]!)'/>")
                } else if element.child("pubsub", namespace: NS.pubsub) != nil {
                    notifications.append(element)
                }
            }
        }
        return notifications
    }

    @Test func theAccountAdvertisesPush() throws {
        let (_, romeo, _, _, _) = try setUp()
        romeo.send("<iq type='get' id='d1' to='romeo@localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        let features = try romeo.receiveOne().child("query", namespace: NS.discoInfo)?.elements.compactMap {
            $0.name == "feature" ? $0[attribute: "var"] : nil
        }
        #expect(features?.contains(NS.push) == true)
    }

    @Test func aMessageToTheDetachedSessionIsAnnouncedOnceEachAndResumptionDeliversThemOnce() throws {
        let (server, romeo, juliet, push, enabled) = try setUp()
        romeo.session.transportClosed()
        chat("one", from: juliet)
        let first = notifications(push)
        #expect(first.count == 1)
        let notification = try #require(first.first)
        #expect(notification[attribute: "to"] == "push.localhost" && notification[attribute: "from"] == "localhost")
        #expect(notification.child("pubsub", namespace: NS.pubsub)?.child("publish", namespace: NS.pubsub)?[attribute: "node"] == "n1")
        #expect(
            try summary(notification) == [
                "FORM_TYPE": NS.pushSummary, "message-count": "1", "last-message-sender": "juliet@localhost/balcony",
            ])
        let options = notification.child("pubsub", namespace: NS.pubsub)?.child("publish-options", namespace: NS.pubsub)?
            .child("x", namespace: NS.dataForms).flatMap(DataForm.init)
        #expect(options?.fields.first { $0.name == "secret" }?.values == ["eruio234vzxc2kla-91"])
        // A chat state wakes nobody; the next message counts two.
        juliet.send("<message type='chat' to='romeo@localhost'><composing xmlns='http://jabber.org/protocol/chatstates'/></message>")
        #expect(notifications(push).isEmpty)
        chat("two", from: juliet)
        let second = try #require(notifications(push).first)
        #expect(try summary(second)["message-count"] == "2")
        push.send("<iq type='result' from='push.localhost' to='localhost' id='\(second[attribute: "id"]!)'/>")

        let again = try resume(enabled, on: server, acknowledging: 2)
        let bodies = again.receiveElements().compactMap { $0.name == "message" ? $0.childText("body") : nil }
        #expect(bodies == ["one", "two"])
        chat("three", from: juliet)
        #expect(again.receiveElements().compactMap { $0.childText("body") } == ["three"])
        #expect(notifications(push).isEmpty, "a connected session needs no push")
    }

    @Test func aPushSessionWaitsHoursToBeResumedAndThenGetsEverythingOnce() throws {
        let (server, romeo, juliet, push, enabled) = try setUp()
        romeo.session.transportClosed()
        var sent = pass(.seconds(3600), server, juliet: juliet, push: push)
        chat("after an hour", from: juliet)
        sent += pass(.seconds(10 * 3600), server, juliet: juliet, push: push)
        chat("after eleven", from: juliet)
        sent += notifications(push)
        #expect(try sent.map { try summary($0)["message-count"] } == ["1", "2"])
        let again = try resume(enabled, on: server, acknowledging: 1)
        let elements = again.receiveElements()
        #expect(elements.first?.name == "resumed")
        #expect(elements.compactMap { $0.name == "message" ? $0.childText("body") : nil } == ["after an hour", "after eleven"])
    }

    @Test func pastThePushResumeTimeoutTheSessionEndsAndItsMessagesWaitOffline() throws {
        let (server, romeo, juliet, push, _) = try setUp { $0.push.resumeTimeout = .seconds(600) }
        romeo.session.transportClosed()
        chat("queued", from: juliet)
        var sent = pass(.seconds(540), server, juliet: juliet, push: push)
        #expect(server.context.sessions.session(try JID("romeo@localhost/orchard")) != nil)
        sent += pass(.seconds(120), server, juliet: juliet, push: push)
        #expect(server.context.sessions.session(try JID("romeo@localhost/orchard")) == nil)
        #expect(sent.count == 2, "queued, then handed to offline storage")
        let late = server.connect()
        try late.login("romeo", "pw", resource: "orchard")
        late.send("<presence/>")
        #expect(late.receiveElements().compactMap { $0.name == "message" ? $0.childText("body") : nil } == ["queued"])
    }

    @Test func withoutPushTheResumptionWindowIsResumeTimeout() throws {
        let (server, romeo, _, _, _) = try setUp()
        romeo.send("<iq type='set' id='x'><disable xmlns='urn:xmpp:push:0' jid='push.localhost'/></iq>")
        _ = romeo.receiveElements()
        romeo.session.transportClosed()
        server.loop.advance(by: .seconds(301))
        #expect(server.context.sessions.session(try JID("romeo@localhost/orchard")) == nil)
    }

    /// A configuration with the push service `push.localhost`.
    private static func configWithPushService() throws -> ServerConfig {
        var config = ServerConfig()
        config.components.services = [ServerConfig.Component(domain: "push", secret: "s3cret")]
        return try config.validated()
    }

    /// Connects the push service and has Romeo turn on stream management
    /// with resumption, then push; returns the service and Romeo's
    /// `<enabled/>`.
    private func enablePush(on server: TestServer, for romeo: TestClient) throws -> (TestComponent, enabled: Element) {
        let push = TestComponent(server: server)
        try push.connect(to: "push.localhost")
        romeo.send("<enable xmlns='urn:xmpp:sm:3' resume='true'/>")
        romeo.send("<iq type='set' id='e1'><enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='n1'/></iq>")
        return (push, try #require(romeo.receiveElements().first { $0.name == "enabled" }))
    }

    @Test func contactsSeeAHibernatingResourceAsXAUntilItIsResumed() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts(config: Self.configWithPushService())
        romeo.send("<presence><status>in the orchard</status><priority>5</priority></presence>")
        let (_, enabled) = try enablePush(on: server, for: romeo)
        _ = juliet.receiveElements()
        romeo.session.transportClosed()
        let idle = try #require(juliet.receiveElements().first { $0.name == "presence" })
        #expect(idle[attribute: "from"] == "romeo@localhost/orchard" && idle[attribute: "type"] == nil)
        #expect(idle.childText("show") == "xa" && idle.childText("status") == "in the orchard")
        #expect(idle.childText("priority") == "5")

        let again = try resume(enabled, on: server, acknowledging: 0)
        #expect(again.receiveElements().first?.name == "resumed")
        let back = try #require(juliet.receiveElements().first { $0.name == "presence" })
        #expect(back.childText("show") == nil && back.childText("status") == "in the orchard")
        #expect(back.child("delay", namespace: NS.delay) == nil)
    }

    @Test func aGroupChatMessageWakesTheAppOnlyWhenItNamesItsNickname() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden(config: Self.configWithPushService())
        let (push, _) = try enablePush(on: server, for: romeo)
        romeo.session.transportClosed()
        juliet.say("good night, all", in: "garden")
        juliet.say("the orchard walls are high", in: "garden")
        #expect(notifications(push).isEmpty, "no mention: romeo is not in 'orchard walls'")
        juliet.say("Romeo, Romeo!", in: "garden")
        let notification = try #require(notifications(push).first)
        #expect(try summary(notification)["last-message-sender"] == "garden@conference.localhost/juliet")
        #expect(try summary(notification)["message-count"] == "1")
        #expect(Mentions(in: "wherefore art thou, romeo?").name("Romeo"))
        #expect(!Mentions(in: "romeos everywhere").name("romeo"))
        #expect(Mentions(in: "ask romeo2 or romeo").name("romeo"))
        #expect(Mentions(in: "Where is Friar Laurence?").name("friar laurence"))
        #expect(!Mentions(in: "the friar laurences").name("Friar Laurence"))
    }

    @Test func theBodyGoesOnlyWhenTheOperatorAllowsIt() throws {
        let (_, romeo, juliet, push, _) = try setUp { $0.push.includeBody = true }
        romeo.session.transportClosed()
        chat("wherefore", from: juliet)
        let notification = try #require(notifications(push).first)
        #expect(try summary(notification)["last-message-body"] == "wherefore")
    }

    @Test func aMessageStoredOfflineIsAnnouncedWithTheBacklogCount() throws {
        let (server, romeo, juliet, push, _) = try setUp()
        romeo.send("<iq type='set' id='e2'><enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='n2'/></iq>")
        #expect(try romeo.receiveOne()[attribute: "type"] == "result")
        romeo.send("</stream:stream>")
        server.loop.run()
        _ = push.receiveElements()
        chat("one", from: juliet)
        chat("two", from: juliet)
        let sent = notifications(push)
        #expect(sent.count == 4, "two messages, each to both nodes")
        let nodes = sent.compactMap { $0.child("pubsub", namespace: NS.pubsub)?.child("publish", namespace: NS.pubsub)?[attribute: "node"] }
        #expect(nodes == ["n1", "n2", "n1", "n2"])
        #expect(try sent.map { try summary($0)["message-count"] } == ["1", "1", "2", "2"])
        #expect(sent[1].child("pubsub", namespace: NS.pubsub)?.child("publish-options", namespace: NS.pubsub) == nil)
    }

    @Test func aSubscriptionRequestIsAnnouncedWithThePendingCount() throws {
        let (server, romeo, juliet, push, _) = try setUp()
        romeo.send("</stream:stream>")
        server.loop.run()
        _ = push.receiveElements()
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        let notification = try #require(notifications(push).first)
        #expect(
            try summary(notification) == [
                "FORM_TYPE": NS.pushSummary, "pending-subscription-count": "1", "last-message-sender": "juliet@localhost",
            ])
        #expect(notifications(push).isEmpty, "once")
    }

    @Test func disablingStopsTheNotifications() throws {
        let (_, romeo, juliet, push, _) = try setUp()
        romeo.send("<iq type='set' id='x1'><disable xmlns='urn:xmpp:push:0' jid='push.localhost' node='n1'/></iq>")
        #expect(try romeo.receiveOne()[attribute: "type"] == "result")
        romeo.session.transportClosed()
        chat("one", from: juliet)
        #expect(notifications(push).isEmpty)
    }

    @Test func errorsInARowDisableTheRegistrationAndAResultClearsThem() throws {
        let (server, romeo, juliet, push, _) = try setUp { $0.push.maxFailures = 2 }
        romeo.session.transportClosed()
        func answer(_ type: String) throws {
            let notification = try #require(notifications(push).first)
            let error = type == "error" ? "<error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error>" : ""
            push.send("<iq type='\(type)' from='push.localhost' to='localhost' id='\(notification[attribute: "id"]!)'>\(error)</iq>")
            server.loop.run()
        }
        chat("1", from: juliet)
        try answer("error")
        chat("2", from: juliet)
        try answer("result")
        chat("3", from: juliet)
        try answer("error")
        chat("4", from: juliet)
        try answer("error")
        #expect(server.logLines.lines.contains { $0.contains("push service push.localhost of romeo refused 2 in a row; disabled") })
        chat("5", from: juliet)
        #expect(notifications(push).isEmpty)
    }

    @Test func anAnswerFromElsewhereIsNotTaken() throws {
        let (server, romeo, juliet, push, _) = try setUp {
            $0.push.maxFailures = 1
            $0.components.services.append(ServerConfig.Component(domain: "gateway", secret: "s3cret"))
        }
        let other = TestComponent(server: server)
        try other.connect(to: "gateway.localhost")
        romeo.session.transportClosed()
        chat("1", from: juliet)
        let id = try #require(notifications(push).first?[attribute: "id"])
        other.send("<iq type='error' from='gateway.localhost' to='localhost' id='\(id)'><error type='cancel'><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
        chat("2", from: juliet)
        #expect(notifications(push).count == 1)
    }

    @Test func enablingNeedsALocalServiceAndAPublishOptionsForm() throws {
        let (_, romeo, _, _, _) = try setUp { $0.push.maxRegistrations = 2 }
        func condition(_ enable: String) throws -> String? {
            romeo.send("<iq type='set' id='e'>\(enable)</iq>")
            let reply = try #require(romeo.receiveElements().first { $0.name == "iq" })
            return reply[attribute: "type"] == "error" ? reply.child("error")?.elements.first?.name : "result"
        }
        #expect(try condition("<enable xmlns='urn:xmpp:push:0' jid='p2.siacs.eu' node='a'/>") == "remote-server-not-found")
        #expect(try condition("<enable xmlns='urn:xmpp:push:0' node='a'/>") == "bad-request")
        #expect(
            try condition(
                "<enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='a'><x xmlns='jabber:x:data' type='submit'/></enable>")
                == "bad-request")
        #expect(try condition("<enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='a'/>") == "result")
        // XMPPFramework's XMPPIQ+XEP_0357 sends its form without a type.
        #expect(
            try condition(
                "<enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='a'><x xmlns='jabber:x:data'>"
                    + "<field var='FORM_TYPE'><value>\(NS.pubsubPublishOptions)</value></field>"
                    + "<field var='token'><value>t</value></field></x></enable>") == "result", "again is no new one")
        #expect(try condition("<enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='b'/>") == "resource-constraint")
    }

    @Test func offThePushRequestsAreNotImplemented() throws {
        var config = ServerConfig()
        config.push.enabled = false
        let server = try TestServer(config: config.validated())
        try server.addUser("romeo", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        romeo.send("<iq type='set' id='e'><enable xmlns='urn:xmpp:push:0' jid='push.localhost' node='a'/></iq>")
        #expect(try romeo.receiveOne().child("error")?.elements.first?.name == "feature-not-implemented")
    }
}
