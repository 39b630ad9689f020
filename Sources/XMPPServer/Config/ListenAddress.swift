import XMPPNet

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
    public typealias Family = SocketAddress.Family

    /// What the listener binds.
    public let socketAddress: SocketAddress

    /// The address in canonical text form, without brackets: `127.0.0.1`,
    /// `::1`, `0.0.0.0`, `::`.
    public var host: String { socketAddress.ipString }
    /// The address family of `host`.
    public var family: Family { socketAddress.family }
    /// The TCP port; 0 lets the system choose.
    public var port: UInt16 { socketAddress.port }
    /// Whether only this machine can connect: 127.0.0.0/8, `::1`, or an
    /// IPv4-mapped loopback address (`::ffff:127.0.0.1`).
    public var isLoopback: Bool { socketAddress.isLoopback }

    /// Parses `address:port`; `nil` if `text` is not one (see
    /// `ServerConfig`'s errors for the reason).
    public init?(_ text: String) {
        guard let address = try? Self.parse(text) else { return nil }
        self = address
    }

    init(_ socketAddress: SocketAddress) {
        self.socketAddress = socketAddress
    }

    /// `127.0.0.1:5222` or `[::1]:5222`.
    public var description: String { socketAddress.description }

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
        guard let port = wholeNumber(portText).flatMap(UInt16.init(exactly:)) else {
            throw ConfigValueError(
                "expected a port from 0 to 65535 after the address, got \(ConfigValueError.quoted(text))")
        }
        let isBracketed = text.hasPrefix("[")
        guard let address = SocketAddress(ip: String(hostText), port: port),
            (address.family == .ipv6) == isBracketed
        else {
            if isBracketed {
                throw ConfigValueError(expected: "[IPv6 address]:port such as [::1]:5222", got: text)
            }
            throw ConfigValueError(
                "expected a numeric address such as 127.0.0.1:5222, [::1]:5222, 0.0.0.0:5222 or [::]:5222 "
                    + "(host names such as localhost are not resolved), got \(ConfigValueError.quoted(text))")
        }
        return ListenAddress(address)
    }
}
