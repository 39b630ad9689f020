#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address with a TCP port, such as `127.0.0.1:5222` or
/// `[::1]:5222`.
///
/// A value type with no allocation: addresses are compared, hashed and
/// logged freely (per-IP limits, logs).
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    public enum Family: Sendable, Hashable {
        case ipv4
        case ipv6
    }

    /// The address as numbers in host byte order (IPv6 as two halves).
    enum Host: Sendable, Hashable {
        case ipv4(UInt32)
        case ipv6(UInt64, UInt64)
    }

    let host: Host
    /// The TCP port; 0 asks `bind` for an ephemeral port.
    public var port: UInt16

    init(host: Host, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses a bare IP address: `"127.0.0.1"`, `"0.0.0.0"`, `"::1"`, `"::"`.
    /// Returns nil for anything else (host names are not resolved here).
    /// The corresponding C function is `inet_pton`.
    public init?(ip: String, port: UInt16) {
        var v4 = in_addr()
        if inet_pton(AF_INET, ip, &v4) == 1 {
            self.init(host: .ipv4(UInt32(bigEndian: v4.s_addr)), port: port)
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, ip, &v6) == 1 else { return nil }
        let (high, low) = withUnsafeBytes(of: v6) {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
             UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
        self.init(host: .ipv6(high, low), port: port)
    }

    /// Parses an address with an optional port: `"127.0.0.1"`,
    /// `"127.0.0.1:5222"`, `"::1"`, `"[::1]"`, `"[::1]:5222"`. A missing
    /// port is 0. An IPv6 address with a port needs the brackets
    /// (RFC 3986 §3.2.2), since `::1:5222` is itself an IPv6 address.
    public init?(_ text: String) {
        var ip = Substring(text)
        var portText: Substring?
        if ip.hasPrefix("[") {
            guard let close = ip.firstIndex(of: "]") else { return nil }
            let rest = ip[ip.index(after: close)...]
            ip = ip[ip.index(after: ip.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            guard ip.contains(":") else { return nil }
        } else if let colon = ip.firstIndex(of: ":"), ip[ip.index(after: colon)...].firstIndex(of: ":") == nil {
            portText = ip[ip.index(after: colon)...]
            ip = ip[..<colon]
        }
        var port: UInt16 = 0
        if let portText {
            guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
                let value = UInt16(portText)
            else { return nil }
            port = value
        }
        self.init(ip: String(ip), port: port)
    }

    /// Whether this is IPv4 or IPv6.
    public var family: Family {
        switch host {
        case .ipv4: .ipv4
        case .ipv6: .ipv6
        }
    }

    /// True for 127.0.0.0/8, `::1` and IPv4-mapped 127.0.0.0/8
    /// (RFC 1122 §3.2.1.3, RFC 4291 §2.5.3).
    public var isLoopback: Bool {
        switch host {
        case .ipv4(let address):
            return address >> 24 == 127
        case .ipv6(let high, let low):
            let mappedPrefix: UInt64 = 0x0000_FFFF_0000_0000
            return high == 0 && (low == 1 || low & 0xFFFF_FFFF_FF00_0000 == mappedPrefix | 127 << 24)
        }
    }

    /// The address without the port: `127.0.0.1` or `::1`.
    /// The corresponding C function is `inet_ntop`.
    public var ipString: String {
        switch host {
        case .ipv4(let address):
            return "\(address >> 24).\(address >> 16 & 0xFF).\(address >> 8 & 0xFF).\(address & 0xFF)"
        case .ipv6(let high, let low):
            var bytes = (high.bigEndian, low.bigEndian)
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            _ = inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count))
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The addresses that per-address limits count as one peer: an IPv4
    /// address on its own (also IPv4-mapped, RFC 4291 §2.5.5.2), an IPv6
    /// address's /64, written `2001:db8::/64`.
    ///
    /// A host chooses the low 64 bits of its IPv6 address, the interface
    /// identifier (RFC 4291 §2.5.1), and may change them at will (RFC 8981),
    /// while a /64 is the least a subscriber is given (RFC 6177 §2):
    /// counting single IPv6 addresses would give one host endless fresh counts.
    public var addressBlock: String {
        switch host {
        case .ipv4:
            return ipString
        case .ipv6(let high, let low):
            if high == 0, low >> 32 == 0xFFFF {
                return SocketAddress(host: .ipv4(UInt32(truncatingIfNeeded: low)), port: 0).ipString
            }
            return SocketAddress(host: .ipv6(high, 0), port: 0).ipString + "/64"
        }
    }

    /// `127.0.0.1:5222` or `[::1]:5222`.
    public var description: String {
        switch host {
        case .ipv4: "\(ipString):\(port)"
        case .ipv6: "[\(ipString)]:\(port)"
        }
    }
}
