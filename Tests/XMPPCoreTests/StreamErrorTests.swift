import Testing
@testable import XMPPCore

/// RFC 6120 §4.9.3.1 to §4.9.3.25, in the RFC's order, typed from the RFC.
private let streamConditionTable: [(wire: String, condition: StreamError.Condition)] = [
    ("bad-format", .badFormat),
    ("bad-namespace-prefix", .badNamespacePrefix),
    ("conflict", .conflict),
    ("connection-timeout", .connectionTimeout),
    ("host-gone", .hostGone),
    ("host-unknown", .hostUnknown),
    ("improper-addressing", .improperAddressing),
    ("internal-server-error", .internalServerError),
    ("invalid-from", .invalidFrom),
    ("invalid-namespace", .invalidNamespace),
    ("invalid-xml", .invalidXML),
    ("not-authorized", .notAuthorized),
    ("not-well-formed", .notWellFormed),
    ("policy-violation", .policyViolation),
    ("remote-connection-failed", .remoteConnectionFailed),
    ("reset", .reset),
    ("resource-constraint", .resourceConstraint),
    ("restricted-xml", .restrictedXML),
    ("see-other-host", .seeOtherHost),
    ("system-shutdown", .systemShutdown),
    ("undefined-condition", .undefinedCondition),
    ("unsupported-encoding", .unsupportedEncoding),
    ("unsupported-feature", .unsupportedFeature),
    ("unsupported-stanza-type", .unsupportedStanzaType),
    ("unsupported-version", .unsupportedVersion),
]

@Suite struct StreamErrorTests {
    @Test func tableCoversEveryConditionOnce() {
        #expect(streamConditionTable.count == 25)
        #expect(Set(streamConditionTable.map(\.condition)) == Set(StreamError.Condition.allCases))
        #expect(StreamError.Condition.allCases.count == 25)
    }

    @Test(arguments: streamConditionTable.map(\.wire))
    func conditionWireNames(wire: String) throws {
        let row = try #require(streamConditionTable.first { $0.wire == wire })
        #expect(row.condition.rawValue == wire)
        let element = StreamError(row.condition).element
        #expect(element.elements.map(\.name) == [wire])
        #expect(element.elements.first?.namespace == "urn:ietf:params:xml:ns:xmpp-streams")
        #expect(StreamError(element) == StreamError(row.condition))
    }

    @Test func elementIsStreamErrorInStreamsNamespace() {
        let element = StreamError(.conflict).element
        #expect(element.name == "error")
        #expect(element.namespace == "http://etherx.jabber.org/streams")
        #expect(element.attributes.isEmpty)
        // Exactly what XMPPFramework's reconnect logic needs to stop.
        #expect(element.children == [.element(Element("conflict", namespace: "urn:ietf:params:xml:ns:xmpp-streams"))])
    }

    @Test func textAndApplicationConditionRoundTrip() throws {
        let app = Element("stanza-too-big", namespace: "urn:example:limits")
        let error = StreamError(.policyViolation, text: "Max 1 MiB", language: "en", applicationCondition: app)
        let element = error.element
        #expect(element.elements.map(\.name) == ["policy-violation", "text", "stanza-too-big"])
        let text = try #require(element.child("text", namespace: NS.streamErrors))
        #expect(text[attribute: "lang", namespace: NS.xml] == "en")
        #expect(text.text == "Max 1 MiB")
        #expect(StreamError(element) == error)
    }

    @Test func seeOtherHostCarriesTheHost() throws {
        let error = StreamError(.seeOtherHost, otherHost: "[2001:db8::1]:5222")
        let element = error.element
        #expect(element.childText("see-other-host", namespace: NS.streamErrors) == "[2001:db8::1]:5222")
        #expect(StreamError(element)?.otherHost == "[2001:db8::1]:5222")
    }

    @Test func otherHostIsIgnoredForOtherConditions() {
        let element = StreamError(.hostUnknown, otherHost: "example.net").element
        #expect(element.childText("host-unknown", namespace: NS.streamErrors) == "")
        #expect(StreamError(element)?.otherHost == nil)
    }

    @Test func unknownOrMissingConditionReadsAsUndefined() {
        let invalidID = Element(
            "error", namespace: NS.streams,
            children: [.element(Element("invalid-id", namespace: NS.streamErrors))])
        #expect(StreamError(invalidID)?.condition == .undefinedCondition)
        #expect(StreamError(Element("error", namespace: NS.streams))?.condition == .undefinedCondition)
    }

    @Test func rejectsErrorsOutsideTheStreamsNamespace() {
        #expect(StreamError(StanzaError(.conflict).element()) == nil)
        #expect(StreamError(Element("features", namespace: NS.streams)) == nil)
    }
}
