extension ServerConfig {
    /// This configuration with its domain normalized, after checking every
    /// range and every rule that involves two settings.
    ///
    /// `load(from:overrides:)` calls it; call it also after changing a
    /// configuration in code.
    ///
    /// - Throws: `ConfigError` naming the key at fault (without a location:
    ///   the loader adds where the key was set).
    public func validated() throws(ConfigError) -> ServerConfig {
        var config = self
        do {
            config.domain = try ConfigValueType<String>.domain.parse(domain)
        } catch {
            throw ConfigError(key: "domain", error.message)
        }
        try config.check()
        return config
    }

    private mutating func check() throws(ConfigError) {
        if dataDirectory.isEmpty { throw ConfigError(key: "data_directory", "must not be empty") }
        try checkListeners()
        try normalizeAdmins()
        try require(threads, in: 1...256, key: "threads", formatNumber)
        switch (tls.certificate.isEmpty, tls.privateKey.isEmpty) {
        case (true, false):
            throw ConfigError(
                key: "private_key", "is set but certificate is not; set both, or neither for a self-signed certificate")
        case (false, true):
            throw ConfigError(
                key: "certificate", "is set but private_key is not; set both, or neither for a self-signed certificate")
        default:
            break
        }
        try check(registration.throttle, key: "registration_throttle")
        try require(authentication.saslMaxAttempts, in: 1...100, key: "sasl_max_attempts", formatNumber)
        try require(
            authentication.scramIterations, in: 4096...1_000_000, key: "scram_iterations", formatNumber,
            why: "; RFC 7677 asks for at least 4096, and XMPPFramework refuses fewer")
        try check(authentication.loginThrottle, key: "login_throttle")
        try check(authentication.accountLoginThrottle, key: "login_account_throttle")
        try require(
            authentication.fastTokenLifetime, in: .zero...(.seconds(366 * 86400)), key: "fast_token_lifetime", format)
        try require(authentication.fastMaxClients, in: 1...1000, key: "fast_max_clients", formatNumber)
        try require(timeouts.handshake, in: .seconds(1)...(.seconds(3600)), key: "handshake_timeout", format)
        try require(timeouts.resume, in: .zero...(.seconds(3600)), key: "resume_timeout", format)
        try require(timeouts.acknowledgement, in: .seconds(5)...(.seconds(3600)), key: "sm_ack_timeout", format)
        if timeouts.idle <= .seconds(150) {
            throw ConfigError(
                key: "idle_timeout",
                "must be more than 150s, got \(format(timeouts.idle)); "
                    + "XMPPFramework apps send a space only every 120 to 150 s")
        }
        try require(timeouts.keepaliveInterval, in: .seconds(1)...(.seconds(86_400)), key: "keepalive_interval", format)
        try require(timeouts.close, in: .seconds(1)...(.seconds(60)), key: "close_timeout", format)
        try require(
            limits.maxStanzaSizeUnauthenticated, in: 10_000...(64 << 20), key: "max_stanza_size_unauthenticated",
            formatSize,
            why: "; RFC 6120 §13.12 requires at least 10000 bytes")
        try require(
            limits.maxStanzaSize, in: limits.maxStanzaSizeUnauthenticated...(64 << 20), key: "max_stanza_size",
            formatSize,
            why: "; it cannot be below max_stanza_size_unauthenticated")
        try require(limits.offlineQuota, in: 0...1_000_000, key: "offline_quota", formatNumber)
        try require(limits.offlineQuotaSize, in: 0...(1 << 30), key: "offline_quota_size", formatSize)
        // A user's whole offline backlog goes out at login: it must fit
        // under the output and stream management bounds, or the stream
        // would end before the user could read it.
        try require(
            limits.smMaxUnacked, in: (limits.offlineQuota + 1000)...2_000_000, key: "sm_max_unacked", formatNumber,
            why: "; it must exceed offline_quota by 1000, since a login gets the whole offline backlog at once")
        try require(
            limits.smMaxUnackedSize, in: (limits.offlineQuotaSize + limits.maxStanzaSize)...(2 << 30),
            key: "sm_max_unacked_size", formatSize,
            why: "; it must hold offline_quota_size and a stanza of max_stanza_size")
        try require(
            limits.maxQueuedOutput, in: (limits.offlineQuotaSize + 2 * limits.maxStanzaSize)...(2 << 30),
            key: "max_queued_output", formatSize,
            why: "; it must hold offline_quota_size and two stanzas of max_stanza_size")
        try require(limits.maxVCardSize, in: (1 << 10)...(64 << 20), key: "vcard_max_size", formatSize)
        try require(limits.blocklistMaxItems, in: 1...100_000, key: "blocklist_max_items", formatNumber)
        try require(
            limits.privateStorageMaxSize, in: (1 << 10)...(16 << 20), key: "private_storage_max_size", formatSize)
        try require(
            limits.privateStorageMaxElements, in: 1...10_000, key: "private_storage_max_elements", formatNumber)
        try require(limits.pepMaxItems, in: 1...10_000, key: "pep_max_items", formatNumber)
        try require(limits.pepMaxNodes, in: 1...100_000, key: "pep_max_nodes", formatNumber)
        try require(limits.pepMaxItemSize, in: (1 << 10)...(64 << 20), key: "pep_max_item_size", formatSize)
        try require(limits.pepMaxSubscribers, in: 1...100_000, key: "pep_max_subscribers", formatNumber)
        try require(limits.pepMaxSubscriptions, in: 1...100_000, key: "pep_max_subscriptions", formatNumber)
        try require(limits.pepQuota, in: (1 << 10)...(1 << 30), key: "pep_quota", formatSize)
        try require(limits.pepMaxNameSize, in: 64...(64 << 10), key: "pep_max_name_size", formatSize)
        try require(limits.rosterMaxItems, in: 1...100_000, key: "roster_max_items", formatNumber)
        try require(limits.rosterMaxGroups, in: 1...10_000, key: "roster_max_groups", formatNumber)
        try require(limits.maxDirectedPresence, in: 1...100_000, key: "max_directed_presence", formatNumber)
        try require(limits.maxResourcesPerAccount, in: 1...1000, key: "max_resources_per_account", formatNumber)
        try require(limits.maxConnections, in: 1...1_000_000, key: "max_connections", formatNumber)
        try require(limits.maxConnectionsPerNetwork, in: 1...1_000_000, key: "max_connections_per_address", formatNumber)
        if let retention = archive.retention, retention < .seconds(3600) {
            throw ConfigError(key: "mam_retention", "must be at least 1h, got \(format(retention)); or forever")
        }
        try checkUpload()
        try checkMUC()
        try checkExternalServices()
        try checkComponents()
        try checkPush()
    }

    /// At least one XMPP listener, and no address listed twice, in one key
    /// or across the listener keys (port 0 aside:
    /// each such listener gets its own free port).
    private func checkListeners() throws(ConfigError) {
        if listen.isEmpty && directTLSListen.isEmpty {
            throw ConfigError(key: "listen", "no listener: set listen or direct_tls_listen")
        }
        var seen: Set<ListenAddress> = []
        let keys = [
            ("listen", listen), ("direct_tls_listen", directTLSListen), ("http_listen", http.listen),
            ("https_listen", http.tlsListen), ("component_listen", components.listen),
        ]
        for (key, addresses) in keys {
            for address in addresses where address.port != 0 {
                if !seen.insert(address).inserted {
                    throw ConfigError(key: key, "\(address) is listed twice")
                }
            }
        }
    }

    /// Turns each of `admins` into its account's localpart; an entry must
    /// be a localpart or a bare JID of the served domain.
    private mutating func normalizeAdmins() throws(ConfigError) {
        admins = try admins.map { (entry: String) throws(ConfigError) -> String in
            do {
                return try Username.of(account: entry, domain: domain)
            } catch {
                throw ConfigError(key: "admins", "'\(entry)' is not an account of \(domain), such as alice or alice@\(domain)")
            }
        }
    }

    private func check(_ throttle: Throttle?, key: String) throws(ConfigError) {
        guard let throttle else { return }
        if throttle.count < 1 || throttle.period < .seconds(1) {
            throw ConfigError(key: key, "expected at least 1 per at least 1s, got '\(throttle)'; use off for no limit")
        }
    }

    /// Throws unless `value` is in `range`, showing numbers with `show`.
    func require<Value: Comparable>(
        _ value: Value, in range: ClosedRange<Value>, key: String, _ show: (Value) -> String, why: String = ""
    ) throws(ConfigError) {
        guard !range.contains(value) else { return }
        throw ConfigError(
            key: key, "must be from \(show(range.lowerBound)) to \(show(range.upperBound)), got \(show(value))\(why)")
    }

    func format(_ duration: Duration) -> String { ConfigValueType<Duration>.duration.format(duration) }
    func formatSize(_ bytes: Int) -> String { ConfigValueType<Int>.size.format(bytes) }
    func formatNumber(_ number: Int) -> String { String(number) }
}
