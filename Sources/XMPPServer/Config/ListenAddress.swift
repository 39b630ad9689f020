#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A numeric IP address and TCP port to listen on, written `127.0.0.1:5222`
/// or `[::1]:5222` (RFC 3986 §3.2.2: an IPv6 address with a port needs the
/// brackets).
///
/// Host names, `localhost` included, are refused: listening on a name would
/// mean resolving it at start, and `localhost` may resolve to one address
/// or both. Writing the addresses keeps what the server binds, and whether
/// each listener is loopback, visible in the config. Port 0 asks the system
/// for a free port (tests).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    public enum Family: Sendable, Hashable {
        case ipv4
        case ipv6
    }

    /// The address in canonical text form, without brackets: `127.0.0.1`,
    /// `::1`, `0.0.0.0`, `::`. `SocketAddress(ip:port:)` in XMPPNet reads it.
    public let host: String
    /// The address family of `host`.
    public let family: Family
    /// The TCP port; 0 lets the system choose.
    public let port: UInt16
    /// Whether only this machine can connect: 127.0.0.0/8, `::1`, or an
    /// IPv4-mapped loopback address (`::ffff:127.0.0.1`).
    public let isLoopback: Bool

    /// Parses `address:port`; `nil` if `text` is not one (see
    /// `ServerConfig`'s errors for the reason).
    public init?(_ text: String) {
        guard let address = try? Self.parse(text) else { return nil }
        self = address
    }

    init(host: String, family: Family, port: UInt16, isLoopback: Bool) {
        self.host = host
        self.family = family
        self.port = port
        self.isLoopback = isLoopback
    }

    /// `127.0.0.1:5222` or `[::1]:5222`.
    public var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Parses `address:port`, explaining what is wrong.
    static func parse(_ text: String) throws(ConfigValueError) -> ListenAddress {
        let hostText: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else {
                throw ConfigValueError(expected: "[IPv6 address]:port such as [::1]:5222", got: text)
            }
            hostText = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ConfigValueError(expected: "address:port such as 127.0.0.1:5222 or [::1]:5222", got: text)
            }
            hostText = text[..<colon]
            portText = text[text.index(after: colon)...]
            if hostText.contains(":") {
                throw ConfigValueError(
                    "an IPv6 address needs brackets before the port, as in [::1]:5222; "
                        + "got \(ConfigValueError.quoted(text))")
            }
        }
        guard let port = ConfigFile.wholeNumber(portText).flatMap(UInt16.init(exactly:)) else {
            throw ConfigValueError(
                "expected a port from 0 to 65535 after the address, got \(ConfigValueError.quoted(text))")
        }
        if text.hasPrefix("[") {
            guard let (host, loopback) = ipv6(String(hostText)) else {
                throw ConfigValueError(expected: "[IPv6 address]:port such as [::1]:5222", got: text)
            }
            return ListenAddress(host: host, family: .ipv6, port: port, isLoopback: loopback)
        }
        var address = in_addr()
        guard inet_pton(AF_INET, String(hostText), &address) == 1 else {
            throw ConfigValueError(
                "expected a numeric address such as 127.0.0.1:5222, [::1]:5222, 0.0.0.0:5222 or [::]:5222 "
                    + "(host names such as localhost are not resolved), got \(ConfigValueError.quoted(text))")
        }
        let loopback = withUnsafeBytes(of: address) { $0[0] == 127 }
        return ListenAddress(host: String(hostText), family: .ipv4, port: port, isLoopback: loopback)
    }

    /// The canonical text of an IPv6 address (RFC 5952, as `inet_ntop`
    /// writes it) and whether it is loopback; `nil` if it is not one. Zone
    /// identifiers (`%eth0`) are refused.
    private static func ipv6(_ text: String) -> (String, Bool)? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: address) { Array($0) }
        let loopback =
            bytes == [UInt8](repeating: 0, count: 15) + [1]
            || (bytes[..<12].elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) && bytes[12] == 127)
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return (String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), loopback)
    }
}
