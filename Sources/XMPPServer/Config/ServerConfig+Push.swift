extension ServerConfig {
    /// Push notifications to mobile clients' push services (XEP-0357).
    public struct PushSettings: Sendable, Equatable {
        /// Whether users may enable push services. Key `push`, default yes.
        /// Off, `<enable/>` gets `feature-not-implemented` and accounts do
        /// not advertise `urn:xmpp:push:0`.
        public var enabled = true
        /// Most push services (service and node) one account may enable;
        /// one more gets `resource-constraint`. Key
        /// `push_max_registrations`, default 10, from 1 to 100.
        public var maxRegistrations = 10
        /// How many notifications in a row a push service may refuse
        /// (XEP-0357 §7.1) before its registration is removed. Key
        /// `push_max_failures`, default 3, from 1 to 100.
        public var maxFailures = 3
        /// Whether a notification carries the message's body
        /// (`last-message-body`). Key `push_include_body`, default no: the
        /// body then passes through the app server and Apple or Google.
        /// The XEP advises against letting clients choose this in band
        /// (§10), so it is the operator's setting.
        public var includeBody = false
        /// How long a session that enabled push waits to be resumed once
        /// its connection dropped (a phone's app is suspended), instead of
        /// `resume_timeout`; messages for it meanwhile are announced and
        /// queued, within `sm_max_unacked`. Key `push_resume_timeout`,
        /// default 72h, from 1m to 30d.
        public var resumeTimeout = Duration.seconds(72 * 3600)
        /// What the contacts see of a resource whose app is suspended (its
        /// session detached, waiting to be resumed): `xa` or `away` in
        /// place of its last presence until it is back, or `unchanged`.
        /// Key `push_hibernation_show`, default `xa`.
        public var hibernationShow = HibernationShow.xa
        /// The built-in push service that sends to Apple's push service
        /// for the developer's own iOS app.
        public var apns = APNs()
    }

    /// What a hibernating resource shows (`push_hibernation_show`).
    public enum HibernationShow: String, Sendable, CaseIterable {
        case xa, away, unchanged
    }

    /// The built-in APNs push service: a push service address of this
    /// server that turns each notification into a request to Apple's push
    /// service (APNs), signed with the developer's key (token-based
    /// authentication). Off while `keyFile` is empty.
    public struct APNs: Sendable, Equatable {
        /// The developer's APNs authentication key, the `.p8` file Apple
        /// hands out once; readable by swiftletd's user only (mode 0600).
        /// Key `apns_key_file`, default empty (off).
        public var keyFile = ""
        /// The key's id (10 characters, shown beside the key). Key
        /// `apns_key_id`.
        public var keyID = ""
        /// The developer's team id (10 characters). Key `apns_team_id`.
        public var teamID = ""
        /// The app's bundle id, which APNs calls the topic. Key
        /// `apns_topic`.
        public var topic = ""
        /// Which APNs: `sandbox` (apps run from Xcode) or `production`
        /// (TestFlight and the App Store). Key `apns_environment`, default
        /// `sandbox`.
        public var environment = Environment.sandbox
        /// What the app is woken with: `alert` (a visible notification)
        /// or `background` (the app runs briefly, silently). Key
        /// `apns_push_type`, default `alert`.
        public var pushType = PushType.alert
        /// The push service's address that clients enable. Key
        /// `apns_service`, default empty: `apns.<domain>`.
        public var service = ""
        /// An `https://HOST[:PORT]` to send to instead of Apple's, for a
        /// relay or a test double. Key `apns_endpoint`, default empty.
        public var endpoint = ""
        /// PEM certificates trusted besides the system's for the endpoint
        /// (a test double's). Key `apns_ca_file`, default empty.
        public var caFile = ""

        /// Whether the built-in service is on.
        public var isEnabled: Bool { !keyFile.isEmpty }

        /// APNs' two environments.
        public enum Environment: String, Sendable, CaseIterable {
            case sandbox, production
        }

        /// The `apns-push-type`s the service sends.
        public enum PushType: String, Sendable, CaseIterable {
            case alert, background
        }
    }

    /// The built-in APNs service's address: `apns_service`, or
    /// `apns.<domain>` when it is empty.
    public var apnsService: String {
        push.apns.service.isEmpty ? "apns.\(domain)" : push.apns.service.lowercased()
    }

    /// Where APNs requests go: `apns_endpoint`, or Apple's host for the
    /// environment.
    public var apnsEndpoint: String {
        if !push.apns.endpoint.isEmpty { return push.apns.endpoint }
        return push.apns.environment == .production ? "https://api.push.apple.com" : "https://api.sandbox.push.apple.com"
    }

    /// Checks the push settings.
    func checkPush() throws(ConfigError) {
        try require(push.maxRegistrations, in: 1...100, key: "push_max_registrations", formatNumber)
        try require(push.maxFailures, in: 1...100, key: "push_max_failures", formatNumber)
        try require(push.resumeTimeout, in: .seconds(60)...(.seconds(30 * 86_400)), key: "push_resume_timeout", format)
        let apns = push.apns
        guard apns.isEnabled else { return }
        for (key, value) in [("apns_key_id", apns.keyID), ("apns_team_id", apns.teamID)]
        where value.count != 10 || !value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            throw ConfigError(key: key, "must be the 10 letters and digits Apple shows, got '\(value)'")
        }
        if apns.topic.isEmpty { throw ConfigError(key: "apns_topic", "must be the app's bundle id when apns_key_file is set") }
        if !apns.endpoint.isEmpty, !apns.endpoint.hasPrefix("https://") {
            throw ConfigError(key: "apns_endpoint", "must be an https:// URL, got '\(apns.endpoint)'")
        }
        if componentDomains.contains(apnsService) {
            throw ConfigError(key: "apns_service", "\(apnsService) is also a component's domain")
        }
    }
}
