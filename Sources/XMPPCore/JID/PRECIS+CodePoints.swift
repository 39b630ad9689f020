import Foundation

/// The code point rules of the PRECIS string classes (RFC 8264 §8, §9) and
/// the contextual rules they borrow from IDNA2008 (RFC 5892 Appendix A).
extension PRECIS {
    /// The two base string classes of RFC 8264 §4.
    enum StringClass {
        /// Letters, digits and printable ASCII (RFC 8264 §4.2).
        case identifier
        /// Also spaces, symbols and punctuation (RFC 8264 §4.3).
        case freeform
    }

    /// The derived property of one code point (RFC 8264 §8), as enforcement
    /// needs it: ID_DIS and FREE_PVAL are already resolved for the class.
    enum Property: Equatable {
        case valid
        /// CONTEXTJ or CONTEXTO: valid only where `contextRuleHolds` says so.
        case contextual
        case disallowed
        case unassigned
    }

    /// Checks every code point of an already mapped and normalized string
    /// against `stringClass`.
    ///
    /// - Throws: `PRECISError` for the first code point that fails.
    static func checkStringClass(
        _ scalars: [Unicode.Scalar], _ stringClass: StringClass
    ) throws(PRECISError) {
        var facts: WholeStringFacts?
        for (index, scalar) in scalars.enumerated() {
            switch property(of: scalar, in: stringClass) {
            case .valid: continue
            case .contextual:
                if !contextRuleHolds(at: index, in: scalars, facts: &facts) { throw .contextRule(scalar) }
            case .disallowed: throw .disallowed(scalar)
            case .unassigned: throw .unassigned(scalar)
            }
        }
    }

    /// The derived property algorithm of RFC 8264 §9, step by step.
    ///
    /// Step 2 (BackwardCompatible) is empty in RFC 8264. Step 9 (HasCompat:
    /// toNFKC(cp) != cp) is only computed where it changes the outcome: for
    /// letters, digits and marks in IdentifierClass. No code point of the
    /// categories that fall through to step 15 (Zl, Zp, Cf, Co, Cs) has a
    /// compatibility decomposition, so step 9 never applies to them.
    static func property(of scalar: Unicode.Scalar, in stringClass: StringClass) -> Property {
        let value = scalar.value
        if let exception = exceptionProperty(value) { return exception }  // step 1
        let properties = scalar.properties
        let category = properties.generalCategory
        if category == .unassigned && !properties.isNoncharacterCodePoint {
            return .unassigned  // step 3
        }
        if (0x21...0x7E).contains(value) { return .valid }  // step 4, ASCII7
        if properties.isJoinControl { return .contextual }  // step 5
        if isOldHangulJamo(value) { return .disallowed }  // step 6
        if properties.isDefaultIgnorableCodePoint || properties.isNoncharacterCodePoint {
            return .disallowed  // step 7, PrecisIgnorableProperties
        }
        if category == .control { return .disallowed }  // step 8

        let freeformOnly: Property = stringClass == .freeform ? .valid : .disallowed
        switch category {
        case .lowercaseLetter, .uppercaseLetter, .otherLetter, .modifierLetter,
            .decimalNumber, .nonspacingMark, .spacingMark:
            // Step 9 comes before step 10 (LetterDigits).
            if stringClass == .identifier && hasCompatibilityMapping(scalar) { return .disallowed }
            return .valid
        case .titlecaseLetter, .letterNumber, .otherNumber, .enclosingMark,  // step 11
            .spaceSeparator,  // step 12
            .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol,  // step 13
            .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
            .initialPunctuation, .finalPunctuation, .otherPunctuation:  // step 14
            return freeformOnly
        default:
            return .disallowed  // step 15
        }
    }

    /// The Exceptions table of RFC 5892 §2.6, which RFC 8264 §9.6 adopts.
    private static func exceptionProperty(_ value: UInt32) -> Property? {
        switch value {
        case 0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007:
            .valid
        case 0x00B7, 0x0375, 0x05F3, 0x05F4, 0x30FB, 0x0660...0x0669, 0x06F0...0x06F9:
            .contextual
        case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B:
            .disallowed
        default:
            nil
        }
    }

    /// Conjoining jamo with Hangul_Syllable_Type L, V or T (RFC 8264 §9.9).
    private static func isOldHangulJamo(_ value: UInt32) -> Bool {
        (0x1100...0x11FF).contains(value) || (0xA960...0xA97F).contains(value)
            || (0xD7B0...0xD7FF).contains(value)
    }

    /// HasCompat (RFC 8264 §9.17): NFKC changes the code point.
    static func hasCompatibilityMapping(_ scalar: Unicode.Scalar) -> Bool {
        let normalized = String(scalar).precomposedStringWithCompatibilityMapping.unicodeScalars
        return normalized.count != 1 || normalized.first != scalar
    }

    /// What the contextual rules that look at the whole string (RFC 5892
    /// A.7 to A.9) need to know of it, found in one pass, so that checking a
    /// string full of such code points stays linear in its length.
    struct WholeStringFacts {
        var hasArabicIndicDigit = false
        var hasExtendedArabicIndicDigit = false
        var hasHiraganaKatakanaOrHan = false

        init(_ scalars: [Unicode.Scalar]) {
            for scalar in scalars {
                switch scalar.value {
                case 0x0660...0x0669: hasArabicIndicDigit = true
                case 0x06F0...0x06F9: hasExtendedArabicIndicDigit = true
                case let value where isHiraganaKatakanaOrHan(value): hasHiraganaKatakanaOrHan = true
                default: continue
                }
            }
        }
    }

    /// Whether the contextual rule (RFC 5892 Appendix A) for the CONTEXTJ or
    /// CONTEXTO code point at `index` holds. `facts` are computed on first
    /// need and kept for the rest of the string.
    ///
    /// Script tests use the main Unicode blocks of each script, since the
    /// Script property is not available. The second branch of the ZERO WIDTH
    /// NON-JOINER rule (Arabic joining types) needs Joining_Type, which is not
    /// available either, so ZWNJ is accepted only after a virama: stricter
    /// than the RFC, never looser.
    static func contextRuleHolds(
        at index: Int, in scalars: [Unicode.Scalar], facts: inout WholeStringFacts?
    ) -> Bool {
        let before = index > 0 ? scalars[index - 1] : nil
        let after = index + 1 < scalars.count ? scalars[index + 1] : nil
        func whole() -> WholeStringFacts {
            if let facts { return facts }
            let found = WholeStringFacts(scalars)
            facts = found
            return found
        }
        switch scalars[index].value {
        case 0x200C, 0x200D:  // A.1 ZWNJ, A.2 ZWJ
            return before?.properties.canonicalCombiningClass == .virama
        case 0x00B7:  // A.3 MIDDLE DOT, as in Catalan "l·l"
            return before == "l" && after == "l"
        case 0x0375:  // A.4 GREEK LOWER NUMERAL SIGN
            return after.map { isGreek($0.value) } ?? false
        case 0x05F3, 0x05F4:  // A.5, A.6 HEBREW PUNCTUATION GERESH, GERSHAYIM
            return before.map { isHebrew($0.value) } ?? false
        case 0x30FB:  // A.7 KATAKANA MIDDLE DOT
            return whole().hasHiraganaKatakanaOrHan
        case 0x0660...0x0669:  // A.8 ARABIC-INDIC DIGITS
            return !whole().hasExtendedArabicIndicDigit
        case 0x06F0...0x06F9:  // A.9 EXTENDED ARABIC-INDIC DIGITS
            return !whole().hasArabicIndicDigit
        default:
            return false
        }
    }

    private static func isGreek(_ value: UInt32) -> Bool {
        ((0x0370...0x03FF).contains(value) && !(0x03E2...0x03EF).contains(value))
            || (0x1F00...0x1FFF).contains(value)
    }

    private static func isHebrew(_ value: UInt32) -> Bool {
        (0x0591...0x05F4).contains(value) || (0xFB1D...0xFB4F).contains(value)
    }

    private static func isHiraganaKatakanaOrHan(_ value: UInt32) -> Bool {
        switch value {
        case 0x3041...0x3096, 0x309D...0x309F,  // Hiragana
            0x30A1...0x30FA, 0x30FD...0x30FF, 0x31F0...0x31FF,  // Katakana
            0x2E80...0x2FDF, 0x3005, 0x3007, 0x3021...0x3029, 0x3038...0x303B,  // Han
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3FFFF:
            true
        default:
            false
        }
    }
}
