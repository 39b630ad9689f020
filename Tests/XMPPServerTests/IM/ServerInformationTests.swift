import Foundation
import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0092 software version, XEP-0202 entity time and XEP-0012 last
/// activity.
@Suite struct ServerInformationTests {
    private static let versionQuery = "<iq type='get' id='v' to='localhost'><query xmlns='jabber:iq:version'/></iq>"

    private func serverFeatures(_ client: TestClient, of jid: String = "localhost") -> [String] {
        let info = client.request("<iq type='get' id='d' to='\(jid)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>", id: "d")
        return info?.child("query", namespace: NS.discoInfo)?.elements.compactMap { $0[attribute: "var"] } ?? []
    }

    // MARK: XEP-0092

    @Test func versionNamesSwiftletItsVersionAndTheSystem() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = romeo.request(Self.versionQuery, id: "v")
        #expect(reply?[attribute: "from"] == "localhost")
        let query = try #require(reply?.child("query", namespace: NS.version))
        #expect(query.childText("name") == "Swiftlet")
        #expect(query.childText("version") == Swiftlet.version)
        #expect(query.childText("os")?.isEmpty == false)
        #expect(serverFeatures(romeo).contains(NS.version))
        let toUser = romeo.request("<iq type='get' id='u' to='juliet@localhost'><query xmlns='jabber:iq:version'/></iq>", id: "u")
        #expect(toUser?.errorCondition == "service-unavailable", "an account has no software")
    }

    @Test func versionReplyCanBeNameOnlyOrOff() throws {
        var config = ServerConfig()
        config.versionReply = .nameOnly
        let (_, named, _) = try romeoAndJuliet(config: config)
        let query = named.request(Self.versionQuery, id: "v")?.child("query", namespace: NS.version)
        #expect(query?.elements.map(\.name) == ["name"])
        config.versionReply = .off
        let (_, hidden, _) = try romeoAndJuliet(config: config)
        #expect(hidden.request(Self.versionQuery, id: "v")?.errorCondition == "service-unavailable")
        #expect(!serverFeatures(hidden).contains(NS.version))
    }

    // MARK: XEP-0202

    @Test func timeIsUTCWithTheZoneOffset() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = romeo.request("<iq type='get' id='t' to='localhost'><time xmlns='urn:xmpp:time'/></iq>", id: "t")
        let time = try #require(reply?.child("time", namespace: NS.time))
        let tzo = try #require(time.childText("tzo"))
        #expect(try #/^[+-]\d\d:\d\d$/#.wholeMatch(in: tzo) != nil)
        let utc = try #require(time.childText("utc"))
        #expect(utc.hasSuffix("Z"))
        let parsed = try #require(ISO8601DateFormatter().date(from: utc))
        #expect(abs(parsed.timeIntervalSinceNow) < 60)
        #expect(serverFeatures(romeo).contains(NS.time))
    }

    @Test(arguments: [(0, "+00:00"), (19_800, "+05:30"), (-12_600, "-03:30"), (50_400, "+14:00"), (-3_600, "-01:00")])
    func zoneOffsets(_ seconds: Int, _ text: String) {
        #expect(EntityTime.offset(seconds) == text)
    }

    // MARK: XEP-0012

    private func last(_ client: TestClient, of jid: String?) -> Element? {
        let to = jid.map { " to='\($0)'" } ?? ""
        return client.request("<iq type='get' id='l'\(to)><query xmlns='jabber:iq:last'/></iq>", id: "l")
    }

    @Test func theServerAnswersItsUptime() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        server.loop.advance(by: .seconds(90))
        let query = last(romeo, of: "localhost")?.child("query", namespace: NS.last)
        #expect(query?[attribute: "seconds"] == "90")
        #expect(query?.text == "")
        #expect(serverFeatures(romeo).contains(NS.last))
        #expect(serverFeatures(romeo, of: "romeo@localhost").contains(NS.last))
    }

    @Test func ownLastLogoutKeepsTheStatusOfTheUnavailablePresence() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        #expect(last(romeo, of: nil)?.errorCondition == "item-not-found", "never seen going offline")
        romeo.send("<presence><status>Hello</status></presence>")
        _ = romeo.receive()
        #expect(last(romeo, of: "romeo@localhost")?.child("query", namespace: NS.last)?[attribute: "seconds"] == "0")
        romeo.send("<presence type='unavailable'><status>Goodbye</status></presence>")
        _ = romeo.receive()
        let query = last(romeo, of: nil)?.child("query", namespace: NS.last)
        #expect(Int(query?[attribute: "seconds"] ?? "") ?? -1 >= 0)
        #expect(query?.text == "Goodbye")
    }

    @Test func aSubscribedContactSeesTheLastLogoutOthersDoNot() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        try server.addUser("tybalt", password: "pw")
        let tybalt = server.connect()
        try tybalt.login("tybalt", "pw")
        #expect(last(juliet, of: "romeo@localhost")?.child("query", namespace: NS.last)?[attribute: "seconds"] == "0", "online")
        #expect(last(tybalt, of: "romeo@localhost")?.errorCondition == "forbidden", "no subscription, even while online")
        romeo.session.transportClosed()
        _ = juliet.receive()
        let query = last(juliet, of: "romeo@localhost")?.child("query", namespace: NS.last)
        #expect(Int(query?[attribute: "seconds"] ?? "") ?? -1 >= 0)
        #expect(query?.text == "", "a dropped connection leaves no status")
        #expect(last(tybalt, of: "romeo@localhost")?.errorCondition == "forbidden")
        #expect(last(tybalt, of: "nobody@localhost")?.errorCondition == "service-unavailable")
    }

    @Test func aUserWhoBlocksTheRequesterIsUnavailableToIt() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send("<iq type='set' id='b'><block xmlns='urn:xmpp:blocking'><item jid='juliet@localhost'/></block></iq>")
        romeo.send("</stream:stream>")
        _ = juliet.receive()
        #expect(last(juliet, of: "romeo@localhost")?.errorCondition == "service-unavailable")
    }

    @Test func aQueryToAFullJIDGoesToTheClient() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        juliet.send("<iq type='get' id='idle' to='romeo@localhost/orchard'><query xmlns='jabber:iq:last'/></iq>")
        let delivered = romeo.receiveElements().first
        #expect(delivered?[attribute: "id"] == "idle")
        #expect(delivered?[attribute: "from"] == "juliet@localhost/balcony")
    }
}
