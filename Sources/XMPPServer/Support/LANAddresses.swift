#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The machine's IPv4 addresses other than loopback, for the demo banner
/// and the server certificate of a server listening on every address:
/// what a phone on the same network connects to.
/// The corresponding C function is `getifaddrs`.
public func lanIPv4Addresses() -> [String] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return [] }
    defer { freeifaddrs(list) }
    var addresses: [String] = []
    var entry = list
    while let interface = entry?.pointee {
        entry = interface.ifa_next
        guard let address = interface.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
        guard inet_ntop(AF_INET, &ipv4, &text, socklen_t(text.count)) != nil else { continue }
        let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if !string.hasPrefix("127."), !addresses.contains(string) { addresses.append(string) }
    }
    return addresses
}
