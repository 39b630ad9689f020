import Glibc
import Testing

@testable import XMPPNet

@Suite struct SocketAddressTests {
    @Test(arguments: [
        ("127.0.0.1", SocketAddress.Family.ipv4, UInt16(0), "127.0.0.1:0"),
        ("0.0.0.0", .ipv4, 0, "0.0.0.0:0"),
        ("127.0.0.1:5222", .ipv4, 5222, "127.0.0.1:5222"),
        ("::1", .ipv6, 0, "[::1]:0"),
        ("::", .ipv6, 0, "[::]:0"),
        ("[::1]", .ipv6, 0, "[::1]:0"),
        ("[::1]:5222", .ipv6, 5222, "[::1]:5222"),
        ("[2001:DB8:0:0:0:0:0:1]:443", .ipv6, 443, "[2001:db8::1]:443"),
        ("::ffff:127.0.0.1", .ipv6, 0, "[::ffff:127.0.0.1]:0"),
        ("10.1.2.3:65535", .ipv4, 65535, "10.1.2.3:65535"),
    ])
    func parsesAddresses(text: String, family: SocketAddress.Family, port: UInt16, description: String) throws {
        let address = try #require(SocketAddress(text))
        #expect(address.family == family)
        #expect(address.port == port)
        #expect(address.description == description)
        #expect(SocketAddress(address.description) == address, "description parses back")
    }

    @Test(arguments: [
        "", "localhost", "1.2.3", "256.1.1.1", "1.2.3.4:", "1.2.3.4:65536", "1.2.3.4:+1", "1.2.3.4:٣",
        "[::1", "[::1]x", "[::1]:", "[1.2.3.4]:5", "::1:99999", "1.2.3.4 ", "[::1]:5222:1",
    ])
    func rejectsMalformedAddresses(text: String) {
        #expect(SocketAddress(text) == nil)
    }

    /// Per-address limits count IPv4 addresses one by one and IPv6 by /64.
    @Test(arguments: [
        ("192.0.2.7", "192.0.2.7"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("2001:db8::1", "2001:db8::/64"),
        ("2001:db8::ffff:ffff:ffff:ffff", "2001:db8::/64"),
        ("2001:db8:0:1::1", "2001:db8:0:1::/64"),
        ("::1", "::/64"),
    ])
    func addressBlocks(ip: String, block: String) throws {
        #expect(try #require(SocketAddress(ip: ip, port: 5222)).addressBlock == block)
    }

    @Test func bareIPInitializerTakesNoPort() {
        #expect(SocketAddress(ip: "::1", port: 5222)?.description == "[::1]:5222")
        #expect(SocketAddress(ip: "127.0.0.1:1", port: 5222) == nil)
        #expect(SocketAddress(ip: "[::1]", port: 5222) == nil)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.255.0.9", true), ("128.0.0.1", false), ("0.0.0.0", false),
        ("10.0.0.1", false), ("::1", true), ("::", false), ("::2", false), ("::ffff:127.0.0.1", true),
        ("::ffff:10.0.0.1", false), ("1::1", false),
    ])
    func knowsLoopback(text: String, loopback: Bool) throws {
        #expect(try #require(SocketAddress(text)).isLoopback == loopback)
    }

    @Test func portIsPartOfIdentity() {
        #expect(SocketAddress("127.0.0.1:1") != SocketAddress("127.0.0.1:2"))
        #expect(SocketAddress("[::1]:1") == SocketAddress(ip: "0:0::1", port: 1))
    }

    @Test(arguments: ["127.0.0.1:5222", "[::1]:5222", "[2001:db8::ff:1]:65535", "0.0.0.0:0"])
    func survivesTheSockaddrRoundTrip(text: String) throws {
        let address = try #require(SocketAddress(text))
        let decoded = address.withSockAddr { pointer, length -> SocketAddress? in
            var storage = sockaddr_storage()
            let raw = UnsafeRawBufferPointer(start: pointer, count: Int(length))
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            return SocketAddress(storage)
        }
        #expect(decoded == address)
    }
}
