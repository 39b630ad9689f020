import Foundation
import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// `swiftletd deluser` and `passwd` while the server runs reach it through
/// its control socket: the account's sessions end at once.
@Suite(.timeLimit(.minutes(1)))
struct LiveAdminControlTests {
    private func admin(_ server: LiveServer) throws -> Admin {
        var config = ServerConfig()
        config.dataDirectory = server.dataDirectory
        return try Admin(config: config)
    }

    @Test func theControlSocketIsOnlyForTheServersUser() throws {
        try LiveServer.run { server in
            let attributes = try FileManager.default.attributesOfItem(atPath: server.dataDirectory + "/control")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect(attributes[.type] as? FileAttributeType == .typeSocket)
        }
    }

    @Test func deluserWhileTheServerRunsEndsEverySessionWithinASecond() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let phone = try server.loggedInClient("romeo", "montague", resource: "phone")
            let laptop = try server.loggedInClient("romeo", "montague", resource: "laptop")
            let admin = try admin(server)
            defer { admin.close() }
            let start = ContinuousClock.now
            try admin.deleteUser("romeo")
            for client in [phone, laptop] {
                #expect(try client.readUntilClosed().streamErrorCondition == "not-authorized")
            }
            #expect(ContinuousClock.now - start < .seconds(1))
            #expect(try admin.usernames().isEmpty)
            #expect(throws: AdminError.self) { try admin.deleteUser("romeo") }
        }
    }

    @Test func passwdWhileTheServerRunsEndsTheSessions() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let phone = try server.loggedInClient("romeo", "montague", resource: "phone")
            let admin = try admin(server)
            defer { admin.close() }
            try admin.setPassword("romeo", password: "capulet")
            #expect(try phone.readUntilClosed().streamErrorCondition == "not-authorized")
            #expect(try server.loggedInClient("romeo", "capulet").ping()[attribute: "type"] == "result")
        }
    }
}
