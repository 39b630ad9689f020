import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// The XEP-0133 commands, each run to its end by an admin.
@Suite struct AdminCommandsTests {
    @Test func addUserCreatesAnAccountThatCanLogIn() throws {
        let (server, admin, _) = try adminAndRomeo()
        let done = admin.run(
            adminNode("add-user"), [("accountjid", ["Tybalt@localhost"]), ("password", ["s3cret"]), ("password-verify", ["s3cret"])])
        #expect(done?.notes("info") == ["Account tybalt@localhost added"])
        try server.connect().login("tybalt", "s3cret")
    }

    @Test func addUserReportsWhatWentWrongInANote() throws {
        let (_, admin, _) = try adminAndRomeo()
        let node = adminNode("add-user")
        let taken = admin.run(node, [("accountjid", ["romeo@localhost"]), ("password", ["x"])])
        #expect(taken?.adHoc?[attribute: "status"] == "completed")
        #expect(taken?.notes("error") == ["romeo@localhost already exists"])
        let mismatch = admin.run(node, [("accountjid", ["tybalt"]), ("password", ["a"]), ("password-verify", ["b"])])
        #expect(mismatch?.notes("error") == ["The passwords do not match"])
        let foreign = admin.run(node, [("accountjid", ["tybalt@elsewhere"]), ("password", ["a"])])
        #expect(foreign?.notes("error").first?.contains("not an account of localhost") == true)
        #expect(admin.run(node, [("password", ["a"])])?.commandErrorCondition == "bad-payload")
    }

    @Test func deleteUserEndsTheUsersSessionsAndTheAccount() throws {
        let (server, admin, romeo) = try adminAndRomeo()
        let done = admin.run(adminNode("delete-user"), [("accountjids", ["romeo@localhost", "nobody@localhost"])])
        #expect(done?.notes("info") == ["romeo@localhost deleted"])
        #expect(done?.notes("error") == ["no account nobody@localhost"])
        #expect(romeo.receive().streamErrorCondition == "not-authorized")
        #expect(romeo.isClosed)
        #expect(throws: (any Error).self) { try server.connect().login("romeo", "pw") }
    }

    @Test func changeUserPasswordEndsTheUsersSessions() throws {
        let (server, admin, romeo) = try adminAndRomeo()
        let done = admin.run(
            adminNode("change-user-password"), [("accountjid", ["romeo@localhost"]), ("password", ["n3w"])])
        #expect(done?.notes("info") == ["Password of romeo@localhost changed"])
        #expect(romeo.receive().streamErrorCondition == "not-authorized")
        #expect(romeo.isClosed)
        #expect(throws: (any Error).self) { try server.connect().login("romeo", "pw") }
        try server.connect().login("romeo", "n3w")
        let unknown = admin.run(adminNode("change-user-password"), [("accountjid", ["nobody"]), ("password", ["x"])])
        #expect(unknown?.notes("error") == ["no account nobody@localhost"])
    }

    @Test func anAdminChangingTheirOwnPasswordKeepsTheirSession() throws {
        let (server, admin, _) = try adminAndRomeo()
        let other = server.connect()
        try other.login("juliet", "pw", resource: "laptop")
        let done = admin.run(adminNode("change-user-password"), [("accountjid", ["juliet"]), ("password", ["n3w"])])
        #expect(done?.adHoc?[attribute: "status"] == "completed")
        #expect(!admin.isClosed)
        #expect(other.receive().streamErrorCondition == "not-authorized")
    }

    @Test func endUserSessionEndsAllOrOneSession() throws {
        let (server, admin, romeo) = try adminAndRomeo()
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        let one = admin.run(adminNode("end-user-session"), [("accountjids", ["romeo@localhost/phone"])])
        #expect(one?.notes("info") == ["romeo@localhost/phone: 1 session(s) ended"])
        #expect(phone.receive().streamErrorCondition == "not-authorized")
        #expect(!romeo.isClosed)
        let all = admin.run(adminNode("end-user-session"), [("accountjids", ["romeo@localhost"])])
        #expect(all?.notes("info") == ["romeo@localhost: 1 session(s) ended"])
        #expect(romeo.isClosed)
        try server.connect().login("romeo", "pw")
    }

    @Test func theUserCountsAndListsCompleteAtOnceOrAfterTheirForm() throws {
        let (server, admin, _) = try adminAndRomeo()
        try server.addUser("tybalt", password: "pw")
        let registered = admin.command(adminNode("get-registered-users-num"))
        #expect(registered?.adHoc?[attribute: "status"] == "completed")
        #expect(registered?.adHoc?.child("x", namespace: NS.dataForms)?[attribute: "type"] == "result")
        #expect(registered?.formValues("registeredusersnum") == ["3"])
        #expect(admin.command(adminNode("get-online-users-num"))?.formValues("onlineusersnum") == ["2"])

        let list = admin.run(adminNode("get-registered-users-list"), [("max_items", ["none"])])
        #expect(list?.formValues("registereduserjids") == ["juliet@localhost", "romeo@localhost", "tybalt@localhost"])
        let short = admin.run(adminNode("get-registered-users-list"), [("max_items", ["2"])])
        #expect(short?.formValues("registereduserjids") == ["juliet@localhost", "romeo@localhost"])
        #expect(short?.notes("info") == ["Showing 2 of 3"])
        let online = admin.run(adminNode("get-online-users-list"), [("max_items", ["25"])])
        #expect(online?.formValues("onlineuserjids") == ["juliet@localhost", "romeo@localhost"])
        #expect(admin.run(adminNode("get-online-users-list"), [("max_items", ["lots"])])?.commandErrorCondition == "bad-payload")
    }

    @Test func announceReachesEveryOnlineSession() throws {
        let (_, admin, romeo) = try adminAndRomeo()
        let done = admin.run(adminNode("announce"), [("announcement", ["Maintenance at noon", "Back soon"])])
        #expect(done?.notes("info") == ["Announcement sent to 2 session(s)"])
        let message = romeo.receiveElements().first { $0.name == "message" }
        #expect(message?[attribute: "from"] == "localhost")
        #expect(message?.childText("body") == "Maintenance at noon\nBack soon")
    }
}
