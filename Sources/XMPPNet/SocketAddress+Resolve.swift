#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SocketAddress {
    /// The addresses `host` stands for, IPv6 first as the system orders
    /// them (RFC 6724), each with `port`; an IP literal (also bracketed
    /// IPv6) is returned as it is without a lookup.
    ///
    /// Blocks while the system resolver works: call it off any event loop.
    /// The corresponding C function is `getaddrinfo`.
    /// - Throws: `IOError` with the resolver's message when the name is
    ///   unknown or the lookup fails.
    public static func resolve(host: String, port: UInt16) throws(IOError) -> [SocketAddress] {
        var literal = Substring(host)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        if let address = SocketAddress(ip: String(literal), port: port) { return [address] }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            throw IOError(errno: ENOENT, reason: "resolving \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry = list
        while let info = entry?.pointee {
            entry = info.ai_next
            guard let sockaddr = info.ai_addr else { continue }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: sockaddr, count: Int(info.ai_addrlen)))
            }
            guard var address = SocketAddress(storage), !addresses.contains(where: { $0.host == address.host })
            else { continue }
            address.port = port
            addresses.append(address)
        }
        guard !addresses.isEmpty else { throw IOError(errno: ENOENT, reason: "resolving \(host): no address") }
        return addresses
    }
}
