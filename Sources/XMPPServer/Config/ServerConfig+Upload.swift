/// The upload service's addresses and URLs as the settings resolve them,
/// and the checks of the `http_*` and `upload_*` keys.
extension ServerConfig {
    /// The name Openfire's HTTP upload plugin answers at, `httpfileupload`
    /// in front of the domain.
    ///
    /// COMPAT: XMPPFramework: apps written against Openfire send their slot
    /// requests there without asking disco (XMPPFRAMEWORK.md §12).
    static let openfireUploadPrefix = "httpfileupload."

    /// The upload service's address: `upload_service`, or
    /// `upload.<domain>` when it is empty.
    public var uploadService: String {
        upload.service.isEmpty ? "upload.\(domain)" : upload.service
    }

    /// Every address the upload service answers at: `uploadService` first
    /// (the one disco lists), then `httpfileupload.<domain>`.
    public var uploadServiceAddresses: [String] {
        let openfire = Self.openfireUploadPrefix + domain
        return uploadService == openfire ? [openfire] : [uploadService, openfire]
    }

    /// The base of upload and download URLs (no trailing slash), and why:
    /// `upload_url` when set; else `https://DOMAIN:PORT` of the first
    /// `https_listen` address; else `http://DOMAIN:PORT` of the first
    /// `http_listen` address.
    ///
    /// - Parameters:
    ///   - httpPort: The port the first HTTP listener got (for port 0);
    ///     nil takes the configured one.
    ///   - httpsPort: The same for the first HTTPS listener.
    /// - Returns: nil when nothing listens and no `upload_url` is set
    ///   (validation refuses that while upload is on).
    public func effectiveUploadURL(httpPort: UInt16? = nil, httpsPort: UInt16? = nil)
        -> (url: String, reason: String)?
    {
        if !upload.url.isEmpty { return (upload.url, "set in the config (upload_url)") }
        if let first = http.tlsListen.first {
            return ("https://\(domain):\(httpsPort ?? first.port)", "the first https_listen address")
        }
        if let first = http.listen.first {
            return (
                "http://\(domain):\(httpPort ?? first.port)",
                "the first http_listen address; no https_listen is set")
        }
        return nil
    }

    /// An `Origin` as browsers send it (RFC 6454 §6.2): `http` or `https`,
    /// a host, an optional port, nothing else; lowercased.
    static func checkedOrigin(_ origin: String) throws(ConfigError) -> String {
        let lowered = origin.lowercased()
        let rest = lowered.hasPrefix("https://") ? lowered.dropFirst(8) : lowered.hasPrefix("http://") ? lowered.dropFirst(7) : nil
        guard let rest, !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#"),
            !rest.contains("@"), !rest.contains(" ")
        else {
            throw ConfigError(key: "websocket_origins", "\(origin) is not an origin such as https://chat.example.org:8443")
        }
        return lowered
    }

    /// Checks `metrics_token`: a bearer token (RFC 6750 §2.1 `b64token`,
    /// without the trailing `=`), long enough not to be guessed.
    static func checkedMetricsToken(_ token: String) throws(ConfigError) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/")
        guard token.isEmpty || (token.count >= 16 && token.allSatisfy(allowed.contains)) else {
            throw ConfigError(
                key: "metrics_token",
                "expected at least 16 characters of A-Z a-z 0-9 - . _ ~ + /, such as a random hex string")
        }
        return token
    }

    /// A `ws://` or `wss://` URL with a host and nothing a document quoting
    /// it would have to escape (it goes into host-meta as it is).
    static func checkWebSocketURL(_ url: String) throws(ConfigError) {
        let lowered = url.lowercased()
        let rest = lowered.hasPrefix("wss://") ? lowered.dropFirst(6) : lowered.hasPrefix("ws://") ? lowered.dropFirst(5) : nil
        guard let rest, let first = rest.first, first != "/",
            !rest.contains(where: { " \t'\"<>&#?\\".contains($0) })
        else {
            throw ConfigError(key: "websocket_url", "\(url) is not a URL such as wss://chat.example.org/xmpp-websocket")
        }
    }

    /// Checks the `http_*`, `websocket_*`, `metrics*` and `upload_*` keys; normalizes
    /// `upload_service`, `upload_url` and the origins.
    mutating func checkUpload() throws(ConfigError) {
        if let exposed = http.listen.first(where: { !$0.isLoopback }) {
            throw ConfigError(
                key: "http_listen",
                "\(exposed) is not loopback: plain HTTP is served on loopback only; use https_listen, "
                    + "or a TLS reverse proxy on this machine with upload_url")
        }
        try require(http.timeout, in: .seconds(1)...(.seconds(3600)), key: "http_timeout", format)
        http.webSocketOrigins = try http.webSocketOrigins.map(Self.checkedOrigin)
        if !http.webSocketURL.isEmpty { try Self.checkWebSocketURL(http.webSocketURL) }
        http.metricsToken = try Self.checkedMetricsToken(http.metricsToken)
        if http.metrics && http.listen.isEmpty && http.tlsListen.isEmpty {
            throw ConfigError(key: "metrics", "is on, but nothing serves /metrics: set http_listen or https_listen")
        }
        if !upload.service.isEmpty {
            do {
                upload.service = try ConfigValueType<String>.domain.parse(upload.service)
            } catch {
                throw ConfigError(key: "upload_service", error.message)
            }
            if upload.service == domain {
                throw ConfigError(key: "upload_service", "must differ from the domain, such as upload.\(domain)")
            }
        }
        if !upload.url.isEmpty {
            upload.url = try Self.checkedBaseURL(upload.url)
        }
        guard upload.enabled else { return }
        if http.listen.isEmpty && http.tlsListen.isEmpty {
            throw ConfigError(
                key: "upload", "is on, but nothing serves the files: set http_listen or https_listen, or upload = no")
        }
        try require(upload.maxFileSize, in: (1 << 10)...(64 << 30), key: "upload_max_size", formatSize)
        try require(upload.quota, in: upload.maxFileSize...(1 << 40), key: "upload_quota", formatSize,
            why: "; a quota below upload_max_size would refuse the largest files anyway")
        try require(upload.slotLifetime, in: .seconds(10)...(.seconds(86_400)), key: "upload_slot_lifetime", format)
        try require(upload.expiry, in: .seconds(3600)...(.seconds(3650 * 86_400)), key: "upload_expiry", format)
    }

    /// `upload_url` without a trailing slash, once it is an `http` or
    /// `https` URL with a host and no query or fragment.
    private static func checkedBaseURL(_ text: String) throws(ConfigError) -> String {
        let lowered = text.lowercased()
        guard let scheme = ["https://", "http://"].first(where: { lowered.hasPrefix($0) }) else {
            throw ConfigError(key: "upload_url", "expected an http:// or https:// URL, got '\(text)'")
        }
        let rest = text.dropFirst(scheme.count)
        guard let first = rest.first, first != "/", !rest.contains(where: { "?# \t".contains($0) }) else {
            throw ConfigError(
                key: "upload_url", "expected a base URL such as https://files.example.com, without query or fragment")
        }
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Warnings about the upload settings, for `warnings`.
    var uploadWarnings: [String] {
        guard upload.enabled, upload.url.isEmpty else { return [] }
        if http.tlsListen.isEmpty {
            return [
                "upload URLs are plain http:// (https_listen is empty): Gajim, Dino and iOS apps (App Transport "
                    + "Security) refuse them; set https_listen"
            ]
        }
        let exposed = (listen + directTLSListen).contains { !$0.isLoopback }
        let httpExposed = (http.listen + http.tlsListen).contains { !$0.isLoopback }
        guard exposed, !httpExposed else { return [] }
        return [
            "clients on other machines cannot upload files: HTTP listens on loopback only; "
                + "set https_listen (and a real certificate), or upload_url for a reverse proxy"
        ]
    }
}
