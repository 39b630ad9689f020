import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0050 ad-hoc commands on the server's JID: who sees and runs them,
/// sessions between stages, and the errors of §4.6.
@Suite struct AdHocCommandsTests {
    private static let commandsNode = "http://jabber.org/protocol/commands"

    @Test func theServerAdvertisesCommands() throws {
        let (_, _, romeo) = try adminAndRomeo()
        let info = romeo.request(
            "<iq type='get' id='i' to='localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>", id: "i")
        let features = info?.child("query", namespace: NS.discoInfo)?.elements.compactMap { $0[attribute: "var"] }
        #expect(features?.contains(Self.commandsNode) == true)
    }

    @Test func adminsSeeTheCommandsAndOthersAnEmptyList() throws {
        let (_, admin, romeo) = try adminAndRomeo()
        let query = "<iq type='get' id='l' to='localhost'><query xmlns='http://jabber.org/protocol/disco#items' node='\(Self.commandsNode)'/></iq>"
        let items = admin.request(query, id: "l")?.child("query", namespace: NS.discoItems)
        #expect(items?[attribute: "node"] == Self.commandsNode)
        let nodes = items?.elements.compactMap { $0[attribute: "node"] } ?? []
        #expect(Set(nodes) == Set([
            "add-user", "delete-user", "change-user-password", "end-user-session", "get-registered-users-num",
            "get-registered-users-list", "get-online-users-num", "get-online-users-list", "announce",
        ].map(adminNode)))
        #expect(items?.elements.allSatisfy { $0[attribute: "jid"] == "localhost" && $0[attribute: "name"] != nil } == true)

        let none = romeo.request(query, id: "l")
        #expect(none?[attribute: "type"] == "result")
        #expect(none?.child("query", namespace: NS.discoItems)?.elements.isEmpty == true)
    }

    @Test func aCommandNodeDescribesItselfToAdminsOnly() throws {
        let (_, admin, romeo) = try adminAndRomeo()
        let query = "<iq type='get' id='n' to='localhost'><query xmlns='http://jabber.org/protocol/disco#info' node='\(adminNode("add-user"))'/></iq>"
        let info = admin.request(query, id: "n")?.child("query", namespace: NS.discoInfo)
        let identity = info?.child("identity")
        #expect(identity?[attribute: "category"] == "automation" && identity?[attribute: "type"] == "command-node")
        #expect(Set(info?.elements.compactMap { $0[attribute: "var"] } ?? []) == [Self.commandsNode, NS.dataForms])
        #expect(romeo.request(query, id: "n")?.errorCondition == "forbidden")
        let unknown = "<iq type='get' id='u' to='localhost'><query xmlns='http://jabber.org/protocol/disco#info' node='nope'/></iq>"
        #expect(admin.request(unknown, id: "u")?.errorCondition == "item-not-found")
    }

    @Test func othersAreForbiddenAndUnknownNodesNotFound() throws {
        let (_, admin, romeo) = try adminAndRomeo()
        let refused = romeo.command(adminNode("add-user"))
        #expect(refused?[attribute: "type"] == "error" && refused?.errorCondition == "forbidden")
        #expect(romeo.command(adminNode("get-registered-users-num"))?.errorCondition == "forbidden")
        #expect(admin.command(adminNode("shutdown"))?.errorCondition == "item-not-found")
    }

    @Test func aFormCommandTakesTwoStages() throws {
        let (_, admin, _) = try adminAndRomeo()
        let first = try #require(admin.command(adminNode("add-user"), action: "execute")?.adHoc)
        #expect(first[attribute: "status"] == "executing")
        let id = try #require(first[attribute: "sessionid"])
        #expect(!id.isEmpty)
        let actions = first.child("actions", namespace: NS.commands)
        #expect(actions?[attribute: "execute"] == "complete" && actions?.child("complete") != nil)
        let form = try #require(first.child("x", namespace: NS.dataForms))
        #expect(form[attribute: "type"] == "form" && form.child("title") != nil)
        let fields = DataForm(form)?.fields ?? []
        #expect(fields.map(\.name) == ["FORM_TYPE", "accountjid", "password", "password-verify"])
        #expect(DataForm(form)?.formType == NS.admin)
        #expect(fields.map(\.type) == ["hidden", "jid-single", "text-private", "text-private"])

        let done = admin.command(
            adminNode("add-user"), sessionID: id,
            submit: [("accountjid", ["tybalt@localhost"]), ("password", ["secret"]), ("password-verify", ["secret"])])
        #expect(done?.adHoc?[attribute: "status"] == "completed")
        #expect(done?.adHoc?[attribute: "sessionid"] == id)
        #expect(done?.notes("info") == ["Account tybalt@localhost added"])
        #expect(admin.command(adminNode("add-user"), sessionID: id, submit: [])?.commandErrorCondition == "bad-sessionid")
    }

    @Test func cancelEndsTheSession() throws {
        let (_, admin, _) = try adminAndRomeo()
        let id = admin.command(adminNode("delete-user"))?.adHoc?[attribute: "sessionid"]
        let canceled = admin.command(adminNode("delete-user"), action: "cancel", sessionID: id)
        #expect(canceled?.adHoc?[attribute: "status"] == "canceled")
        let late = admin.command(adminNode("delete-user"), sessionID: id, submit: [("accountjids", ["romeo@localhost"])])
        #expect(late?.errorCondition == "bad-request" && late?.commandErrorCondition == "bad-sessionid")
    }

    @Test func actionsOutsideTheirStageAreRefused() throws {
        let (_, admin, _) = try adminAndRomeo()
        let node = adminNode("change-user-password")
        let malformed = admin.command(node, action: "jump")
        #expect(malformed?.errorCondition == "bad-request" && malformed?.commandErrorCondition == "malformed-action")
        #expect(admin.command(node, action: "complete")?.commandErrorCondition == "bad-action")
        #expect(admin.command(node, action: "cancel")?.commandErrorCondition == "bad-sessionid")
        let id = admin.command(node)?.adHoc?[attribute: "sessionid"]
        #expect(admin.command(node, action: "next", sessionID: id)?.commandErrorCondition == "bad-action")
        #expect(admin.command(node, action: "prev", sessionID: id)?.commandErrorCondition == "bad-action")
        #expect(admin.command(node, action: "complete", sessionID: "made-up")?.commandErrorCondition == "bad-sessionid")
        #expect(admin.command(adminNode("add-user"), sessionID: id, submit: [])?.commandErrorCondition == "bad-sessionid")
    }

    @Test func aSubmissionWithoutTheFormIsABadPayload() throws {
        let (_, admin, _) = try adminAndRomeo()
        let node = adminNode("change-user-password")
        let noForm = admin.command(node, action: "complete", sessionID: admin.command(node)?.adHoc?[attribute: "sessionid"])
        #expect(noForm?.errorCondition == "bad-request" && noForm?.commandErrorCondition == "bad-payload")
        let otherForm = admin.command(
            node, action: "complete", sessionID: admin.command(node)?.adHoc?[attribute: "sessionid"],
            submit: [("accountjid", ["romeo@localhost"]), ("password", ["x"])], formType: "urn:example:other")
        #expect(otherForm?.commandErrorCondition == "bad-payload")
        let missing = admin.run(node, [("accountjid", ["romeo@localhost"])])
        #expect(missing?.commandErrorCondition == "bad-payload")
    }

    @Test func anotherResourceCannotContinueASession() throws {
        let (server, admin, _) = try adminAndRomeo()
        let second = server.connect()
        try second.login("juliet", "pw", resource: "laptop")
        let id = admin.command(adminNode("add-user"))?.adHoc?[attribute: "sessionid"]
        let taken = second.command(
            adminNode("add-user"), sessionID: id, submit: [("accountjid", ["x@localhost"]), ("password", ["pw"])])
        #expect(taken?.commandErrorCondition == "bad-sessionid")
    }

    @Test func sessionsExpire() throws {
        let (server, admin, _) = try adminAndRomeo()
        let id = admin.command(adminNode("add-user"))?.adHoc?[attribute: "sessionid"]
        // Past the lifetime, the client keeping its stream alive meanwhile.
        for _ in 0..<11 {
            server.loop.advance(by: .seconds(60))
            admin.send(" ")
            _ = admin.receive()
        }
        let expired = admin.command(
            adminNode("add-user"), sessionID: id, submit: [("accountjid", ["x@localhost"]), ("password", ["pw"])])
        #expect(expired?.errorCondition == "not-allowed" && expired?.commandErrorCondition == "session-expired")
        #expect(admin.command(adminNode("add-user"), sessionID: id, submit: [])?.commandErrorCondition == "bad-sessionid")
    }

    @Test func anAdminHoldsAtMostFiveSessionsTheOldestGivingWay() throws {
        let (_, admin, _) = try adminAndRomeo()
        let node = adminNode("end-user-session")
        let ids = (0..<6).compactMap { _ in admin.command(node)?.adHoc?[attribute: "sessionid"] }
        #expect(Set(ids).count == 6)
        #expect(admin.command(node, sessionID: ids[0], submit: [("accountjids", ["romeo@localhost"])])?.commandErrorCondition
            == "bad-sessionid")
        for id in ids.dropFirst() {
            #expect(admin.command(node, action: "cancel", sessionID: id)?.adHoc?[attribute: "status"] == "canceled")
        }
    }

    @Test func theSessionTableSweepsExpiredSessions() throws {
        let sessions = AdHocSessions()
        let start = ContinuousClock.now
        let admin = try JID("juliet@localhost/balcony")
        _ = sessions.open("a", for: admin, now: start)
        _ = sessions.open("a", for: try JID("other@localhost/x"), now: start)
        #expect(sessions.count == 2)
        _ = sessions.open("a", for: admin, now: start + AdHocSessions.lifetime + .seconds(1))
        #expect(sessions.count == 1)
    }
}
