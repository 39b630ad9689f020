/// The features a server installs.
public enum Features {
    /// Everything Swiftlet implements, in the order they hook in, as
    /// `config` sets them up.
    public static func standard(for config: ServerConfig) -> [any ServerFeature] {
        [
            Disco(), Ping(), Registration(), LegacySession(), Roster(), PresenceBroadcast.Feature(), ClientStateIndication(),
            VCardTemp(), Blocking(), Carbons(), SoftwareVersion(reply: config.versionReply), EntityTime(), LastActivity(),
            LegacyArchivingPreferences(), StreamManagement(), HTTPUpload(config: config),
        ]
    }
}
