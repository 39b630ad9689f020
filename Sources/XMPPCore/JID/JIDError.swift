/// Why a string is not a valid JID: which part is wrong, and how.
///
/// Turned into a `jid-malformed` stanza or stream error by the layer that
/// knows which one applies (RFC 6120 §8.3.3.8, §4.9.3.9).
public struct JIDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The part of the JID that failed (RFC 7622 §3.1).
    public enum Part: String, Sendable {
        case localpart
        case domainpart
        case resourcepart
    }

    /// What is wrong with the part.
    public enum Reason: Sendable, Equatable {
        /// The part is present but has no characters, as in `@example.com`,
        /// `example.com/` or `juliet@` (RFC 7622 §3.2, §3.3, §3.4).
        case empty
        /// The prepared part is longer than 1023 bytes of UTF-8 (RFC 7622
        /// §3.2, §3.3, §3.4).
        case tooLong
        /// A code point the part's rules do not allow, after mapping and
        /// normalization (RFC 7622 §3.3.1 for localparts, the PRECIS classes
        /// of RFC 8264 §9, and LDH/IDNA2008 rules for domain labels).
        case disallowed(Unicode.Scalar)
        /// A code point not assigned in this toolchain's Unicode version.
        case unassigned(Unicode.Scalar)
        /// A code point allowed only in some positions or neighbourhoods (RFC
        /// 5892 Appendix A; a domain label may not begin with a combining
        /// mark, RFC 5891 §4.2.3.2).
        case contextRule(Unicode.Scalar)
        /// The domainpart has an empty label, as in `example..com`.
        case emptyLabel
        /// A domain label begins or ends with `-` (RFC 5891 §4.2.3.1).
        case hyphenAtLabelEdge
        /// A label starting with `xn--` that is not a valid A-label
        /// (RFC 5890 §2.3.2.1), given as it appeared.
        case invalidALabel(String)
        /// A domainpart that is bracketed, or made of digits and dots, but is
        /// not a valid IPv6 or IPv4 address (RFC 7622 §3.2, RFC 3986 §3.2.2).
        case invalidIPLiteral(String)
    }

    /// The part that failed.
    public let part: Part
    /// Why it failed.
    public let reason: Reason

    /// Creates an error for `part`.
    public init(_ part: Part, _ reason: Reason) {
        self.part = part
        self.reason = reason
    }

    /// Wraps the PRECIS failure of a localpart or resourcepart.
    init(_ part: Part, precisError error: PRECISError) {
        switch error {
        case .empty: self.init(part, .empty)
        case .disallowed(let scalar): self.init(part, .disallowed(scalar))
        case .unassigned(let scalar): self.init(part, .unassigned(scalar))
        case .contextRule(let scalar): self.init(part, .contextRule(scalar))
        }
    }

    /// For example `invalid localpart: disallowed character U+0020`.
    public var description: String {
        let why: String
        switch reason {
        case .empty: why = "it is empty"
        case .tooLong: why = "it is longer than 1023 bytes"
        case .disallowed(let scalar):
            why = "disallowed character \(PRECISError.describe(scalar))"
        case .unassigned(let scalar):
            why = "unassigned character \(PRECISError.describe(scalar))"
        case .contextRule(let scalar):
            why = "character \(PRECISError.describe(scalar)) is not allowed in this position"
        case .emptyLabel: why = "it has an empty label"
        case .hyphenAtLabelEdge: why = "a label begins or ends with '-'"
        case .invalidALabel(let label): why = "'\(label)' is not a valid IDNA A-label"
        case .invalidIPLiteral(let literal): why = "'\(literal)' is not a valid IP address"
        }
        return "invalid \(part.rawValue): \(why)"
    }
}
