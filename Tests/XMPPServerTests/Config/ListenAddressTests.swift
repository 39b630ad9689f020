import Testing

@testable import XMPPServer

@Suite struct ListenAddressTests {
    @Test(
        arguments: [
            ("127.0.0.1:5222", "127.0.0.1", ListenAddress.Family.ipv4, 5222, true),
            ("127.1.2.3:5222", "127.1.2.3", .ipv4, 5222, true),
            ("0.0.0.0:5222", "0.0.0.0", .ipv4, 5222, false),
            ("192.168.1.20:5223", "192.168.1.20", .ipv4, 5223, false),
            ("[::1]:5222", "::1", .ipv6, 5222, true),
            ("[0:0:0:0:0:0:0:1]:5222", "::1", .ipv6, 5222, true),
            ("[::ffff:127.0.0.1]:5222", "::ffff:127.0.0.1", .ipv6, 5222, true),
            ("[::]:5222", "::", .ipv6, 5222, false),
            ("[2001:DB8::1]:5222", "2001:db8::1", .ipv6, 5222, false),
            ("127.0.0.1:0", "127.0.0.1", .ipv4, 0, true),
            ("127.0.0.1:65535", "127.0.0.1", .ipv4, 65535, true),
        ] as [(String, String, ListenAddress.Family, UInt16, Bool)])
    func parses(text: String, host: String, family: ListenAddress.Family, port: UInt16, loopback: Bool) throws {
        let address = try ListenAddress.parse(text)
        #expect(address.host == host)
        #expect(address.family == family)
        #expect(address.port == port)
        #expect(address.isLoopback == loopback)
        #expect(ListenAddress(address.description) == address)
    }

    @Test func descriptionIsCanonical() throws {
        #expect(try ListenAddress.parse("[0::1]:5222").description == "[::1]:5222")
        #expect(try ListenAddress.parse("[2001:db8:0:0:0:0:0:1]:5222").description == "[2001:db8::1]:5222")
    }

    @Test(arguments: [
        ("localhost:5222", "host names such as localhost are not resolved"),
        ("example.com:5222", "host names such as localhost are not resolved"),
        ("127.0.0.1", "expected address:port"),
        ("127.0.0.1:", "expected a port from 0 to 65535"),
        ("127.0.0.1:65536", "expected a port from 0 to 65535"),
        ("127.0.0.1:-1", "expected a port from 0 to 65535"),
        ("127.0.0.1:52x", "expected a port from 0 to 65535"),
        ("256.0.0.1:5222", "expected a numeric address"),
        ("::1:5222", "an IPv6 address needs brackets"),
        ("[::1]", "[IPv6 address]:port"),
        ("[::1]5222", "[IPv6 address]:port"),
        ("[127.0.0.1]:5222", "[IPv6 address]:port"),
        ("[fe80::1%eth0]:5222", "[IPv6 address]:port"),
        ("", "expected address:port"),
    ])
    func rejects(text: String, expected: String) {
        let error = #expect(throws: ConfigValueError.self) { try ListenAddress.parse(text) }
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        #expect(ListenAddress(text) == nil)
    }
}
