import Testing
import XMPPCore

@testable import XMPPTestSupport

/// The scansion parser, matcher and runner themselves: they must accept
/// Prosody's format and, above all, be able to fail.
@Suite("Scansion runner")
struct ScansionRunnerTests {
    // MARK: - Parser

    @Test func parsesObjectsActionsAndComments() throws {
        let script = try ScansionScript(
            parsing: """
                # A title
                # More words

                [Client] Juliet's phone
                \tjid: juliet@localhost/mobile
                \tpassword: pw

                [Client] Romeo
                \tjid: romeo@localhost
                \tpassword: secret
                \tresource: balcony

                -----
                # comment
                // comment
                -- comment
                Romeo connects

                Romeo sends
                \t<presence/>

                Romeo receives: nothing

                Juliet's phone receives:
                \t<a/>

                \t<b/>
                Romeo disconnects
                """, name: "sample")
        #expect(script.title == "A title")
        #expect(script.description == ["More words"])
        #expect(script.clients.map(\.name) == ["Juliet's phone", "Romeo"])
        #expect(script.clients[1].resource == "balcony")
        #expect(script.clients[1].password == "secret")
        #expect(
            script.actions.map(\.step) == [
                .connects, .sends("<presence/>"), .receivesNothing, .receives("<a/>\n\n\t<b/>"), .disconnects,
            ])
        #expect(script.actions.map(\.line) == [17, 19, 22, 24, 28])
        #expect(script.actions[3].client == "Juliet's phone")
    }

    @Test(arguments: [
        ("[Component] c\n\tjid: c.localhost\n\tpassword: p\n-----\n", 1),
        ("[Client] A\n\tjid: a@localhost\n\tpassword: p\n-----\nB connects\n", 5),
        ("[Client] A\n\tjid: a@localhost\n\tpassword: p\n-----\n\t<presence/>\n", 5),
        ("[Client] A\n\tjid: a@localhost\n\tpassword: p\n-----\nA sends:\nA disconnects\n", 5),
        ("[Client] A\n\tjid: a@localhost\n\tpassword: p\n-----\nA dances\n", 5),
        ("[Client] A\n\tjid: a@localhost\n-----\n", 1),
    ])
    func rejectsMalformedScripts(text: String, line: Int) {
        #expect {
            try ScansionScript(parsing: text, name: "bad")
        } throws: { error in
            (error as? ScansionSyntaxError)?.line == line
        }
    }

    // MARK: - Matcher

    /// Whether `received` matches `expected`, both given as script XML.
    private func matches(_ expected: String, _ received: String) throws -> Bool {
        let wanted = try ScansionXML.parse(expected)[0]
        let got = try ScansionXML.parse(received)[0]
        return ScansionMatcher.mismatch(expected: wanted, received: got) == nil
    }

    @Test func clientNamespaceIsLoose() throws {
        #expect(
            try matches(
                "<presence/>", "<presence from='a@localhost/r' type='unavailable'><status>x</status></presence>"))
        #expect(try matches("<m><b/><a/></m>", "<m><a/><c/><b/></m>"))
        #expect(try !matches("<presence type='unavailable'/>", "<presence/>"))
        #expect(try !matches("<presence/>", "<message/>"))
        #expect(try !matches("<m><a/><a/></m>", "<m><a/></m>"))
    }

    @Test func ownNamespaceIsStrict() throws {
        let expected = "<query xmlns='jabber:iq:roster'><item jid='a@localhost'/><item jid='b@localhost'/></query>"
        #expect(
            try matches(
                expected, "<query xmlns='jabber:iq:roster'><item jid='a@localhost'/><item jid='b@localhost'/></query>"))
        #expect(
            try !matches(
                expected, "<query xmlns='jabber:iq:roster'><item jid='b@localhost'/><item jid='a@localhost'/></query>"))
        #expect(
            try !matches(
                expected,
                "<query xmlns='jabber:iq:roster' ver='1'><item jid='a@localhost'/><item jid='b@localhost'/></query>"))
        #expect(
            try !matches(
                expected,
                "<query xmlns='jabber:iq:roster'><item jid='a@localhost' ask='subscribe'/><item jid='b@localhost'/></query>"
            ))
        #expect(try !matches(expected, "<query xmlns='jabber:iq:roster'><item jid='a@localhost'/></query>"))
        #expect(try !matches("<query xmlns='jabber:iq:roster'/>", "<query xmlns='jabber:iq:version'/>"))
    }

    @Test func strictnessCanBeOverridden() throws {
        let loose = "<query xmlns='urn:x' scansion:strict='false'><f var='b'/></query>"
        #expect(try matches(loose, "<query xmlns='urn:x' node='n'><f var='a'/><f var='b'/></query>"))
        #expect(try !matches(loose, "<query xmlns='urn:x'><f var='a'/></query>"))
        #expect(try !matches("<presence scansion:strict='true'/>", "<presence from='a@localhost'/>"))
    }

    @Test func anyValueAndText() throws {
        #expect(try matches("<q xmlns='urn:x' ver='{scansion:any}'/>", "<q xmlns='urn:x' ver='7'/>"))
        #expect(try !matches("<q xmlns='urn:x' ver='{scansion:any}'/>", "<q xmlns='urn:x'/>"))
        #expect(try matches("<body>Hi</body>", "<body>Hi</body>"))
        #expect(try !matches("<body>Hi</body>", "<body>Hi!</body>"))
        #expect(try matches("<q xmlns='urn:x'>{scansion:any}</q>", "<q xmlns='urn:x'>42</q>"))
        #expect(try matches("<subject/>", "<subject>ignored when loose</subject>"))
        #expect(try !matches("<q xmlns='urn:x'/>", "<q xmlns='urn:x'>text</q>"))
        #expect(try matches("<q xmlns='urn:x'>\n\t<a/>\n</q>", "<q xmlns='urn:x'><a/></q>"))
    }

    // MARK: - Runner

    /// A one-client script around `body`.
    private func romeo(_ body: String) throws -> ScansionScript {
        try ScansionScript(
            parsing: "[Client] Romeo\n\tjid: romeo@localhost\n\tpassword: pw\n-----\nRomeo connects\n" + body,
            name: "romeo")
    }

    @Test func wrongExpectationInProsodyScriptFails() throws {
        var script = try ScansionTests.load("basic")
        let index = try #require(script.actions.firstIndex { $0.step == .receives("<presence/>") })
        script.actions[index].step = .receives("<presence type='unavailable'/>")
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(script, on: TestServer()) }
        #expect(failure.line == script.actions[index].line)
        #expect(failure.reason.contains("attribute type missing"))
        #expect(failure.received?.hasPrefix("<presence") == true)
    }

    @Test func unexpectedStanzaAheadOfExpectedOneFails() throws {
        let script = try romeo("Romeo sends:\n\t<presence/>\nRomeo receives:\n\t<iq type='result'/>\n")
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(script, on: TestServer()) }
        #expect(failure.line == 8)
        #expect(failure.reason.contains("expected <iq>"))
    }

    @Test func missingStanzaFails() throws {
        let script = try romeo("Romeo receives:\n\t<presence/>\n")
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(script, on: TestServer()) }
        #expect(failure.reason == "nothing arrived")
    }

    @Test func nothingFailsWhenSomethingArrived() throws {
        let quiet = try romeo("Romeo receives: nothing\n")
        try ScansionRunner.run(quiet, on: TestServer())
        let echoed = try romeo("Romeo sends:\n\t<presence/>\nRomeo receives: nothing\n")
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(echoed, on: TestServer()) }
        #expect(failure.reason == "expected nothing")
    }

    @Test func stanzaUnreadAtTheNextActionIsIgnoredAndReported() throws {
        let script = try romeo(
            """
            Romeo sends:
            \t<presence><status>one</status></presence>
            Romeo sends:
            \t<presence><status>two</status></presence>
            Romeo receives:
            \t<presence><status>one</status></presence>
            """)
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(script, on: TestServer()) }
        #expect(failure.reason.contains("text is 'two', expected 'one'"))
        #expect(failure.ignored.count == 1 && failure.ignored[0].contains("one"))
    }

    @Test func variablesNameBoundAndConfiguredJIDs() throws {
        let script = try romeo(
            """
            Romeo sends:
            \t<iq type='get' id='1' to="${Romeo's JID}"><ping xmlns='urn:xmpp:ping'/></iq>
            Romeo receives:
            \t<iq type='result' id='1' from="${Romeo's JID}" to="${Romeo's full JID}"/>
            """)
        try ScansionRunner.run(script, on: TestServer())
    }
}
