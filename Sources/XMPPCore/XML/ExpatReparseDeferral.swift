import CExpat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Expat's *reparse deferral*, which an XMPP stream parser must turn off.
///
/// Expat 2.6.0 fixed CVE-2023-52425 (quadratic rescanning of a token that
/// arrives in many small pieces) by postponing the rescan of an unfinished
/// token until the buffered input has grown enough. Distributions backport
/// that fix without changing the version: Debian 12's Expat 2.5.0 has it from
/// `2.5.0-1+deb12u2` on. For a stream that is wrong: the last bytes of a
/// stanza may then sit in Expat's buffer until the peer sends more, so a
/// stanza that arrives in small reads is answered only after the next one.
///
/// `XML_SetReparseDeferralEnabled` turns it off per parser. Older builds lack
/// the function, and a header is no guide to the library loaded at run time,
/// so it is looked up in the loaded Expat itself. The rescan cost the fix
/// protected against is bounded here by `XMLStreamParser.Limits.maxTokenSize`.
enum ExpatReparseDeferral {
    private typealias Switch = @convention(c) (XML_Parser?, XML_Bool) -> XML_Bool

    /// `XML_SetReparseDeferralEnabled` of the Expat this process calls, or
    /// `nil` when that Expat has no such function (and never defers).
    private static let setEnabled: Switch? = {
        // The Expat already loaded for this process (by its soname, whatever
        // its scope), or else anything in the global scope, as when Expat is
        // linked statically.
        for name in ["libexpat.so.1", nil] as [String?] {
            guard let library = dlopen(name, RTLD_NOW | RTLD_NOLOAD) else { continue }
            if let symbol = dlsym(library, "XML_SetReparseDeferralEnabled") {
                return unsafeBitCast(symbol, to: Switch.self)
            }
        }
        return nil
    }()

    /// Whether the loaded Expat can defer reparsing (and so needs turning off).
    static var isSupported: Bool { setEnabled != nil }

    /// Turns deferral off for `parser`; a no-op on an Expat without it.
    /// Call again after `XML_ParserReset`, which restores the default.
    static func disable(for parser: XML_Parser) {
        _ = setEnabled?(parser, XML_Bool(XML_FALSE))
    }
}
