import Glibc
import Testing
import XMPPNet
@testable import XMPPServer

/// Connections are counted in all and per client network (an IPv4 address,
/// an IPv6 /64); loopback clients only in all.
@Suite struct ConnectionLimitsTests {
    private func address(_ text: String) -> SocketAddress { SocketAddress(text)! }

    @Test func anIPv6Slash64CountsAsOneClient() {
        var limits = ConnectionLimits(maxTotal: 100, maxPerNetwork: 2)
        #expect(limits.admit(address("[2001:db8:1:2::1]:4000")) == nil)
        #expect(limits.admit(address("[2001:db8:1:2:ffff::9]:4001")) == nil)
        #expect(limits.admit(address("[2001:db8:1:2:abcd::]:4002")) == .networkFull)
        #expect(limits.admit(address("[2001:db8:1:3::1]:4003")) == nil, "the next /64 is another client")
        limits.release(address("[2001:db8:1:2::1]:4000"))
        #expect(limits.admit(address("[2001:db8:1:2:abcd::]:4002")) == nil)
        #expect(limits.total == 3)
    }

    @Test func ipv4AddressesAndTheirMappedFormsCountTogether() {
        var limits = ConnectionLimits(maxTotal: 100, maxPerNetwork: 1)
        #expect(limits.admit(address("203.0.113.7:4000")) == nil)
        #expect(limits.admit(address("[::ffff:203.0.113.7]:4001")) == .networkFull)
        #expect(limits.admit(address("203.0.113.8:4000")) == nil)
    }

    @Test func loopbackCountsOnlyInTheTotal() {
        var limits = ConnectionLimits(maxTotal: 3, maxPerNetwork: 1)
        #expect(limits.admit(address("127.0.0.1:4000")) == nil)
        #expect(limits.admit(address("127.0.0.1:4001")) == nil)
        #expect(limits.admit(address("[::1]:4002")) == nil)
        #expect(limits.admit(address("127.0.0.1:4003")) == .serverFull)
        limits.release(address("127.0.0.1:4000"))
        #expect(limits.admit(address("198.51.100.1:4000")) == nil)
        #expect(limits.total == 3)
    }

    @Test func theOpenFileLimitIsRaisedToTheHardLimit() {
        let fitting = ConnectionLimits.raiseOpenFileLimit(reserve: 10)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #expect(limit.rlim_cur == limit.rlim_max)
        #expect(limit.rlim_cur == rlim_t.max || fitting == Int(limit.rlim_cur) - 10)
    }
}
