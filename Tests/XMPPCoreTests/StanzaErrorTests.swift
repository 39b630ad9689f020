import Testing
@testable import XMPPCore

/// RFC 6120 §8.3.3 conditions with the type each SHOULD have there, and the
/// XEP-0086 §3 legacy code, typed from the specifications rather than from
/// the code under test, so a misspelled raw value fails.
private let conditionTable: [(wire: String, condition: StanzaError.Condition, type: String, code: Int)] = [
    ("bad-request", .badRequest, "modify", 400),
    ("conflict", .conflict, "cancel", 409),
    ("feature-not-implemented", .featureNotImplemented, "cancel", 501),
    ("forbidden", .forbidden, "auth", 403),
    ("gone", .gone, "cancel", 302),
    ("internal-server-error", .internalServerError, "cancel", 500),
    ("item-not-found", .itemNotFound, "cancel", 404),
    ("jid-malformed", .jidMalformed, "modify", 400),
    ("not-acceptable", .notAcceptable, "modify", 406),
    ("not-allowed", .notAllowed, "cancel", 405),
    ("not-authorized", .notAuthorized, "auth", 401),
    ("policy-violation", .policyViolation, "modify", 406),
    ("recipient-unavailable", .recipientUnavailable, "wait", 404),
    ("redirect", .redirect, "modify", 302),
    ("registration-required", .registrationRequired, "auth", 407),
    ("remote-server-not-found", .remoteServerNotFound, "cancel", 404),
    ("remote-server-timeout", .remoteServerTimeout, "wait", 504),
    ("resource-constraint", .resourceConstraint, "wait", 500),
    ("service-unavailable", .serviceUnavailable, "cancel", 503),
    ("subscription-required", .subscriptionRequired, "auth", 407),
    ("undefined-condition", .undefinedCondition, "cancel", 500),
    ("unexpected-request", .unexpectedRequest, "wait", 400),
]

@Suite struct StanzaErrorTests {
    @Test func tableCoversEveryConditionOnce() {
        #expect(conditionTable.count == 22)
        #expect(Set(conditionTable.map(\.condition)) == Set(StanzaError.Condition.allCases))
        #expect(StanzaError.Condition.allCases.count == 22)
    }

    @Test(arguments: conditionTable.map(\.wire))
    func conditionWireNames(wire: String) throws {
        let row = try #require(conditionTable.first { $0.wire == wire })
        #expect(row.condition.rawValue == wire)
        #expect(StanzaError.Condition(rawValue: wire) == row.condition)
        let element = StanzaError(row.condition).element()
        #expect(element.child(wire, namespace: "urn:ietf:params:xml:ns:xmpp-stanzas") != nil)
    }

    @Test(arguments: conditionTable.map(\.wire))
    func defaultTypesAndLegacyCodes(wire: String) throws {
        let row = try #require(conditionTable.first { $0.wire == wire })
        #expect(row.condition.defaultType.rawValue == row.type)
        #expect(row.condition.legacyCode == row.code)
        let element = StanzaError(row.condition).element()
        #expect(element[attribute: "type"] == row.type)
        #expect(element[attribute: "code"] == String(row.code))
    }

    @Test func errorTypeWireNames() {
        #expect(StanzaError.ErrorType.allCases.map(\.rawValue) == ["auth", "cancel", "continue", "modify", "wait"])
    }

    @Test func explicitTypeOverridesDefault() {
        let error = StanzaError(.policyViolation, type: .wait)
        #expect(error.type == .wait)
        #expect(error.element()[attribute: "type"] == "wait")
    }

    @Test func elementLayout() throws {
        let app = Element("too-many-subscriptions", namespace: "urn:example:app")
        let error = StanzaError(
            .resourceConstraint, text: "Slow down", language: "en", applicationCondition: app,
            by: "example.com")
        let element = error.element(namespace: "jabber:server")
        #expect(element.name == "error")
        #expect(element.namespace == "jabber:server")
        #expect(element[attribute: "by"] == "example.com")
        #expect(element[attribute: "code"] == "500")
        let names = element.elements.map { "\($0.namespace) \($0.name)" }
        #expect(names == [
            "urn:ietf:params:xml:ns:xmpp-stanzas resource-constraint",
            "urn:ietf:params:xml:ns:xmpp-stanzas text",
            "urn:example:app too-many-subscriptions",
        ])
        let text = try #require(element.child("text", namespace: "urn:ietf:params:xml:ns:xmpp-stanzas"))
        #expect(text.text == "Slow down")
        #expect(text[attribute: "lang", namespace: "http://www.w3.org/XML/1998/namespace"] == "en")
    }

    @Test func minimalElementHasOnlyTheCondition() {
        let element = StanzaError(.itemNotFound).element()
        #expect(element.namespace == "jabber:client")
        #expect(element.children == [.element(Element("item-not-found", namespace: NS.stanzas))])
        #expect(element[attribute: "by"] == nil)
    }

    @Test func roundTripKeepsEverything() {
        var app = Element("blocked", namespace: "urn:xmpp:blocking:errors")
        app[attribute: "reason"] = "spam"
        let original = StanzaError(
            .notAcceptable, type: .cancel, text: "No", language: "fr", applicationCondition: app,
            by: "juliet@example.com")
        #expect(StanzaError(original.element()) == original)
    }

    @Test(arguments: [StanzaError.Condition.gone, .redirect])
    func addressConditionsCarryTheirURI(condition: StanzaError.Condition) throws {
        let error = StanzaError(condition, uri: "xmpp:romeo@afterwards.example")
        let element = error.element()
        #expect(element.childText(condition.rawValue, namespace: NS.stanzas) == "xmpp:romeo@afterwards.example")
        #expect(StanzaError(element) == error)
    }

    @Test func uriIsIgnoredForOtherConditions() {
        let element = StanzaError(.badRequest, uri: "xmpp:example.org").element()
        #expect(element.childText("bad-request", namespace: NS.stanzas) == "")
        #expect(StanzaError(element)?.uri == nil)
    }

    @Test func parsesIndentedURIAndIgnoresCode() throws {
        var gone = Element("gone", namespace: NS.stanzas)
        gone.append(text: "\n    xmpp:new@example.net\n  ")
        let element = Element("error", namespace: NS.client, attributes: ["type": "modify", "code": "999"], children: [.element(gone)])
        let error = try #require(StanzaError(element))
        #expect(error.uri == "xmpp:new@example.net")
        #expect(error.type == .modify)
        #expect(error.condition == .gone)
    }

    @Test func unknownConditionReadsAsUndefined() throws {
        let element = Element(
            "error", namespace: NS.client, attributes: ["type": "wait"],
            children: [.element(Element("payment-required", namespace: NS.stanzas))])
        let error = try #require(StanzaError(element))
        #expect(error.condition == .undefinedCondition)
        #expect(error.type == .wait)
    }

    @Test func missingConditionAndTypeFallBack() throws {
        let error = try #require(StanzaError(Element("error", namespace: NS.client, attributes: ["code": "404"])))
        #expect(error.condition == .undefinedCondition)
        #expect(error.type == .cancel)
        let badType = Element(
            "error", namespace: NS.client, attributes: ["type": "later"],
            children: [.element(Element("conflict", namespace: NS.stanzas))])
        #expect(StanzaError(badType)?.type == .cancel)
    }

    @Test func textAfterAppConditionIsFoundAndConditionIsNotText() throws {
        let element = Element(
            "error", namespace: NS.client, attributes: ["type": "cancel"],
            children: [
                .element(Element("text", namespace: NS.stanzas, children: [.text("why")])),
                .element(Element("x", namespace: "urn:example")),
                .element(Element("forbidden", namespace: NS.stanzas)),
            ])
        let error = try #require(StanzaError(element))
        #expect(error.condition == .forbidden)
        #expect(error.text == "why")
        #expect(error.applicationCondition == Element("x", namespace: "urn:example"))
    }

    @Test func rejectsOtherElements() {
        #expect(StanzaError(Element("failure", namespace: NS.sasl)) == nil)
    }

    @Test func convertibleErrorsExposeTheirStanzaError() {
        struct NoSuchRoom: StanzaErrorConvertible {
            var stanzaError: StanzaError { StanzaError(.itemNotFound, text: "No such room") }
        }
        let errors: [any Error] = [NoSuchRoom(), StanzaError(.conflict)]
        let conditions = errors.compactMap { ($0 as? any StanzaErrorConvertible)?.stanzaError.condition }
        #expect(conditions == [.itemNotFound, .conflict])
    }
}
