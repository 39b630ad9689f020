import Testing

/// The client kit's scenarios against Prosody, as against swiftletd: the
/// kit must work with any standard server. Skipped when Prosody is not
/// installed, unless CI requires it (`SWIFTLET_REQUIRE_INTEROP=1`).
@Suite(
    "Client against Prosody",
    .enabled(
        if: ProsodyFixture.isInstalled || ProsodyFixture.isRequired,
        "Prosody is not installed (apt-get install prosody) — skipping the client kit's scenarios against it"),
    .serialized, .timeLimit(.clientSuite))
struct ProsodyClientTests {
    @Test func registerAndConnect() async throws { try await ProsodyFixture.run(ConnectionTests.registerAndConnect) }
    @Test func savedKeys() async throws { try await ProsodyFixture.run(ConnectionTests.savedKeys) }
    @Test func wrongPassword() async throws { try await ProsodyFixture.run(ConnectionTests.wrongPassword) }
    @Test func registrationConflict() async throws {
        try await ProsodyFixture.run(ConnectionTests.registrationConflict)
    }
    @Test func tlsTrust() async throws { try await ProsodyFixture.run(ConnectionTests.tlsTrust) }
    @Test func deleteAccount() async throws { try await ProsodyFixture.run(ConnectionTests.deleteAccount) }
    @Test func subscriptionHandshake() async throws {
        try await ProsodyFixture.run(ClientIMTests.subscriptionHandshake)
    }
    @Test func invalidAdds() async throws { try await ProsodyFixture.run(ClientIMTests.invalidAdds) }
    @Test func rejectAndRemove() async throws { try await ProsodyFixture.run(ClientIMTests.rejectAndRemove) }
    @Test func chatAndArchive() async throws { try await ProsodyFixture.run(ClientIMTests.chatAndArchive) }
    @Test func offlineDelivery() async throws { try await ProsodyFixture.run(ClientIMTests.offlineDelivery) }
    @Test func autoAcceptKnownContact() async throws {
        try await ProsodyFixture.run(ClientIMTests.autoAcceptKnownContact)
    }
    @Test func cleanDisconnectStays() async throws {
        try await ProsodyFixture.run(ReconnectTests.cleanDisconnectStays)
    }
    @Test func conflictStops() async throws { try await ProsodyFixture.run(ReconnectTests.conflictStops) }
}
