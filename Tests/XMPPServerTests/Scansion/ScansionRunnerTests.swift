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

    @Test func stanzasLeftAfterAReceiveAreIgnoredAtTheNextActionAndReported() throws {
        let script = try romeo(
            """
            Romeo sends:
            \t<presence><status>one</status></presence>
            Romeo sends:
            \t<presence><status>two</status></presence>
            Romeo receives:
            \t<presence><status>one</status></presence>
            Romeo sends:
            \t<presence><status>three</status></presence>
            Romeo receives:
            \t<presence><status>two</status></presence>
            """)
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(script, on: TestServer()) }
        #expect(failure.reason.contains("text is 'three', expected 'two'"))
        #expect(failure.ignored.count == 1 && failure.ignored[0].contains("two"))
    }

    @Test func stanzasNotYetLookedAtWaitForTheClientsNextReceive() throws {
        let script = try romeo(
            """
            Romeo sends:
            \t<presence><status>one</status></presence>
            Romeo sends:
            \t<presence><status>two</status></presence>
            Romeo receives:
            \t<presence><status>one</status></presence>
            Romeo receives:
            \t<presence><status>two</status></presence>
            """)
        try ScansionRunner.run(script, on: TestServer())
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

/// Swiftlet's extensions of the format for replaying XMPPFramework's bytes:
/// raw steps, captures, the wire reader and the checks of what
/// XMPPFramework's parser needs.
@Suite("Scansion runner: raw and XMPPFramework extensions")
struct ScansionRawExtensionTests {
    // MARK: - Parser

    @Test func parsesTheExtensions() throws {
        let script = try ScansionScript(
            parsing: """
                [Client] Bob
                \tjid: bob@localhost
                \tpassword: pw
                \tstyle: xmppframework
                \tregistered: false

                [Client] Bob's twin
                \tjid: bob@localhost/iPad
                \tpassword: pw

                -----
                Bob sends raw:
                \t<iq type="get" id="A">
                \t<ping xmlns="urn:xmpp:ping"/>
                \t</iq>
                Bob receives raw:
                \t<stream:features>{scansion:any}

                \t</stream:stream>
                Bob opens a stream
                Bob starts TLS
                Bob authenticates with SCRAM-SHA-1
                Bob's twin  sends a keepalive
                Bob's twin drops the connection
                Bob is disconnected
                Bob waits 150 seconds
                """, name: "extensions")
        #expect(script.clients[0].style == .xmppframework && !script.clients[0].isRegistered)
        #expect(script.clients[1].style == .scansion && script.clients[1].isRegistered)
        #expect(
            script.actions.map(\.step) == [
                .sendsRaw(#"<iq type="get" id="A"><ping xmlns="urn:xmpp:ping"/></iq>"#),
                .receivesRaw(["<stream:features>{scansion:any}", "</stream:stream>"]),
                .opensStream, .startsTLS, .authenticates(.scramSHA1), .sendsKeepalive, .dropsConnection,
                .isDisconnected, .waits(seconds: 150),
            ])
        // The longest declared name wins: "Bob's twin", not "Bob".
        #expect(script.actions[5].client == "Bob's twin")
        #expect(script.actions[5].description == "Bob's twin sends a keepalive")
    }

    @Test(arguments: [
        "[Client] A\n\tjid: a@localhost\n\tpassword: p\n\tstyle: smack\n-----\n",
        "[Client] A\n\tjid: a@localhost\n\tpassword: p\n\tregistered: maybe\n-----\n",
        "[Client] A\n\tjid: a@localhost\n\tpassword: p\n-----\nA authenticates with PLAIN\n",
        "[Client] A\n\tjid: a@localhost\n\tpassword: p\n-----\nA waits a while\n",
        "[Client] A\n\tjid: a@localhost\n\tpassword: p\n-----\nA sends raw:\nA disconnects\n",
    ])
    func rejectsBadExtensions(text: String) {
        #expect(throws: ScansionSyntaxError.self) { try ScansionScript(parsing: text, name: "bad") }
    }

    // MARK: - Wire reader

    static let transcript =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'"
        + " id='x>y' version='1.0'><stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>"
        + " \n<iq type='result' id='1'><query xmlns='q' note=\"a/>b\"><item>text &amp; <b/>more</item></query></iq>"
        + "<presence/> </stream:stream>"

    @Test func readerSplitsUnitsWhateverTheChunks() {
        let bytes = Array(Self.transcript.utf8)
        for cut in 0...bytes.count {
            let reader = ScansionWireReader(insideStream: false)
            let units = reader.feed(Array(bytes[..<cut])) + reader.feed(Array(bytes[cut...]))
            #expect(units.map(\.raw).count == 5, "cut at \(cut)")
            guard units.count == 5 else { continue }
            #expect(units[0].raw.hasPrefix("<?xml version='1.0'?><stream:stream ") && units[0].raw.hasSuffix("'1.0'>"))
            guard case .header(let header) = units[0].kind else {
                Issue.record("not a header: \(units[0].kind)")
                continue
            }
            #expect(header[attribute: "id"] == "x>y")
            #expect(units[1].element?.name == "features" && units[1].raw.hasPrefix("<stream:features>"))
            #expect(units[2].element?.child("query", namespace: "q")?[attribute: "note"] == "a/>b")
            #expect(units[2].raw.hasPrefix("<iq type='result'"))
            #expect(units[3].raw == "<presence/>")
            #expect(units[4].raw == "</stream:stream>")
            if case .close = units[4].kind {} else { Issue.record("not the close: \(units[4].kind)") }
        }
    }

    @Test func readerReportsTextOutsideElements() {
        let reader = ScansionWireReader(insideStream: true)
        let units = reader.feed(Array("hello<presence/>".utf8))
        #expect(units.count == 2)
        if case .malformed = units.first?.kind {} else { Issue.record("expected malformed, got \(units)") }
    }

    // MARK: - Raw patterns

    @Test func rawPatterns() {
        #expect(ScansionRawPattern.matches("<a/>", "<a/>"))
        #expect(!ScansionRawPattern.matches("<a/>", "<a />"))
        #expect(
            ScansionRawPattern.matches("<stream:features>{scansion:any}", "<stream:features><bind/></stream:features>"))
        #expect(!ScansionRawPattern.matches("<stream:features>{scansion:any}", "<features xmlns='x'/>"))
        #expect(ScansionRawPattern.matches("<s id='{scansion:any}' version='1.0'>", "<s id='abc' version='1.0'>"))
        #expect(!ScansionRawPattern.matches("<s id='{scansion:any}' version='1.0'>", "<s id='abc' version='0.9'>"))
        #expect(ScansionRawPattern.matches("{scansion:any}x{scansion:any}", "axb"))
        #expect(!ScansionRawPattern.matches("{scansion:any}x{scansion:any}", "ab"))
        #expect(ScansionRawPattern.matches("ab{scansion:any}ba", "aba") == false)
    }

    // MARK: - What XMPPFramework's parser needs

    /// The problems found in `text`, read as one server's output.
    private func problems(_ text: String) -> [String] {
        var check = XMPPFrameworkWireCheck()
        return ScansionWireReader(insideStream: false).feed(Array(text.utf8)).compactMap { check.problem(with: $0) }
    }

    private let header =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client'"
        + " xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"

    @Test func wellShapedOutputPasses() {
        #expect(problems(Self.transcript).isEmpty)
    }

    @Test func shapesXMPPFrameworkWouldMisreadAreFound() {
        let streams = "http://etherx.jabber.org/streams"
        // A default-namespace <features> is not found.
        #expect(problems(header + "<features xmlns='\(streams)'/>").count == 1)
        // Something else first is taken as the features.
        #expect(problems(header + "<iq type='result' id='1'/><stream:features/>").count == 1)
        // Without version='1.0', XMPPFramework falls back to jabber:iq:auth.
        let noVersion = header.replacingOccurrences(of: "' version='1.0'>", with: "'>")
        #expect(problems(noVersion + "<stream:features/>").count == 1)
        // Another prefix for the stream.
        #expect(problems("<s:stream xmlns='jabber:client' xmlns:s='\(streams)' version='1.0'><s:features/>").count == 2)
        // A prefixed SASL element is not found by its name.
        let success = "<sasl:success xmlns:sasl='urn:ietf:params:xml:ns:xmpp-sasl'/>"
        #expect(problems(header + "<stream:features/>" + success).count == 1)
        #expect(problems(header + "<stream:features/><stream:error/></stream:stream>").isEmpty)
    }

    // MARK: - Captures

    @Test func capturesKeepValuesOfSuccessfulMatches() throws {
        let expected = try ScansionXML.parse(
            "<enabled xmlns='urn:xmpp:sm:3' id='{scansion:capture:smid}' max='300'/>")[0]
        var captures: [String: String] = [:]
        let wrong = try ScansionXML.parse("<enabled xmlns='urn:xmpp:sm:3' id='abc' max='60'/>")[0]
        #expect(ScansionMatcher.mismatch(expected: expected, received: wrong, captures: &captures) != nil)
        #expect(captures.isEmpty)
        let right = try ScansionXML.parse("<enabled xmlns='urn:xmpp:sm:3' id='abc' max='300'/>")[0]
        #expect(ScansionMatcher.mismatch(expected: expected, received: right, captures: &captures) == nil)
        #expect(captures == ["smid": "abc"])
        #expect(
            try ScansionXML.substitute("<resume previd='${smid}'/>", jids: [:], fullJIDs: [:], captures: captures)
                == "<resume previd='abc'/>")
        #expect(throws: ScansionXMLError.self) {
            try ScansionXML.substitute("${other}", jids: [:], fullJIDs: [:], captures: captures)
        }
    }

    @Test func backtrackingKeepsOnlyTheChosenChildsCapture() throws {
        // The first <b/> could match the capture, but then <b n='1'/> has no
        // partner: the capture must come from the second.
        let expected = try ScansionXML.parse(
            "<m><b n='{scansion:capture:n}'/><b n='1'/></m>")[0]
        let received = try ScansionXML.parse("<m><b n='1'/><b n='2'/></m>")[0]
        var captures: [String: String] = [:]
        #expect(ScansionMatcher.mismatch(expected: expected, received: received, captures: &captures) == nil)
        #expect(captures == ["n": "2"])
        let text = try ScansionXML.parse("<body>{scansion:capture:text}</body>")[0]
        #expect(
            ScansionMatcher.mismatch(
                expected: text, received: try ScansionXML.parse("<body>hi</body>")[0], captures: &captures) == nil)
        #expect(captures["text"] == "hi")
    }

    // MARK: - Runner

    /// A one-client XMPPFramework-style script around `body`.
    private func alice(_ body: String, registered: Bool = true) throws -> ScansionScript {
        try ScansionScript(
            parsing: "[Client] Alice\n\tjid: alice@localhost/iPhone\n\tpassword: pw\n\tstyle: xmppframework\n"
                + (registered ? "" : "\tregistered: false\n") + "-----\n" + body,
            name: "alice")
    }

    @Test func xmppFrameworkClientMustExpectEverything() throws {
        let quiet = try alice("Alice connects\nAlice sends raw:\n\t<presence/>\nAlice receives:\n\t<presence/>\n")
        try ScansionRunner.run(quiet, on: TestServer())
        // The echo of the presence is never expected: the next action fails.
        let unexpected = try alice("Alice connects\nAlice sends raw:\n\t<presence/>\nAlice sends a keepalive\n")
        let failure = try #require(throws: ScansionFailure.self) {
            try ScansionRunner.run(unexpected, on: TestServer())
        }
        #expect(failure.line == 9 && failure.reason.contains("does not expect"))
        #expect(failure.received?.hasPrefix("<presence") == true)
        // Also at the end of the script.
        let atEnd = try alice("Alice connects\nAlice sends raw:\n\t<presence/>\n")
        let end = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(atEnd, on: TestServer()) }
        #expect(end.action == "end of script")
    }

    @Test func rawExpectationsComparePrefixesAndText() throws {
        let good = try alice(
            """
            Alice sends raw:
            \t<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='localhost'>
            Alice receives raw:
            \t<?xml version='1.0'?><stream:stream {scansion:any} version='1.0'{scansion:any}>
            \t<stream:features>{scansion:any}</stream:features>
            """)
        try ScansionRunner.run(good, on: TestServer())
        let bad = try alice(
            """
            Alice opens a stream
            Alice receives raw:
            \t<features>{scansion:any}
            """)
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(bad, on: TestServer()) }
        #expect(failure.reason.contains("raw text differs"))
        #expect(failure.received?.hasPrefix("<stream:features>") == true)
    }

    @Test func unregisteredClientCannotLogInUntilItRegisters() throws {
        let script = try alice("Alice connects\n", registered: false)
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(script, on: TestServer()) }
        #expect(failure.reason.contains("authentication failed"))
    }

    @Test func disconnectionIsChecked() throws {
        let open = try alice("Alice connects\nAlice is disconnected\n")
        let failure = try #require(throws: ScansionFailure.self) { try ScansionRunner.run(open, on: TestServer()) }
        #expect(failure.reason == "the server did not close the connection")
        let idle = try alice(
            """
            Alice connects
            Alice waits 300 seconds
            Alice receives raw:
            \t<stream:error><connection-timeout xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>{scansion:any}
            \t</stream:stream>
            Alice is disconnected
            """)
        try ScansionRunner.run(idle, on: TestServer())
    }

    @Test func capturedValuesFeedLaterActions() throws {
        let script = try alice(
            """
            Alice connects
            Alice sends raw:
            \t<iq type="get" id="A"><query xmlns="jabber:iq:roster"/></iq>
            Alice receives:
            \t<iq type='result' id='A'><query xmlns='jabber:iq:roster' ver='{scansion:capture:v}'/></iq>
            Alice sends raw:
            \t<iq type="get" id="${v}"><ping xmlns="urn:xmpp:ping"/></iq>
            Alice receives:
            \t<iq type='result' id='${v}'/>
            """)
        try ScansionRunner.run(script, on: TestServer())
    }
}
