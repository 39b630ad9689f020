/// The features a server installs.
public enum Features {
    /// Everything Swiftlet implements, in the order they hook in.
    public static var standard: [any ServerFeature] {
        [
            Disco(), Ping(), Registration(), LegacySession(), Roster(), PresenceBroadcast.Feature(), ClientStateIndication(),
            VCardTemp(), Blocking(), Carbons(),
        ]
    }
}
