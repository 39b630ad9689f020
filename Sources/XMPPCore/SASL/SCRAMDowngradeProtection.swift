/// XEP-0474 (SASL SCRAM Downgrade Protection): the server puts, in its
/// SCRAM server-first message, an `h=` attribute hashing the mechanisms
/// and channel-binding types it advertised; the client compares it with
/// what it saw. The client's proof covers the server-first message, so an
/// attacker who trimmed the advertisement can change neither the list nor
/// the hash unnoticed.
public enum SCRAMDowngradeProtection {
    /// What a stream advertised: the mechanisms of the SASL profile in use
    /// (RFC 6120 `<mechanisms/>` or XEP-0388 `<authentication/>`, never
    /// XEP-0484's FAST mechanisms, which are listed apart), and the
    /// XEP-0440 channel-binding types when the stream listed them.
    public struct Advertisement: Sendable, Hashable {
        /// The mechanism names, in any order.
        public var mechanisms: [String]
        /// The channel-binding type names, or `nil` when the stream had no
        /// `<sasl-channel-binding/>`.
        public var channelBindings: [String]?

        /// Creates an advertisement.
        public init(mechanisms: [String], channelBindings: [String]?) {
            self.mechanisms = mechanisms
            self.channelBindings = channelBindings
        }
    }

    /// The value of `h=` (XEP-0474 §4.1): the base64 of `hash` over the
    /// mechanisms sorted by octets and joined by U+001E, then, when
    /// channel-binding types were advertised, U+001F and those types
    /// sorted and joined the same way.
    public static func hash(of advertisement: Advertisement, using hash: HashFunction) -> String {
        var text = joined(advertisement.mechanisms)
        if let channelBindings = advertisement.channelBindings {
            text += [0x1F] + joined(channelBindings)
        }
        return Base64.encode(hash.hash(text))
    }

    private static func joined(_ names: [String]) -> [UInt8] {
        let sorted = names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        return Array(sorted.joined(separator: [0x1E]))
    }
}
