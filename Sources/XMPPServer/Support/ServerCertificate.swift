import XMPPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's certificate as found or made at start, for XMPP and HTTPS
/// alike: the configured files; else one issued by the data directory's
/// local certificate authority (created on first run, reissued when the
/// names it must cover change or it nears its end); else, in a data
/// directory from before the authority, the self-signed certificate there.
struct ServerCertificate {
    /// The certificate and key as TLS wants them.
    let configuration: TLSConfiguration
    /// The authority that issued the certificate, when it did.
    let authority: LocalCertificateAuthority?

    /// Finds or makes the certificate and logs where it comes from.
    static func load(_ config: ServerConfig, log: Logger) throws -> ServerCertificate {
        switch config.certificateSource {
        case .files(let certificate, let privateKey):
            log.notice("TLS certificate: \(certificate)")
            return ServerCertificate(
                configuration: .server(certificate: .pemFiles(certificateChainPath: certificate, privateKeyPath: privateKey)),
                authority: nil)
        case .generated(let certificate, _):
            let directory = config.tlsDirectory
            if access(certificate, F_OK) == 0, config.localAuthority == nil {
                let files = try SelfSignedCertificate.loadOrCreate(domain: config.domain, directory: directory)
                log.notice(
                    "TLS certificate: \(files.certificatePath) (self-signed, from before the local CA; SHA-256 "
                        + "\(files.fingerprint)); remove it and its key to have the local CA issue one")
                return ServerCertificate(configuration: .server(certificate: files.source), authority: nil)
            }
            let authority = try LocalCertificateAuthority.loadOrCreate(
                domain: config.domain, directory: directory, host: hostName())
            let names = config.certificateNames(lanAddresses: lanIPv4Addresses())
            let outside = names.filter { !authority.permits($0) }
            if !outside.isEmpty {
                log.warning(
                    "the server certificate leaves out \(outside.joined(separator: ", ")): outside the local CA's "
                        + "names (the domain, localhost, private addresses); set certificate and private_key to serve them")
            }
            let files = try authority.serverCertificate(for: names, directory: directory)
            let origin =
                files.wasCreated
                ? "issued by the local CA now"
                : authority.issued(certificateAt: files.certificatePath)
                    ? "issued by the local CA, reused" : "not issued by the local CA: put there by hand, used as it is"
            log.notice("TLS certificate: \(files.certificatePath) (\(origin); SHA-256 \(files.fingerprint))")
            if authority.wasCreated { log.notice("local CA created: \(authority.certificatePath)") }
            return ServerCertificate(configuration: .server(certificate: files.source), authority: authority)
        }
    }

    /// This machine's name, for the authority's own name.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this machine" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension ServerConfig {
    /// What the server certificate the local CA issues covers: the domain,
    /// the group chat and upload services that are on, `localhost`, and the
    /// addresses clients may dial: each listener's own address, or for a
    /// listener on every address the loopback addresses and `lanAddresses`.
    public func certificateNames(lanAddresses: [String]) -> [String] {
        var names = [domain]
        if muc.enabled { names.append(mucService) }
        if upload.enabled { names += uploadServiceAddresses }
        names.append("localhost")
        for address in listen + directTLSListen + http.tlsListen {
            if address.host == "0.0.0.0" || address.host == "::" {
                names += ["127.0.0.1"] + (address.family == .ipv6 ? ["::1"] : []) + lanAddresses
            } else {
                names.append(address.host)
            }
        }
        return names.uniqued()
    }
}
