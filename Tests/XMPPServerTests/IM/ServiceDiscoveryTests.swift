import Foundation
import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// What the server's domain tells clients that look there: account
/// features clients expect on the domain, XEP-0157 contact addresses and
/// XEP-0215 STUN/TURN services.
@Suite struct ServiceDiscoveryTests {
    private func info(_ client: TestClient, of jid: String = "localhost") throws -> Element {
        let reply = client.request(
            "<iq type='get' id='d' to='\(jid)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>", id: "d")
        return try #require(reply?.child("query", namespace: NS.discoInfo))
    }

    private func features(_ query: Element) -> [String] {
        query.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] }
    }

    private func config(_ text: String) throws -> ServerConfig {
        try ServerConfig.parse(text, fileName: "test")
    }

    // MARK: Account features on the domain

    @Test func theDomainListsTheArchiveCarbonsBlockingAndOfflineStorage() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let domain = features(try info(romeo))
        for feature in [NS.mam, NS.mam + "#extended", NS.carbons, NS.blocking, "msgoffline"] {
            #expect(domain.contains(feature), "\(feature) on the domain")
        }
        let account = features(try info(romeo, of: "romeo@localhost"))
        #expect(account.contains(NS.mam) && account.contains(NS.mam + "#extended"))
    }

    @Test func theDomainAnswersArchiveRequestsAsTheUsersOwn() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        romeo.send("<message to='juliet@localhost' type='chat' id='m1'><body>hi</body></message>")
        _ = juliet.receive()
        let reply = romeo.request(
            "<iq type='get' id='meta' to='localhost'><metadata xmlns='urn:xmpp:mam:2'/></iq>", id: "meta")
        #expect(reply?[attribute: "type"] == "result")
        #expect(reply?[attribute: "from"] == "localhost")
        let metadata = try #require(reply?.child("metadata", namespace: NS.mam))
        #expect(metadata.elements.map(\.name) == ["start", "end"])
    }

    @Test func withoutTheArchiveTheDomainDoesNotListIt() throws {
        let (_, romeo, _) = try romeoAndJuliet(config: try config("archive = off"))
        #expect(!features(try info(romeo)).contains(NS.mam))
    }

    // MARK: XEP-0157

    @Test func contactAddressesAreAServerinfoFormOfTheKindsSet() throws {
        let settings = """
            contact_support = https://example.org/help, xmpp:support@localhost
            contact_abuse = mailto:abuse@example.org
            """
        let (_, romeo, _) = try romeoAndJuliet(config: try config(settings))
        let forms = try info(romeo).elements.filter { $0.name == "x" && $0.namespace == NS.dataForms }
        try #require(forms.count == 1)
        #expect(forms[0][attribute: "type"] == "result")
        let form = try #require(DataForm(forms[0]))
        #expect(form.fields.map(\.name) == ["FORM_TYPE", "abuse-addresses", "support-addresses"])
        #expect(form.fields.map(\.type) == ["hidden", "list-multi", "list-multi"])
        #expect(form.fields[0].values == ["http://jabber.org/network/serverinfo"])
        #expect(form.fields[1].values == ["mailto:abuse@example.org"])
        #expect(form.fields[2].values == ["https://example.org/help", "xmpp:support@localhost"])
    }

    @Test func withoutContactAddressesThereIsNoForm() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        #expect(try info(romeo).elements.allSatisfy { $0.namespace != NS.dataForms })
    }

    @Test(arguments: ["abuse@example.org", "://x", "mailto:", "mailto:a b@example.org", "1x:y"])
    func aContactAddressIsAURI(_ address: String) {
        #expect(throws: ConfigError.self) { try config("contact_abuse = \"\(address)\"") }
    }

    // MARK: XEP-0215

    /// 2023-11-13T22:13:20Z less one day: credentials made then, valid for
    /// the default day, expire at Unix time 1700000000.
    private static let clock = WallClock { Date(timeIntervalSince1970: 1_700_000_000 - 86_400) }
    private static let services = """
        external_services = stun:turn.example.org, turn:turn.example.org:3479?transport=tcp, turns:[2001:db8::1]
        turn_secret = coturn-shared-secret
        """

    private func romeoWithServices() throws -> TestClient {
        let server = try TestServer(config: try config(Self.services), clock: Self.clock)
        try server.addUser("romeo", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw", resource: "orchard")
        return romeo
    }

    private func services(_ reply: Element?, _ name: String = "services") throws -> [[String: String]] {
        let list = try #require(reply?.child(name, namespace: NS.extdisco))
        return list.elements.map { service in
            Dictionary(uniqueKeysWithValues: service.attributes.map { ($0.name, $0.value) })
        }
    }

    /// The credentials coturn expects for romeo until 1700000000 with the
    /// secret above; the password computed once with
    /// `printf '%s' 1700000000:romeo | openssl dgst -sha1 -hmac coturn-shared-secret -binary | base64`.
    private static let turnAttributes = [
        "restricted": "1", "username": "1700000000:romeo", "password": "EW94oINWWU76+qUtf5UAy2KV0C4=",
        "expires": "2023-11-14T22:13:20.000Z",
    ]

    @Test func servicesListsEachServerTURNWithCredentials() throws {
        let romeo = try romeoWithServices()
        #expect(features(try info(romeo)).contains(NS.extdisco))
        let reply = romeo.request(
            "<iq type='get' id='s' to='localhost'><services xmlns='urn:xmpp:extdisco:2'/></iq>", id: "s")
        #expect(reply?[attribute: "type"] == "result")
        let listed = try services(reply)
        try #require(listed.count == 3)
        #expect(listed[0] == ["type": "stun", "host": "turn.example.org", "port": "3478", "transport": "udp"])
        #expect(
            listed[1]
                == ["type": "turn", "host": "turn.example.org", "port": "3479", "transport": "tcp"]
                .merging(Self.turnAttributes) { $1 })
        #expect(
            listed[2]
                == ["type": "turns", "host": "2001:db8::1", "port": "5349", "transport": "tcp"]
                .merging(Self.turnAttributes) { $1 })
    }

    @Test func servicesOfOneType() throws {
        let romeo = try romeoWithServices()
        let reply = romeo.request(
            "<iq type='get' id='s' to='localhost'><services xmlns='urn:xmpp:extdisco:2' type='stun'/></iq>", id: "s")
        #expect(try services(reply).map { $0["type"] } == ["stun"])
    }

    @Test func credentialsForOneServer() throws {
        let romeo = try romeoWithServices()
        let reply = romeo.request(
            "<iq type='get' id='c' to='localhost'><credentials xmlns='urn:xmpp:extdisco:2'>"
                + "<service type='turn' host='turn.example.org'/></credentials></iq>", id: "c")
        let listed = try services(reply, "credentials")
        #expect(listed.map { $0["port"] } == ["3479"])
        #expect(listed.first?["password"] == Self.turnAttributes["password"])
        let noType = romeo.request(
            "<iq type='get' id='t' to='localhost'><credentials xmlns='urn:xmpp:extdisco:2'>"
                + "<service host='turn.example.org'/></credentials></iq>", id: "t")
        #expect(noType?.errorCondition == "bad-request")
        let unknown = romeo.request(
            "<iq type='get' id='u' to='localhost'><credentials xmlns='urn:xmpp:extdisco:2'>"
                + "<service type='turn' host='other.example.org'/></credentials></iq>", id: "u")
        #expect(unknown?.errorCondition == "item-not-found")
    }

    @Test func withoutServicesNothingIsOffered() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        #expect(!features(try info(romeo)).contains(NS.extdisco))
        let reply = romeo.request(
            "<iq type='get' id='s' to='localhost'><services xmlns='urn:xmpp:extdisco:2'/></iq>", id: "s")
        #expect(reply?.errorCondition == "service-unavailable")
    }

    @Test func turnCredentialsAreCoturnsRESTForm() {
        let credentials = TURNCredentials(secret: "coturn-shared-secret", username: "romeo", expiry: 1_700_000_000)
        #expect(credentials.username == "1700000000:romeo")
        #expect(credentials.password == "EW94oINWWU76+qUtf5UAy2KV0C4=")
        let later = TURNCredentials(secret: "coturn-shared-secret", username: "romeo", expiry: 1_219_526_144)
        #expect(later.password == "OoFrw5uk0juqpJLOui1x7n1pvEY=")
    }

    // MARK: Settings

    @Test func serviceURIsTakeDefaultsAndReadBack() throws {
        let parsed = try config(
            "external_services = STUN:example.org, stuns:example.org, turn:192.0.2.7:80?transport=tcp, "
                + "turns:[2001:DB8::1]:443\nturn_secret = s")
        #expect(
            parsed.externalServices.services.map(\.description) == [
                "stun:example.org:3478?transport=udp", "stuns:example.org:5349?transport=tcp",
                "turn:192.0.2.7:80?transport=tcp", "turns:[2001:db8::1]:443?transport=tcp",
            ])
    }

    @Test(arguments: [
        "ftp:example.org", "turn:", "turn:example.org:0", "turn:example.org:65536", "turn:example.org:x",
        "turn:example.org?transport=sctp", "turn:example.org?proto=udp", "stun:user@example.org", "example.org",
        "ftp://john@files.example.org:21", "turn::pw@example.org", "turn:a:b:c@example.org", "1ftp:example.org:21",
    ])
    func badServiceURIs(_ uri: String) {
        #expect(throws: ConfigError.self) { try config("external_services = \(uri)\nturn_secret = s") }
    }

    /// Credentials written in a URI go to every user as they are, with no
    /// expiry; another type than STUN and TURN takes its scheme's name.
    @Test func fixedCredentialsAndOtherTypes() throws {
        let settings = "external_services = turn:alice:pw1@turn.example.org, ftp://john:pw2@files.example.org:21"
        let parsed = try config(settings)
        #expect(
            parsed.externalServices.services.map(\.description) == [
                "turn:alice:(hidden)@turn.example.org:3478?transport=udp",
                "ftp:john:(hidden)@files.example.org:21?transport=tcp",
            ])
        let report = checkConfigReport(parsed)
        #expect(!report.contains("pw1") && !report.contains("pw2"))
        let server = try TestServer(config: parsed)
        try server.addUser("romeo", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw", resource: "orchard")
        let reply = romeo.request(
            "<iq type='get' id='s' to='localhost'><services xmlns='urn:xmpp:extdisco:2'/></iq>", id: "s")
        #expect(
            try services(reply) == [
                [
                    "type": "turn", "host": "turn.example.org", "port": "3478", "transport": "udp", "restricted": "1",
                    "username": "alice", "password": "pw1",
                ],
                [
                    "type": "ftp", "host": "files.example.org", "port": "21", "transport": "tcp", "restricted": "1",
                    "username": "john", "password": "pw2",
                ],
            ])
    }

    @Test func aTURNServerNeedsTheSecret() throws {
        #expect(throws: ConfigError.self) { try config("external_services = turn:example.org") }
        #expect(try config("external_services = stun:example.org").externalServices.services.count == 1)
        #expect(throws: ConfigError.self) {
            try config("external_services = turn:example.org\nturn_secret = s\nturn_credentials_lifetime = 30s")
        }
    }

    @Test func checkConfigHidesTheSecret() throws {
        let report = checkConfigReport(try config(Self.services))
        #expect(!report.contains("coturn-shared-secret"))
        #expect(report.split(separator: "\n").contains { $0.hasPrefix("turn_secret") && $0.hasSuffix("= (hidden)") })
    }
}
