import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Preparing a domainpart (RFC 7622 §3.2): a domain name made of NR-LDH
/// labels and U-labels (RFC 5890), an IPv4 address, or a bracketed IPv6
/// address.
///
/// Mapping follows RFC 7622 §3.2.2 and the IDNA mapping of RFC 5895 §2:
/// lowercase, fullwidth and halfwidth forms to their usual width, NFC, and
/// IDEOGRAPHIC FULL STOP as a label separator. A-labels are decoded to
/// U-labels, as §3.2.1 requires, so `xn--bcher-kva.example` and
/// `bücher.example` are the same domain. U-labels are checked with the PRECIS
/// IdentifierClass rules (which, like IDNA2008, allow letters, digits and
/// marks but no compatibility characters, symbols or punctuation) limited to
/// LDH in ASCII. Not checked: the Bidi Rule (RFC 5893, see `PRECIS`), label
/// lengths (only the 1023-byte total), and the `--` in positions 3-4 that
/// RFC 5890 reserves.
extension JID {
    static func prepareDomainpart(_ raw: Substring) throws(JIDError) -> String {
        if let ascii = try raw.withContiguousUTF8(asciiDomainpart) { return ascii }
        var domain = raw.unicodeScalars[...]
        // §3.2: one trailing dot is stripped before any other canonicalization.
        if domain.last == "." { domain.removeLast() }
        let prepared = try unicodeDomain(Substring(domain))
        guard prepared.utf8.count <= maximumPartLength else {
            throw JIDError(.domainpart, .tooLong)
        }
        return prepared
    }

    /// The domainpart if `bytes` are ASCII (or an IP literal), else `nil`.
    static func asciiDomainpart(_ bytes: UnsafeBufferPointer<UInt8>) throws(JIDError) -> String? {
        guard bytes.count <= maximumRawPartLength else { throw JIDError(.domainpart, .tooLong) }
        var domain = bytes
        // §3.2: one trailing dot is stripped before any other canonicalization.
        if domain.last == UInt8(ascii: ".") {
            domain = UnsafeBufferPointer(rebasing: domain.dropLast())
        }
        guard let first = domain.first else { throw JIDError(.domainpart, .empty) }
        let prepared: String
        if first == UInt8(ascii: "[") {
            prepared = try ipv6Literal(domain)
        } else if let labels = try asciiLabels(domain) {
            prepared = labels
        } else {
            return nil
        }
        guard prepared.utf8.count <= maximumPartLength else {
            throw JIDError(.domainpart, .tooLong)
        }
        return prepared
    }

    /// Checks and lowercases ASCII labels in one scan, noting whether IPv4
    /// parsing or A-label decoding is needed; `nil` at the first non-ASCII
    /// byte.
    private static func asciiLabels(_ domain: UnsafeBufferPointer<UInt8>) throws(JIDError)
        -> String?
    {
        var hasUppercase = false
        var onlyDigitsAndDots = true
        var mayHaveALabel = false
        var labelLength = 0
        var previous: UInt8 = 0
        for byte in domain {
            switch byte {
            case UInt8(ascii: "."):
                if labelLength == 0 { throw JIDError(.domainpart, .emptyLabel) }
                if previous == UInt8(ascii: "-") { throw JIDError(.domainpart, .hyphenAtLabelEdge) }
                labelLength = 0
                previous = byte
                continue
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                break
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                onlyDigitsAndDots = false
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                onlyDigitsAndDots = false
                hasUppercase = true
            case UInt8(ascii: "-"):
                if labelLength == 0 { throw JIDError(.domainpart, .hyphenAtLabelEdge) }
                // "xn--" has its first hyphen at offset 2 of the label.
                if labelLength == 2 { mayHaveALabel = true }
                onlyDigitsAndDots = false
            case 0x80...:
                return nil
            default:
                throw JIDError(.domainpart, .disallowed(Unicode.Scalar(byte)))
            }
            labelLength += 1
            previous = byte
        }
        if labelLength == 0 { throw JIDError(.domainpart, .emptyLabel) }
        if previous == UInt8(ascii: "-") { throw JIDError(.domainpart, .hyphenAtLabelEdge) }

        if onlyDigitsAndDots { return try ipv4Literal(domain) }
        let lowercased =
            hasUppercase ? PRECIS.asciiLowercased(domain) : String(decoding: domain, as: UTF8.self)
        return mayHaveALabel ? try joinedULabels(lowercased) : lowercased
    }

    /// The Unicode path: map, then check label by label. If mapping left
    /// only ASCII (fullwidth input, say), the ASCII rules apply.
    private static func unicodeDomain(_ domain: Substring) throws(JIDError) -> String {
        let normalized = PRECIS.widthAndCaseMapped(domain).precomposedStringWithCanonicalMapping
        var mapped = String.UnicodeScalarView()
        for scalar in normalized.unicodeScalars {
            mapped.append(scalar == "\u{3002}" ? "." : scalar)  // RFC 5895 §2 step 4
        }
        let result = String(mapped)
        if let ascii = try result[...].withContiguousUTF8(asciiLabels) { return ascii }
        return try joinedULabels(result)
    }

    /// Splits `domain` at dots, turns A-labels into U-labels, checks each
    /// label and joins them again.
    private static func joinedULabels(_ domain: String) throws(JIDError) -> String {
        var labels: [String] = []
        for scalars in domain.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false)
        {
            let label = Substring(scalars)
            if label.utf8.starts(with: "xn--".utf8) {
                labels.append(try uLabel(fromALabel: label))
            } else {
                try checkULabel(Array(scalars))
                labels.append(String(label))
            }
        }
        return labels.joined(separator: ".")
    }

    /// Decodes an A-label and checks that the result is a U-label in the
    /// form preparation would produce (lowercase, NFC). An A-label is a DNS
    /// label, at most 63 octets (RFC 5890 §2.3.2.1, RFC 1035 §2.3.4), which
    /// also bounds Punycode decoding, whose inserts cost time quadratic in
    /// the label's length.
    private static func uLabel(fromALabel label: Substring) throws(JIDError) -> String {
        let invalid = JIDError(.domainpart, .invalidALabel(String(label)))
        guard label.utf8.count <= 63, let decoded = Punycode.decode(label.dropFirst(4)),
            decoded.unicodeScalars.contains(where: { !$0.isASCII })
        else { throw invalid }
        let prepared = PRECIS.widthAndCaseMapped(decoded[...]).precomposedStringWithCanonicalMapping
        guard prepared.unicodeScalars.elementsEqual(decoded.unicodeScalars) else { throw invalid }
        try checkULabel(Array(decoded.unicodeScalars))
        return decoded
    }

    /// Checks one mapped label: LDH in ASCII, IdentifierClass code points
    /// otherwise, no hyphen at either end, no leading combining mark
    /// (RFC 5891 §4.2.3), and none of the blocks IDNA2008 ignores
    /// (RFC 5892 §2.5).
    private static func checkULabel(_ scalars: [Unicode.Scalar]) throws(JIDError) {
        guard let first = scalars.first, let last = scalars.last else {
            throw JIDError(.domainpart, .emptyLabel)
        }
        if first == "-" || last == "-" { throw JIDError(.domainpart, .hyphenAtLabelEdge) }
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            throw JIDError(.domainpart, .contextRule(first))
        default:
            break
        }
        var contextFacts: PRECIS.WholeStringFacts?
        for (index, scalar) in scalars.enumerated() {
            if scalar.isASCII {
                switch scalar {
                case "a"..."z", "0"..."9", "-": continue
                default: throw JIDError(.domainpart, .disallowed(scalar))
                }
            }
            switch scalar.value {
            case 0x20D0...0x20FF, 0x1D100...0x1D24F:
                // Combining Diacritical Marks for Symbols, Musical Symbols,
                // Ancient Greek Musical Notation.
                throw JIDError(.domainpart, .disallowed(scalar))
            default:
                break
            }
            switch PRECIS.property(of: scalar, in: .identifier) {
            case .valid: continue
            case .contextual:
                if !PRECIS.contextRuleHolds(at: index, in: scalars, facts: &contextFacts) {
                    throw JIDError(.domainpart, .contextRule(scalar))
                }
            case .disallowed: throw JIDError(.domainpart, .disallowed(scalar))
            case .unassigned: throw JIDError(.domainpart, .unassigned(scalar))
            }
        }
    }

    /// A dotted-quad IPv4 address (RFC 3986 §3.2.2 `IPv4address`: four
    /// decimal octets, no leading zeros), which is already canonical.
    private static func ipv4Literal(_ domain: UnsafeBufferPointer<UInt8>) throws(JIDError) -> String
    {
        var address = in_addr()
        let text = String(decoding: domain, as: UTF8.self)
        guard text.withCString({ inet_pton(AF_INET, $0, &address) }) == 1 else {
            throw JIDError(.domainpart, .invalidIPLiteral(text))
        }
        return text
    }

    /// A bracketed IPv6 address (RFC 3986 `IP-literal`, without IPvFuture or
    /// zone identifiers), rewritten in the canonical text form of RFC 5952:
    /// lowercase, no leading zeros, the longest run of zero groups as `::`.
    private static func ipv6Literal(_ domain: UnsafeBufferPointer<UInt8>) throws(JIDError) -> String
    {
        let invalid = JIDError(
            .domainpart, .invalidIPLiteral(String(decoding: domain, as: UTF8.self)))
        guard domain.count > 2, domain.last == UInt8(ascii: "]") else { throw invalid }
        let text = String(decoding: domain[1..<(domain.count - 1)], as: UTF8.self)
        var address = in6_addr()
        guard text.withCString({ inet_pton(AF_INET6, $0, &address) }) == 1 else { throw invalid }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let canonical: String? = buffer.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress,
                inet_ntop(AF_INET6, &address, start, socklen_t(buffer.count)) != nil
            else { return nil }
            return String(cString: start)
        }
        guard let canonical else { throw invalid }
        return "[" + canonical + "]"
    }
}
