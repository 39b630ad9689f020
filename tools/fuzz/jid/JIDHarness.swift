import FuzzSupport
import XMPPCore

/// libFuzzer's entry point: checks one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkJID(FuzzInput(data, count: size))
    return 0
}

#if !LIBFUZZER
    /// Without libFuzzer: replays the inputs named on the command line.
    @main enum Replay {
        static func main() { replay(CommandLine.arguments.dropFirst()) { checkJID(FuzzInput($0)) } }
    }
#endif

/// JID parsing (RFC 7622) and the PRECIS profiles (RFC 8265) on one string,
/// the input's bytes decoded as UTF-8 (invalid sequences become U+FFFD).
/// An input starting with 0xFF (which UTF-8 never contains) has the rest
/// repeated to 256 KiB first, so that a check quadratic in the string's
/// length, like the one of security review C1, runs past the time limit.
///
/// Checks:
/// - a parsed JID is in normal form: its string parses to the same JID and
///   the same string, building it from its parts gives it again, each part
///   is at most 1023 bytes and is its own PRECIS form;
/// - `bare` drops exactly the resourcepart; ordering is irreflexive;
/// - UsernameCaseMapped and OpaqueString are idempotent: a prepared string
///   prepares to itself (RFC 8264 §7 requires stable output).
func checkJID(_ input: FuzzInput) {
    var input = input
    var bytes = input.takeRest()
    if bytes.first == 0xFF { bytes = Array(bytes.dropFirst()).repeated(toLength: 256 * 1024) }
    let string = String(decoding: bytes, as: UTF8.self)
    if let jid = try? JID(string) {
        checkNormalForm(jid)
    }
    if let username = try? PRECIS.usernameCaseMapped(string) {
        let again = Result { () throws(PRECISError) in try PRECIS.usernameCaseMapped(username) }
        invariant(again == .success(username), "UsernameCaseMapped(\(debug(username))) is \(again)")
    }
    if let password = try? PRECIS.opaqueString(string) {
        let again = Result { () throws(PRECISError) in try PRECIS.opaqueString(password) }
        invariant(again == .success(password), "OpaqueString(\(debug(password))) is \(again)")
    }
}

/// Checks that `jid` is already in the form parsing gives.
func checkNormalForm(_ jid: JID) {
    let string = jid.description
    let reparsed = Result { () throws(JIDError) in try JID(string) }
    invariant(reparsed == .success(jid), "\(debug(string)) parses to \(reparsed), not \(jid)")
    invariant((try? JID(string))?.description == string, "\(debug(string)) is not stable")
    let rebuilt = Result { () throws(JIDError) in
        try JID(localpart: jid.localpart, domainpart: jid.domainpart, resourcepart: jid.resourcepart)
    }
    invariant(rebuilt == .success(jid), "the parts of \(debug(string)) build \(rebuilt)")
    for part in [jid.localpart, jid.domainpart, jid.resourcepart].compactMap({ $0 }) {
        invariant(part.utf8.count <= 1023, "a part of \(part.utf8.count) bytes in \(debug(string))")
    }
    if let localpart = jid.localpart {
        invariant(
            (try? PRECIS.usernameCaseMapped(localpart)) == localpart, "localpart \(debug(localpart)) not prepared")
    }
    if let resourcepart = jid.resourcepart {
        invariant(
            (try? PRECIS.opaqueString(resourcepart)) == resourcepart,
            "resourcepart \(debug(resourcepart)) not prepared")
    }
    invariant(
        jid.bare.isBare && jid.bare.localpart == jid.localpart && jid.bare.domainpart == jid.domainpart,
        "\(jid.bare) is not the bare JID of \(debug(string))")
    invariant(!(jid < jid), "\(debug(string)) orders before itself")
}

/// `string` with its code points spelled out, so a failure names exactly
/// which scalars were involved.
func debug(_ string: String) -> String {
    "\"\(string)\" [" + string.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ") + "]"
}
