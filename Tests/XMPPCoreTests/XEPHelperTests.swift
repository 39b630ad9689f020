import Testing
@testable import XMPPCore

/// XEP-0082 DateTime stamps, in both directions.
@Suite struct DateTimeProfileTests {
    @Test(arguments: [
        (0, "1970-01-01T00:00:00.000Z"),
        (1_278_803_305_123, "2010-07-10T23:08:25.123Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ])
    func formatsUTCWithMilliseconds(milliseconds: Int, text: String) {
        #expect(DateTimeProfile.string(millisecondsSince1970: milliseconds) == text)
        #expect(DateTimeProfile.milliseconds(from: text) == milliseconds)
    }

    @Test(arguments: [
        ("2010-07-10T23:08:25Z", 1_278_803_305_000),
        ("2010-07-10T23:08:25.1Z", 1_278_803_305_100),
        ("2010-07-10T23:08:25.123456Z", 1_278_803_305_123),
        ("2010-07-11T01:08:25+02:00", 1_278_803_305_000),
        ("2010-07-10T17:38:25-05:30", 1_278_803_305_000),
        ("2012-02-29T12:00:00Z", 1_330_516_800_000),
    ])
    func parsesEveryFormOfTheProfile(text: String, milliseconds: Int) {
        #expect(DateTimeProfile.milliseconds(from: text) == milliseconds)
    }

    @Test(arguments: [
        "", "2010-07-10", "2010-07-10T23:08:25", "2010-07-10 23:08:25Z", "2010-7-10T23:08:25Z",
        "2010-13-10T23:08:25Z", "2010-02-30T00:00:00Z", "2011-02-29T00:00:00Z", "2010-07-10T24:00:00Z",
        "2010-07-10T23:60:00Z", "2010-07-10T23:08:60Z", "2010-07-10T23:08:25.Z", "2010-07-10T23:08:25+0200",
        "2010-07-10T23:08:25Zjunk", "yesterday", "2010-07-10t23:08:25z", "１９７０-01-01T00:00:00Z",
    ])
    func refusesWhatIsNotADateTime(text: String) {
        #expect(DateTimeProfile.milliseconds(from: text) == nil)
    }
}

/// XEP-0004 forms and XEP-0059 result sets as MAM uses them.
@Suite struct DataFormAndResultSetTests {
    private func parse(_ xml: String) -> Element {
        let parser = XMLStreamParser()
        _ = parser.feed("<stream xmlns='jabber:client'>")
        guard case .element(let element)? = parser.feed(xml).first else { fatalError("bad XML in test: \(xml)") }
        return element
    }

    @Test func readsFieldsWithAndWithoutTypes() throws {
        let form = try #require(DataForm(parse("""
            <x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE' type='hidden'><value>urn:xmpp:mam:2</value></field>\
            <field var='with'><value>juliet@capulet.lit</value></field><field var='ids'><value>a</value><value>b</value></field></x>
            """)))
        #expect(form.type == "submit")
        #expect(form.formType == "urn:xmpp:mam:2")
        #expect(form.fields.map(\.name) == ["FORM_TYPE", "with", "ids"])
        #expect(form.fields[1].type == nil)
        #expect(form.fields[2].values == ["a", "b"])
        #expect(DataForm(parse("<x xmlns='urn:example'/>")) == nil)
    }

    @Test func writesWhatItReads() {
        let form = DataForm(type: "form", fields: [
            .init("FORM_TYPE", type: "hidden", values: ["urn:xmpp:mam:2"]), .init("with", type: "jid-single"),
        ])
        #expect(DataForm(form.element) == form)
    }

    @Test func readsAResultSetRequest() throws {
        let request = try ResultSetRequest(parse(
            "<set xmlns='http://jabber.org/protocol/rsm'><max> 50 </max><after>A9</after></set>"))
        #expect(request == ResultSetRequest(max: 50, after: "A9"))
        let last = try ResultSetRequest(parse("<set xmlns='http://jabber.org/protocol/rsm'><before/></set>"))
        #expect(last.before == "" && last.max == nil)
    }

    @Test(arguments: [
        "<max>-1</max>", "<max>ten</max>", "<max/>", "<index>x</index>", "<after/>",
    ])
    func refusesABadResultSetRequest(content: String) {
        #expect(throws: StanzaError.self) {
            try ResultSetRequest(parse("<set xmlns='http://jabber.org/protocol/rsm'>\(content)</set>"))
        }
    }

    @Test func anEmptyPageReplyCarriesOnlyTheCount() throws {
        #expect(ResultSetReply(count: 0).element.elements.map(\.name) == ["count"])
        let page = ResultSetReply(first: "a", firstIndex: 3, last: "b", count: 9).element
        #expect(page.elements.map(\.name) == ["first", "last", "count"])
        #expect(page.child("first")?[attribute: "index"] == "3")
        #expect(page.childText("count") == "9")
    }
}
