#if canImport(Glibc)
    import Glibc
#endif
import XMPPNet

/// How many client connections are open, in all and per address block
/// (`SocketAddress.addressBlock`: an IPv4 address, an IPv6 /64), and
/// whether one more may be accepted. Loopback clients are counted in the
/// total only: on loopback they are local tools, tests, or a proxy that
/// speaks for many clients.
///
/// The server keeps one behind a mutex for the connections of all its
/// loops; the HTTP server one on its loop.
struct ConnectionLimits {
    /// Why a connection was refused.
    enum Refusal: Equatable {
        case serverFull
        case networkFull
    }

    let maxTotal: Int
    let maxPerNetwork: Int
    private(set) var total = 0
    private var perNetwork: [String: Int] = [:]

    init(maxTotal: Int, maxPerNetwork: Int) {
        self.maxTotal = maxTotal
        self.maxPerNetwork = maxPerNetwork
    }

    /// Counts a new connection from `peer`, or says why it must be refused
    /// (and then counts nothing).
    mutating func admit(_ peer: SocketAddress) -> Refusal? {
        guard total < maxTotal else { return .serverFull }
        if !peer.isLoopback {
            let network = peer.addressBlock
            let open = perNetwork[network, default: 0]
            guard open < maxPerNetwork else { return .networkFull }
            perNetwork[network] = open + 1
        }
        total += 1
        return nil
    }

    /// Forgets a connection `admit` counted.
    mutating func release(_ peer: SocketAddress) {
        total -= 1
        guard !peer.isLoopback else { return }
        let network = peer.addressBlock
        let open = perNetwork[network, default: 1] - 1
        perNetwork[network] = open > 0 ? open : nil
    }

    /// Raises this process's soft limit on open files to its hard limit, and
    /// returns how many connections fit under it with `reserve` descriptors
    /// kept for the database, listeners, uploads and logs.
    ///
    /// The corresponding C functions are `getrlimit` and `setrlimit`.
    static func raiseOpenFileLimit(reserve: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return .max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur != rlim_t.max else { return .max }  // RLIM_INFINITY
        return max(0, Int(clamping: limit.rlim_cur) - reserve)
    }
}
