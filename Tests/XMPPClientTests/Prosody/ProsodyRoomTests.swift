import Testing

/// The client kit's group chat scenarios against Prosody's MUC component
/// (with `muc_mam`) and PEP bookmarks, administration and room archives
/// included. Skipped when Prosody is not installed, unless CI requires it
/// (`SWIFTLET_REQUIRE_INTEROP=1`).
@Suite(
    "Client rooms against Prosody",
    .enabled(
        if: ProsodyFixture.isInstalled || ProsodyFixture.isRequired,
        "Prosody is not installed (apt-get install prosody) — skipping the client kit's room scenarios against it"),
    .serialized, .timeLimit(.clientSuite))
struct ProsodyRoomTests {
    @Test func createAndJoin() async throws { try await ProsodyFixture.run(RoomTests.createAndJoin) }
    @Test func nicknameConflict() async throws { try await ProsodyFixture.run(RoomTests.nicknameConflict) }
    @Test func groupMessages() async throws { try await ProsodyFixture.run(RoomTests.groupMessages) }
    @Test func privateMessages() async throws { try await ProsodyFixture.run(RoomTests.privateMessages) }
    @Test func subjectChange() async throws { try await ProsodyFixture.run(RoomTests.subjectChange) }
    @Test func historyOnJoin() async throws { try await ProsodyFixture.run(RoomTests.historyOnJoin) }
    @Test func nicknameChange() async throws { try await ProsodyFixture.run(RoomTests.nicknameChange) }
    @Test func leaving() async throws { try await ProsodyFixture.run(RoomTests.leaving) }
    @Test func presenceInRooms() async throws { try await ProsodyFixture.run(RoomTests.presenceInRooms) }
    @Test func disconnectLeavesRooms() async throws { try await ProsodyFixture.run(RoomTests.disconnectLeavesRooms) }
    @Test func bookmarksAutojoin() async throws { try await ProsodyFixture.run(RoomTests.bookmarksAutojoin) }
    @Test func directInvitation() async throws { try await ProsodyFixture.run(RoomTests.directInvitation) }
    @Test func configuredCreation() async throws {
        try await ProsodyFixture.run(RoomAdminEndToEndTests.configuredCreation)
    }
    @Test func passwordRoom() async throws { try await ProsodyFixture.run(RoomAdminEndToEndTests.passwordRoom) }
    @Test func membersOnlyRoom() async throws { try await ProsodyFixture.run(RoomAdminEndToEndTests.membersOnlyRoom) }
    @Test func kick() async throws { try await ProsodyFixture.run(RoomAdminEndToEndTests.kick) }
    @Test func ban() async throws { try await ProsodyFixture.run(RoomAdminEndToEndTests.ban) }
    @Test func grantAffiliation() async throws { try await ProsodyFixture.run(RoomAdminEndToEndTests.grantAffiliation) }
    @Test func mediatedInvitation() async throws {
        try await ProsodyFixture.run(RoomAdminEndToEndTests.mediatedInvitation)
    }
    @Test func affiliationLists() async throws {
        try await ProsodyFixture.run(RoomAdminEndToEndTests.affiliationLists)
    }
    @Test func destroy() async throws { try await ProsodyFixture.run(RoomAdminEndToEndTests.destroy) }
    @Test func roomArchive() async throws { try await ProsodyFixture.run(RoomAdminEndToEndTests.roomArchive) }
}
