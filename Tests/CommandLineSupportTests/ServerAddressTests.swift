import Testing
@testable import CommandLineSupport

@Suite struct ServerAddressTests {
    @Test(arguments: [
        ("example.com", "example.com", nil),
        ("example.com:5223", "example.com", 5223),
        ("127.0.0.1:5222", "127.0.0.1", 5222),
        ("::1", "::1", nil),
        ("[::1]", "::1", nil),
        ("[2001:db8::1]:5222", "2001:db8::1", 5222),
    ] as [(String, String, UInt16?)])
    func parses(_ text: String, _ host: String, _ port: UInt16?) {
        #expect(ServerAddress(text) == ServerAddress(host: host, port: port))
    }

    @Test(arguments: ["", ":5222", "host:", "host:0", "host:65536", "host:x", "[::1", "[::1]x", "[]:5222"])
    func refuses(_ text: String) {
        #expect(ServerAddress(text) == nil)
    }

    @Test func describesItselfAsItParses() {
        for text in ["example.com", "example.com:5223", "[::1]:5222", "::1"] {
            #expect(ServerAddress(text)?.description == text)
        }
    }
}
