/// The effective configuration as `swiftletd check-config` prints it.
///
/// First every key as `key = value`, aligned and in the order of
/// `etc/swiftletd.conf` (so any line can be pasted into a config file),
/// then what follows from them: the TLS policy in force and why, which SASL
/// mechanisms each kind of stream offers, where the certificate comes from, how
/// clients reach the server (`ClientReach`), and one
/// `warning:` line per entry of `warnings`.
///
/// - Parameter config: A validated configuration.
/// - Returns: Lines separated by `\n`, without a final newline.
public func checkConfigReport(_ config: ServerConfig) -> String {
    let width = ServerConfig.keys.map(\.name.count).max() ?? 0
    var lines = ServerConfig.keys.map { key in
        let value = key.format(config)
        let padded = key.name.padding(toLength: width, withPad: " ", startingAt: 0)
        return value.isEmpty ? "\(padded) =" : "\(padded) = \(value)"
    }
    lines.append("")
    let policy = config.effectiveTLSPolicy
    lines.append("TLS in force: \(policy)")
    switch policy.requirement {
    case .required:
        lines.append("  STARTTLS is offered with <required/>; nothing but STARTTLS is accepted before TLS")
    case .optional:
        lines.append("  STARTTLS is offered without <required/>; SCRAM-SHA-1 and SCRAM-SHA-256 work without TLS")
    }
    lines.append("  PLAIN is accepted only over TLS")
    lines += saslReport(config)
    switch config.certificateSource {
    case .files(let certificate, let privateKey):
        lines.append("Certificate: \(certificate) (private key \(privateKey))")
    case .generated(let certificate, let privateKey):
        lines.append(
            "Certificate: issued for \(config.domain) by the local CA at start as \(certificate) "
                + "(private key \(privateKey)), renewed and reissued as needed")
    }
    if config.upload.enabled, let (url, reason) = config.effectiveUploadURL() {
        let aliases = config.uploadServiceAddresses.dropFirst().map { " (also \($0))" }.joined()
        lines.append("Upload (XEP-0363): service \(config.uploadService)\(aliases)")
        lines.append("  URLs \(url)/upload/…: \(reason)")
        lines.append("  files in \(config.dataDirectory)/uploads")
    } else {
        lines.append("Upload (XEP-0363): off; nothing listens for HTTP")
    }
    lines += ClientReach(config).lines
    lines += config.warnings.map { "warning: \($0)" }
    return lines.joined(separator: "\n")
}

/// The mechanisms each kind of stream offers, as `ClientSession` chooses
/// them: they depend only on whether the stream is encrypted, so a client
/// finds the mechanisms it saw once again after a restart.
private func saslReport(_ config: ServerConfig) -> [String] {
    var lines: [String] = []
    if config.effectiveTLSPolicy.requirement == .optional {
        lines.append("SASL without TLS (RFC 6120 only): SCRAM-SHA-256, SCRAM-SHA-1")
    }
    lines.append(
        "SASL over TLS (RFC 6120 and XEP-0388 SASL2): SCRAM-SHA-256-PLUS, SCRAM-SHA-1-PLUS, SCRAM-SHA-256, "
            + "SCRAM-SHA-1, PLAIN")
    lines.append(
        "  channel binding (XEP-0440): tls-server-end-point always; tls-exporter with TLS 1.3, "
            + "or TLS 1.2 with the extended master secret")
    lines.append("  XEP-0474 downgrade protection: every SCRAM challenge hashes the list the stream offered")
    lines.append("  Bind 2 (XEP-0386) inline: carbons, client state, stream management; resumption inline")
    if config.authentication.fastTokenLifetime > .zero {
        lines.append(
            "  FAST (XEP-0484): HT-SHA-256-EXPR, HT-SHA-256-ENDP (as their channel binding allows), HT-SHA-256-NONE; "
                + "tokens valid \(ConfigValueType<Duration>.duration.format(config.authentication.fastTokenLifetime))")
    } else {
        lines.append("  FAST (XEP-0484): off (fast_token_lifetime = 0)")
    }
    return lines
}
