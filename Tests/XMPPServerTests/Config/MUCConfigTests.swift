import Testing

@testable import XMPPServer

/// The `muc_*` keys: defaults, the service's address, and what validation
/// refuses.
@Suite struct MUCConfigTests {
    private func parse(_ text: String) throws -> ServerConfig {
        try ServerConfig.parse(text, fileName: "s.conf")
    }

    @Test func defaults() throws {
        let config = try parse("domain = example.com")
        #expect(config.muc.enabled)
        #expect(config.mucService == "conference.example.com")
        #expect(config.muc.historyLength == 20)
        #expect(config.muc.maxOccupants == 200)
        #expect(config.muc.maxRoomsPerUser == 10)
        #expect(config.muc.maxRoomNameLength == 64)
        #expect(config.muc.maxNickLength == 64)
    }

    @Test func theServiceAddressIsSetAndNormalized() throws {
        #expect(try parse("muc_domain = Rooms.Localhost").mucService == "rooms.localhost")
    }

    @Test(arguments: [
        ("muc_domain = localhost", "muc_domain", "must differ from the domain"),
        ("muc_domain = upload.localhost", "muc_domain", "must differ from the domain and the upload service"),
        ("muc_domain = a@b", "muc_domain", "expected a domain only"),
        ("muc_history_length = 1001", "muc_history_length", "must be from 0 to 1000"),
        ("muc_max_occupants = 0", "muc_max_occupants", "must be from 1 to 100000"),
        ("muc_max_rooms_per_user = 0", "muc_max_rooms_per_user", "must be from 1 to 10000"),
        ("muc_max_room_name_length = 1024", "muc_max_room_name_length", "must be from 1 to 1023"),
        ("muc_max_nick_length = 0", "muc_max_nick_length", "must be from 1 to 1023"),
    ])
    func refused(_ text: String, key: String, expected: String) throws {
        let failure = try #require(throws: ConfigError.self) { try parse(text) }
        #expect(failure.key == key, "\(failure)")
        #expect(failure.message.contains(expected), "\(failure)")
    }
}
