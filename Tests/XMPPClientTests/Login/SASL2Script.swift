import Foundation
import XMPPCore
import XMPPTestSupport

@testable import XMPPClient

/// The server's side of the logins the scripted tests play: the features
/// offered and SCRAM run by hand.
enum SASL2Script {
    static let allMechanisms = ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"]
    static let withoutPlus = ["SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"]
    static let bothBindings = ["tls-exporter", "tls-server-end-point"]
    static let farFuture = "2099-01-01T00:00:00Z"

    /// Pre-authentication features: RFC 6120 `<mechanisms/>`, and unless
    /// `sasl2` is off, SASL2 with Bind 2 (carbons, CSI, stream management),
    /// resumption and FAST inline, plus `channelBindings` as XEP-0440 types.
    static func features(
        _ mechanisms: [String] = allMechanisms, channelBindings: [String]? = bothBindings, sasl2: Bool = true
    ) -> String {
        let list = { (name: String) in mechanisms.map { "<\(name)>\($0)</\(name)>" }.joined() }
        var xml = "<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(list("mechanism"))</mechanisms>"
        guard sasl2 else { return xml }
        xml +=
            "<authentication xmlns='urn:xmpp:sasl:2'>\(list("mechanism"))<inline>"
            + "<bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:carbons:2'/>"
            + "<feature var='urn:xmpp:csi:0'/><feature var='urn:xmpp:sm:3'/></inline></bind>"
            + "<sm xmlns='urn:xmpp:sm:3'/><fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-EXPR</mechanism>"
            + "<mechanism>HT-SHA-256-ENDP</mechanism><mechanism>HT-SHA-256-NONE</mechanism></fast>"
            + "</inline></authentication>"
        if let channelBindings {
            xml +=
                "<sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'>"
                + channelBindings.map { "<channel-binding type='\($0)'/>" }.joined() + "</sasl-channel-binding>"
        }
        return xml
    }

    /// A SASL2 success with `additionalData`, binding `alice@localhost/swiftlet.1`
    /// with stream management enabled, and issuing `token` if given; then
    /// the (empty) post-bind features.
    static func success(additionalData: [UInt8], token: String? = nil) -> String {
        "<success xmlns='urn:xmpp:sasl:2'><additional-data>\(Base64.encode(additionalData))</additional-data>"
            + "<authorization-identifier>alice@localhost/swiftlet.1</authorization-identifier>"
            + "<bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='true'/></bound>"
            + (token.map { "<token xmlns='urn:xmpp:fast:0' token='\($0)' expiry='\(farFuture)'/>" } ?? "")
            + "</success><stream:features/>"
    }

    /// A SASL2 failure with `condition`.
    static func failure(_ condition: String) -> String {
        "<failure xmlns='urn:xmpp:sasl:2'><\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/></failure>"
    }

    /// Plays SCRAM's server side for the client's `first` request (SASL2
    /// `<authenticate/>` or RFC 6120 `<auth/>`) on `stream`, up to the
    /// client's proof; returns the server-final message for the success.
    ///
    /// - Parameters:
    ///   - bindings: The channel-binding types the stream took (non-empty
    ///     exactly when it advertised `-PLUS`).
    ///   - advertisement: What `h=` hashes; `nil` sends none.
    static func scram(
        _ first: Element, on stream: ScriptedStream, credentials: SCRAMCredentials,
        bindings: [ChannelBindingType: [UInt8]], advertisement: SCRAMDowngradeProtection.Advertisement?
    ) throws -> [UInt8] {
        let namespace = first.namespace
        guard let mechanism = first[attribute: "mechanism"].flatMap(SASLMechanism.init(rawValue:)),
            let clientFirst = try SASLPayload.decode(
                namespace == NS.sasl2 ? first.childText("initial-response", namespace: NS.sasl2) ?? "" : first.text)
        else { throw TestFailure("no SCRAM request: \(first)") }
        var server = SCRAMServer(
            mechanism: mechanism, channelBindings: bindings, unknownUserSecret: [1], advertisement: advertisement)
        _ = try server.receiveClientFirst(clientFirst)
        try stream.send(
            "<challenge xmlns='\(namespace)'>\(Base64.encode(server.challenge(credentials: credentials)))</challenge>")
        let response = try stream.receive()
        guard response.name == "response", let clientFinal = try SASLPayload.decode(response.text) else {
            throw TestFailure("expected a SCRAM response, got \(response)")
        }
        return try server.receiveClientFinal(clientFinal)
    }

    /// The credentials a server stores for `keys`.
    static func credentials(for keys: SCRAMClientKeys) throws -> SCRAMCredentials {
        guard
            let credentials = SCRAMCredentials(
                hashFunction: keys.hashFunction, salt: keys.salt, iterations: keys.iterations,
                storedKey: keys.hashFunction.hash(keys.clientKey), serverKey: keys.serverKey)
        else { throw TestFailure("keys that fit no credentials") }
        return credentials
    }

    /// The decoded initial response of a SASL2 `<authenticate/>`.
    static func initialResponse(_ authenticate: Element) throws -> [UInt8] {
        guard let data = try SASLPayload.decode(authenticate.childText("initial-response", namespace: NS.sasl2) ?? "")
        else { throw TestFailure("no initial response") }
        return data
    }
}

extension LoginDetails {
    /// SASL2 with SCRAM-SHA-256-PLUS over tls-exporter, checked by XEP-0474:
    /// the best login with a password or keys.
    static let scramPlus = LoginDetails(
        profile: .sasl2, mechanism: "SCRAM-SHA-256-PLUS", channelBinding: .tlsExporter, downgradeProtected: true,
        usedToken: false)
    /// SASL2 with a FAST token bound to tls-exporter.
    static let fastExporter = LoginDetails(
        profile: .sasl2, mechanism: "HT-SHA-256-EXPR", channelBinding: .tlsExporter, downgradeProtected: false,
        usedToken: true)
}
