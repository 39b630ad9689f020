/// The value of `--server`: a host, and a port when one is given.
///
/// Accepted forms: `host`, `host:port`, `192.0.2.1:5222`, `::1` (an IPv6
/// address alone) and `[::1]:5222`.
public struct ServerAddress: Sendable, Hashable, LosslessStringConvertible {
    /// A host name or an IP address, without brackets.
    public var host: String
    /// The TCP port, if given.
    public var port: UInt16?

    /// An address with these parts.
    public init(host: String, port: UInt16? = nil) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST[:PORT]`; `nil` for an empty host or a port that is not
    /// 1 to 65535.
    public init?(_ text: String) {
        var host = Substring(text)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if host.count(where: { $0 == ":" }) == 1, let colon = host.firstIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        if let portText {
            guard let port = UInt16(portText), port > 0 else { return nil }
            self.port = port
        }
    }

    /// `host`, `host:port`, or `[v6]:port` for an IPv6 address with a port.
    public var description: String {
        guard let port else { return host }
        return (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
