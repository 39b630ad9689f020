/// An XMPP address (RFC 7622): `localpart@domainpart/resourcepart`, where
/// only the domainpart is required.
///
/// Every part is stored in its prepared, enforced form, so two JIDs are equal
/// (and hash alike) exactly when RFC 7622 §3 says they are the same address:
/// `Juliet@Example.COM.` equals `juliet@example.com`. `description` is that
/// normalized string, the form to put on the wire.
///
/// Parsing is on the server's per-stanza path (`to` and `from`), so ASCII
/// input is handled by byte scans that do not reach Foundation; only
/// non-ASCII input takes the Unicode path (PRECIS, IDNA).
public struct JID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The UsernameCaseMapped form of the localpart, or `nil` when the JID
    /// has none (RFC 7622 §3.3).
    public let localpart: String?
    /// The domainpart: lowercase U-labels in NFC without a trailing dot, an
    /// IPv4 address, or a bracketed IPv6 address in canonical form (RFC 7622
    /// §3.2).
    public let domainpart: String
    /// The OpaqueString form of the resourcepart, or `nil` for a bare JID
    /// (RFC 7622 §3.4).
    public let resourcepart: String?

    /// Parses and normalizes a JID.
    ///
    /// The separators are found before any mapping, as RFC 7622 §3.1
    /// requires: the resourcepart is everything after the first `/`, and the
    /// localpart is what precedes the first `@` before that. So
    /// `a.example.com/b@example.net` is a domain with a resource, and
    /// `juliet@example.com/foo@bar` has the resource `foo@bar`.
    ///
    /// - Throws: `JIDError` naming the invalid part and the reason.
    public init(_ string: String) throws(JIDError) {
        if let jid = try string[...].withContiguousUTF8(Self.parseASCII) {
            self = jid
            return
        }
        let scalars = string.unicodeScalars
        let slash = scalars.firstIndex(of: "/")
        let head = scalars[..<(slash ?? scalars.endIndex)]
        let at = head.firstIndex(of: "@")
        // Slicing the scalar view (not the String) keeps a combining mark
        // right after a separator in its part instead of rounding to a
        // grapheme boundary.
        try self.init(
            rawLocalpart: at.map { Substring(head[..<$0]) },
            rawDomainpart: Substring(at.map { head[scalars.index(after: $0)...] } ?? head),
            rawResourcepart: slash.map { Substring(scalars[scalars.index(after: $0)...]) })
    }

    /// Builds a JID from separate parts, preparing each one.
    ///
    /// Unlike `init(_:)`, no splitting happens: an `@` in `localpart` or a
    /// `/` in `domainpart` is rejected, while `resourcepart` may contain both.
    ///
    /// - Throws: `JIDError` naming the invalid part and the reason.
    public init(localpart: String?, domainpart: String, resourcepart: String? = nil)
        throws(JIDError)
    {
        try self.init(
            rawLocalpart: localpart.map { $0[...] }, rawDomainpart: domainpart[...],
            rawResourcepart: resourcepart.map { $0[...] })
    }

    private init(rawLocalpart: Substring?, rawDomainpart: Substring, rawResourcepart: Substring?)
        throws(JIDError)
    {
        if let rawLocalpart {
            localpart = try Self.prepareLocalpart(rawLocalpart)
        } else {
            localpart = nil
        }
        domainpart = try Self.prepareDomainpart(rawDomainpart)
        if let rawResourcepart {
            resourcepart = try Self.prepareResourcepart(rawResourcepart)
        } else {
            resourcepart = nil
        }
    }

    /// Assembles already prepared parts.
    init(prepared localpart: String?, _ domainpart: String, _ resourcepart: String?) {
        self.localpart = localpart
        self.domainpart = domainpart
        self.resourcepart = resourcepart
    }

    /// This JID without its resourcepart (RFC 6120 §1.4 "bare JID").
    public var bare: JID {
        isBare ? self : JID(prepared: localpart, domainpart, nil)
    }

    /// Whether the JID has no resourcepart.
    public var isBare: Bool { resourcepart == nil }

    /// This JID with its resourcepart replaced by `resourcepart`, prepared
    /// as OpaqueString; used for example when binding a resource (RFC 6120
    /// §7).
    ///
    /// - Throws: `JIDError` with part `.resourcepart`.
    public func withResource(_ resourcepart: String) throws(JIDError) -> JID {
        JID(prepared: localpart, domainpart, try Self.prepareResourcepart(resourcepart[...]))
    }

    /// The normalized string form, for example `juliet@example.com/balcony`.
    public var description: String {
        var result = ""
        result.reserveCapacity(
            (localpart?.utf8.count ?? -1) + 1 + domainpart.utf8.count
                + (resourcepart?.utf8.count ?? -1) + 1)
        if let localpart {
            result += localpart
            result += "@"
        }
        result += domainpart
        if let resourcepart {
            result += "/"
            result += resourcepart
        }
        return result
    }

    /// Orders by domainpart, then localpart, then resourcepart, with a missing
    /// part first; so a sorted list groups each domain's JIDs, and a bare JID
    /// comes right before its full JIDs.
    public static func < (lhs: JID, rhs: JID) -> Bool {
        if lhs.domainpart != rhs.domainpart { return lhs.domainpart < rhs.domainpart }
        if lhs.localpart != rhs.localpart { return precedes(lhs.localpart, rhs.localpart) }
        return precedes(lhs.resourcepart, rhs.resourcepart)
    }

    private static func precedes(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (let lhs?, let rhs?): lhs < rhs
        case (nil, _?): true
        case (_, nil): false
        }
    }
}
