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
    }

    /// Checks the push settings.
    func checkPush() throws(ConfigError) {
        try require(push.maxRegistrations, in: 1...100, key: "push_max_registrations", formatNumber)
        try require(push.maxFailures, in: 1...100, key: "push_max_failures", formatNumber)
        try require(push.resumeTimeout, in: .seconds(60)...(.seconds(30 * 86_400)), key: "push_resume_timeout", format)
    }
}
