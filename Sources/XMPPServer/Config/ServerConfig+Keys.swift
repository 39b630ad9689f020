import XMPPCore
import XMPPStorage

/// One key of `swiftletd.conf`: its name, the `ServerConfig` field it sets,
/// and how its value is read and written.
struct ConfigKey: Sendable {
    /// The key as written in the file, such as `idle_timeout`.
    let name: String
    /// The field it sets; tests check every field has a key.
    let field: PartialKeyPath<ServerConfig> & Sendable
    /// Sets the field from the items of a value.
    let apply: @Sendable (inout ServerConfig, [String]) throws(ConfigValueError) -> Void
    /// The field's value as the file writes it.
    let format: @Sendable (ServerConfig) -> String

    /// A key taking one value (or none, if the type has an empty value).
    static func single<Value>(
        _ name: String, _ field: WritableKeyPath<ServerConfig, Value> & Sendable, _ type: ConfigValueType<Value>
    ) -> ConfigKey {
        ConfigKey(
            name: name, field: field,
            apply: { config, items throws(ConfigValueError) in
                switch items.count {
                case 0:
                    guard let empty = type.emptyValue else {
                        throw ConfigValueError("missing value: expected \(type.expected)")
                    }
                    config[keyPath: field] = empty
                case 1:
                    config[keyPath: field] = try type.parse(items[0])
                default:
                    throw ConfigValueError(
                        "expected one value (\(type.expected)), got a list of \(items.count); "
                            + "quote a value that contains ','")
                }
            },
            format: { type.format($0[keyPath: field]) })
    }

    /// A key taking a comma-separated list, possibly empty.
    static func list<Element>(
        _ name: String, _ field: WritableKeyPath<ServerConfig, [Element]> & Sendable,
        _ type: ConfigValueType<Element>
    ) -> ConfigKey {
        ConfigKey(
            name: name, field: field,
            apply: { config, items throws(ConfigValueError) in
                var values: [Element] = []
                for item in items { values.append(try type.parse(item)) }
                config[keyPath: field] = values
            },
            format: { $0[keyPath: field].map(type.format).joined(separator: ", ") })
    }
}

extension ServerConfig {
    /// Every key, in the order of `etc/swiftletd.conf` and `check-config`.
    static let keys: [ConfigKey] = [
        .single("domain", \.domain, .domain),
        .single("data_directory", \.dataDirectory, .string),
        .list("listen", \.listen, .listenAddress),
        .list("direct_tls_listen", \.directTLSListen, .listenAddress),
        .list("admins", \.admins, .string),
        .single("threads", \.threads, .integer),
        .single("log_level", \.logLevel, .choice(LogLevel.allCases, name: \.name)),
        .single("tls", \.tls.policy, .choice(TLSPolicy.self)),
        .single("certificate", \.tls.certificate, .string),
        .single("private_key", \.tls.privateKey, .string),
        .single("registration", \.registration.mode, .choice(RegistrationMode.self)),
        .single("registration_throttle", \.registration.throttle, .throttle),
        .single("registration_throttle_exempt_loopback", \.registration.throttleExemptsLoopback, .boolean),
        .single("sasl_max_attempts", \.authentication.saslMaxAttempts, .integer),
        .single("scram_iterations", \.authentication.scramIterations, .integer),
        .single("login_throttle", \.authentication.loginThrottle, .throttle),
        .single("login_account_throttle", \.authentication.accountLoginThrottle, .throttle),
        .single("fast_token_lifetime", \.authentication.fastTokenLifetime, .duration),
        .single("fast_max_clients", \.authentication.fastMaxClients, .integer),
        .single("handshake_timeout", \.timeouts.handshake, .duration),
        .single("idle_timeout", \.timeouts.idle, .duration),
        .single("resume_timeout", \.timeouts.resume, .duration),
        .single("sm_ack_timeout", \.timeouts.acknowledgement, .duration),
        .single("sm_max_unacked", \.limits.smMaxUnacked, .integer),
        .single("sm_max_unacked_size", \.limits.smMaxUnackedSize, .size),
        .single("keepalive_interval", \.timeouts.keepaliveInterval, .duration),
        .single("close_timeout", \.timeouts.close, .duration),
        .single("max_stanza_size", \.limits.maxStanzaSize, .size),
        .single("max_stanza_size_unauthenticated", \.limits.maxStanzaSizeUnauthenticated, .size),
        .single("max_queued_output", \.limits.maxQueuedOutput, .size),
        .single("offline_quota", \.limits.offlineQuota, .integer),
        .single("offline_quota_size", \.limits.offlineQuotaSize, .size),
        .single("vcard_max_size", \.limits.maxVCardSize, .size),
        .single("blocklist_max_items", \.limits.blocklistMaxItems, .integer),
        .single("private_storage_max_size", \.limits.privateStorageMaxSize, .size),
        .single("private_storage_max_elements", \.limits.privateStorageMaxElements, .integer),
        .single("pep_max_items", \.limits.pepMaxItems, .integer),
        .single("pep_max_nodes", \.limits.pepMaxNodes, .integer),
        .single("pep_max_item_size", \.limits.pepMaxItemSize, .size),
        .single("pep_max_subscribers", \.limits.pepMaxSubscribers, .integer),
        .single("pep_max_subscriptions", \.limits.pepMaxSubscriptions, .integer),
        .single("pep_quota", \.limits.pepQuota, .size),
        .single("pep_max_name_size", \.limits.pepMaxNameSize, .size),
        .single("roster_max_items", \.limits.rosterMaxItems, .integer),
        .single("roster_max_groups", \.limits.rosterMaxGroups, .integer),
        .single("max_directed_presence", \.limits.maxDirectedPresence, .integer),
        .single("max_resources_per_account", \.limits.maxResourcesPerAccount, .integer),
        .single("max_connections", \.limits.maxConnections, .integer),
        .single("max_connections_per_address", \.limits.maxConnectionsPerNetwork, .integer),
        .single("version_reply", \.versionReply, .choice(VersionReply.self)),
        .single("archive", \.archive.enabled, .boolean),
        .single("mam_default", \.archive.defaultRule, .choice(ArchivePreferences.Default.self)),
        .single("mam_retention", \.archive.retention, .durationOrForever),
        .list("http_listen", \.http.listen, .listenAddress),
        .list("https_listen", \.http.tlsListen, .listenAddress),
        .single("http_timeout", \.http.timeout, .duration),
        .single("websocket", \.http.webSocket, .boolean),
        .list("websocket_origins", \.http.webSocketOrigins, .string),
        .single("websocket_url", \.http.webSocketURL, .string),
        .single("web_chat", \.http.webChat, .boolean),
        .single("metrics", \.http.metrics, .boolean),
        .single("metrics_token", \.http.metricsToken, .secret),
        .single("admin_page", \.http.adminPage, .boolean),
        .single("upload", \.upload.enabled, .boolean),
        .single("upload_service", \.upload.service, .string),
        .single("upload_url", \.upload.url, .string),
        .single("upload_max_size", \.upload.maxFileSize, .size),
        .single("upload_quota", \.upload.quota, .size),
        .single("upload_slot_lifetime", \.upload.slotLifetime, .duration),
        .single("upload_expiry", \.upload.expiry, .duration),
        .single("muc_enabled", \.muc.enabled, .boolean),
        .single("muc_domain", \.muc.domain, .string),
        .single("muc_history_length", \.muc.historyLength, .integer),
        .single("muc_max_occupants", \.muc.maxOccupants, .integer),
        .single("muc_max_rooms_per_user", \.muc.maxRoomsPerUser, .integer),
        .single("muc_max_room_name_length", \.muc.maxRoomNameLength, .integer),
        .single("muc_max_nick_length", \.muc.maxNickLength, .integer),
        .single("muc_max_stanza_size", \.muc.maxStanzaSize, .size),
        .single("muc_max_affiliations", \.muc.maxAffiliations, .integer),
        .list("muc_room_creators", \.muc.roomCreators, .string),
        .single("muc_archive_max_messages", \.muc.archiveMaxMessages, .integer),
        .list("contact_abuse", \.contact.abuse, .uri),
        .list("contact_admin", \.contact.admin, .uri),
        .list("contact_feedback", \.contact.feedback, .uri),
        .list("contact_sales", \.contact.sales, .uri),
        .list("contact_security", \.contact.security, .uri),
        .list("contact_status", \.contact.status, .uri),
        .list("contact_support", \.contact.support, .uri),
        .list("external_services", \.externalServices.services, .externalService),
        .single("turn_secret", \.externalServices.turnSecret, .secret),
        .single("turn_credentials_lifetime", \.externalServices.credentialLifetime, .duration),
        .list("component_listen", \.components.listen, .listenAddress),
        .single("component_allow_remote", \.components.allowRemote, .boolean),
        .list("components", \.components.services, .component),
        .single("push", \.push.enabled, .boolean),
        .single("push_max_registrations", \.push.maxRegistrations, .integer),
        .single("push_max_failures", \.push.maxFailures, .integer),
        .single("push_include_body", \.push.includeBody, .boolean),
        .single("push_resume_timeout", \.push.resumeTimeout, .duration),
        .single("push_hibernation_show", \.push.hibernationShow, .choice(HibernationShow.self)),
        .single("apns_key_file", \.push.apns.keyFile, .string),
        .single("apns_key_id", \.push.apns.keyID, .string),
        .single("apns_team_id", \.push.apns.teamID, .string),
        .single("apns_topic", \.push.apns.topic, .string),
        .single("apns_environment", \.push.apns.environment, .choice(APNs.Environment.self)),
        .single("apns_push_type", \.push.apns.pushType, .choice(APNs.PushType.self)),
        .single("apns_service", \.push.apns.service, .string),
        .single("apns_endpoint", \.push.apns.endpoint, .string),
        .single("apns_ca_file", \.push.apns.caFile, .string),
    ]

    /// The keys by name.
    static let keysByName = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })

    /// The key closest to a misspelt `name`, if one is close enough to be
    /// what was meant (at most one edit per three characters).
    static func suggestion(for name: String) -> String? {
        let typed = Array(name.lowercased().replacingOccurrences(of: "-", with: "_"))
        let allowed = max(1, typed.count / 3)
        // The distance is at least the difference in length, so keys too
        // short or too long are not compared: a long line of junk would
        // cost its length times every key's.
        let best = keys.filter { abs($0.name.count - typed.count) <= allowed }
            .map { ($0.name, editDistance(typed, Array($0.name))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= allowed else { return nil }
        return best.0
    }
}

/// Levenshtein distance, for "did you mean".
private func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    var previous = Array(0...b.count)
    for (i, x) in a.enumerated() {
        var current = [i + 1]
        for (j, y) in b.enumerated() {
            current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
        }
        previous = current
    }
    return previous[b.count]
}

extension ConfigValueType where Value == String {
    /// A domainpart normalized by `JID` (RFC 7622 §3.2): a host name, IPv4
    /// address or bracketed IPv6 address, without localpart or resource.
    static let domain = ConfigValueType(
        expected: "a domain such as localhost, ydc.local, 192.168.1.20 or [::1]", emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            let jid: JID
            do {
                jid = try JID(text)
            } catch {
                let hint =
                    !text.hasPrefix("[") && text.contains(":") ? " (an IPv6 address goes in brackets: [::1])" : ""
                throw ConfigValueError("\(ConfigValueError.quoted(text)) is not a valid domain: \(error)\(hint)")
            }
            guard jid.localpart == nil, jid.resourcepart == nil else {
                throw ConfigValueError(
                    "expected a domain only, got the JID \(ConfigValueError.quoted(text)); use \(jid.domainpart)")
            }
            return jid.domainpart
        },
        format: { $0 })
}

extension ConfigValueType where Value == Duration? {
    /// A duration such as `30d`, or `forever` for none.
    static let durationOrForever = ConfigValueType(
        expected: "a duration such as 30d or 12h, or forever", emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            if text.lowercased() == "forever" { return nil }
            do {
                return try ConfigValueType<Duration>.duration.parse(text)
            } catch {
                throw ConfigValueError(expected: "a duration such as 30d or 12h, or forever", got: text)
            }
        },
        format: { $0.map(ConfigValueType<Duration>.duration.format) ?? "forever" })
}

extension ConfigValueType where Value == ListenAddress {
    /// `127.0.0.1:5222`, `[::1]:5222`, `0.0.0.0:5222`, `[::]:5222`.
    static let listenAddress = ConfigValueType(
        expected: "address:port such as 127.0.0.1:5222 or [::1]:5222", emptyValue: nil,
        parse: ListenAddress.parse, format: \.description)
}

extension ConfigValueType where Value == ServerConfig.Throttle? {
    /// `5 per 1h`, or `off` for no limit.
    static let throttle = ConfigValueType(
        expected: throttleExpectation, emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            if text.lowercased() == "off" { return nil }
            let words = text.split(separator: " ", omittingEmptySubsequences: true)
            guard words.count == 3, words[1] == "per", let count = wholeNumber(words[0]),
                let period = try? ConfigValueType<Duration>.duration.parse(String(words[2]))
            else { throw ConfigValueError(expected: throttleExpectation, got: text) }
            return ServerConfig.Throttle(count, per: period)
        },
        format: { $0?.description ?? "off" })

    private static let throttleExpectation = "a count per period such as '5 per 1h', or off"
}
