/// The features a server installs.
public enum Features {
    /// Everything Swiftlet implements that `config` turns on, in the order
    /// they hook in.
    /// - Parameter clock: The wall clock archive stamps and the delay
    ///   stamps of remembered presence come from.
    public static func standard(_ config: ServerConfig, clock: WallClock = .system) -> [any ServerFeature] {
        var features: [any ServerFeature] = [
            Disco(), Ping(), Registration(), LegacySession(), Roster(), Subscriptions(), PresenceBroadcast(clock: clock),
            ClientStateIndication(), MessageDelivery(), OfflineMessages(), VCardTemp(), Blocking(), Carbons(),
            SoftwareVersion(reply: config.versionReply), EntityTime(), LastActivity(), LegacyArchivingPreferences(),
            StreamManagement(), PushNotifications(config: config), FASTTokenExpiry(), HTTPUpload(config: config), PEP(), PrivateStorage(), BookmarksConversion(),
            AvatarConversion(presenceServices: config.muc.enabled ? [config.mucService] : []), ContactAddresses(config.contact), ExternalServices(config.externalServices, clock: clock),
            AdHocCommands(),
        ]
        features.append(MultiUserChat(config: config, clock: clock))
        features.append(ExternalComponents(config: config))
        if config.archive.enabled { features.append(MessageArchive(config.archive, clock: clock)) }
        return features
    }
}
