import FuzzSupport
import XMPPCore

/// libFuzzer's entry point: checks one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkSCRAM(FuzzInput(data, count: size))
    return 0
}

#if !LIBFUZZER
    /// Without libFuzzer: replays the inputs named on the command line.
    @main enum Replay {
        static func main() { replay(CommandLine.arguments.dropFirst()) { checkSCRAM(FuzzInput($0)) } }
    }
#endif

/// The SCRAM state machines (RFC 5802, RFC 7677): `SCRAMServer` parsing
/// client messages and `SCRAMClient` parsing server messages.
///
/// Input: a control byte (bits 0–1 the mechanism, bit 2 the mode, bit 3 the
/// channel-binding stance, bits 4–5 the binding type, bit 6 whether the
/// user exists), a byte choosing which byte to tamper with, then parts
/// separated by 0xFF (a byte UTF-8 never contains).
///
/// Parsing mode, parts client-first, client-final, server-first,
/// server-final: a username the server accepts is prepared and within
/// 1023 bytes; the server's challenge extends the client's nonce; no
/// client-final from the input is accepted (it would need the key) and no
/// server-final either; after an exchange ends, every message is refused.
///
/// Round-trip mode, parts username, authorization identity, channel-binding
/// data: whatever a client built from them sends, the server accepts, with
/// the same prepared username, and both sides finish (for an unknown user
/// the client stops at the invented salt); a client-final or server-final
/// with any one byte changed is refused.
func checkSCRAM(_ input: FuzzInput) {
    var input = input
    let control = input.takeByte()
    let tamperingPosition = Int(input.takeByte())
    let mechanism = scramMechanisms[Int(control & 3)]
    let parts = input.takeRest().parts(separatedBy: 0xFF)
    let type = ChannelBindingType.allCases[Int(control >> 4 & 3) % ChannelBindingType.allCases.count]
    let clientCouldBind = control & 0x08 != 0
    let knownUser = control & 0x40 != 0
    if control & 0x04 == 0 {
        // Without -PLUS, bit 3 also says whether the server offered
        // binding, so that `y` meets both answers RFC 5802 §6 gives it.
        let bindings = mechanism.usesChannelBinding || clientCouldBind ? [type: channelBindingData] : [:]
        checkServerParsing(mechanism, bindings, knownUser: knownUser, part(parts, 0), part(parts, 1))
        let stance = clientStance(mechanism, type, channelBindingData, clientCouldBind: clientCouldBind)
        checkClientParsing(mechanism, stance, part(parts, 2), part(parts, 3))
    } else {
        let data = part(parts, 2)
        checkExchange(
            mechanism, clientStance(mechanism, type, data, clientCouldBind: clientCouldBind),
            serverBindings: mechanism.usesChannelBinding ? [type: data] : [:],
            knownUser: knownUser, username: part(parts, 0), authorizationIdentity: part(parts, 1),
            tamperingPosition: tamperingPosition)
    }
}

/// The client's channel binding: `p=` with `-PLUS` mechanisms, else `y`
/// or `n` as the input says.
func clientStance(
    _ mechanism: SASLMechanism, _ type: ChannelBindingType, _ data: [UInt8], clientCouldBind: Bool
) -> SCRAMClient.ChannelBinding {
    if mechanism.usesChannelBinding { return .bound(type, data: data) }
    return clientCouldBind ? .notOfferedByServer : .unsupported
}

/// Feeds client messages from the input to a server.
func checkServerParsing(
    _ mechanism: SASLMechanism, _ bindings: [ChannelBindingType: [UInt8]], knownUser: Bool,
    _ clientFirst: [UInt8], _ clientFinal: [UInt8]
) {
    var server = SCRAMServer(mechanism: mechanism, channelBindings: bindings, unknownUserSecret: [1])
    if let identity = try? server.receiveClientFirst(clientFirst) {
        checkPrepared(identity.username)
        let challenge = server.challenge(
            credentials: knownUser ? accounts[mechanism.scramHashFunction!]!.credentials : nil)
        let extended = Array("r=".utf8) + clientNonce(in: clientFirst)
        invariant(challenge.starts(with: extended), "challenge \(text(challenge)) to \(text(clientFirst))")
        invariant((try? server.receiveClientFinal(clientFinal)) == nil, "forged proof \(text(clientFinal))")
    }
    // The exchange is over, whichever way it ended.
    let lateFirst = Result { () throws(SASLFailure) in try server.receiveClientFirst(clientFirst) }
    let lateFinal = Result { () throws(SASLFailure) in try server.receiveClientFinal(clientFinal) }
    invariant(
        lateFirst == .failure(.malformedRequest) && lateFinal == .failure(.malformedRequest),
        "after the end: \(lateFirst), \(lateFinal)")
}

/// Feeds server messages from the input to a client; the client's nonce
/// is put in after a leading `r=`, since no input could guess it.
func checkClientParsing(
    _ mechanism: SASLMechanism, _ stance: SCRAMClient.ChannelBinding, _ serverFirst: [UInt8],
    _ serverFinal: [UInt8]
) {
    // Few iterations keep PBKDF2 cheap and the range checks reachable.
    var client = try! SCRAMClient(
        mechanism: mechanism, username: "user", secret: .password("pencil"), channelBinding: stance,
        minimumIterations: 1, maximumIterations: 64)
    var challenge = serverFirst
    if challenge.starts(with: "r=".utf8) {
        challenge.insert(contentsOf: clientNonce(in: client.clientFirstMessage), at: 2)
    }
    if let clientFinal = try? client.receiveServerFirst(challenge) {
        invariant(clientFinal.starts(with: "c=".utf8), "client-final \(text(clientFinal))")
        invariant((try? client.receiveServerFinal(serverFinal)) == nil, "forged signature \(text(serverFinal))")
    }
    invariant((try? client.receiveServerFinal(serverFinal)) == nil, "accepted \(text(serverFinal)) after the end")
}

/// Runs a whole exchange between a client and a server, then replays each
/// side's last message with one byte changed to a copy of the other side.
func checkExchange(
    _ mechanism: SASLMechanism, _ stance: SCRAMClient.ChannelBinding,
    serverBindings: [ChannelBindingType: [UInt8]], knownUser: Bool, username rawUsername: [UInt8],
    authorizationIdentity rawAuthorizationIdentity: [UInt8], tamperingPosition: Int
) {
    let username = String(decoding: rawUsername, as: UTF8.self)
    let authorizationIdentity =
        rawAuthorizationIdentity.isEmpty ? nil : String(decoding: rawAuthorizationIdentity, as: UTF8.self)
    // The server refuses what RFC 5802 §5.1 and RFC 7622 §3.3 rule out and
    // the client does not check: a NUL in a saslname, a username over
    // 1023 bytes. Those inputs say nothing about the exchange.
    guard let prepared = try? PRECIS.usernameCaseMapped(username), prepared.utf8.count <= 1023,
        !rawAuthorizationIdentity.contains(0)
    else { return }
    let account = accounts[mechanism.scramHashFunction!]!
    guard
        var client = try? SCRAMClient(
            mechanism: mechanism, username: username, authorizationIdentity: authorizationIdentity,
            secret: .keys(account.keys), channelBinding: stance)
    else { return invariant(false, "PRECIS prepares \(text(rawUsername)) but the client refuses it") }

    var server = SCRAMServer(mechanism: mechanism, channelBindings: serverBindings, unknownUserSecret: [1])
    let identity = Result { () throws(SASLFailure) in try server.receiveClientFirst(client.clientFirstMessage) }
    invariant(
        identity == .success(SASLIdentity(username: prepared, authorizationIdentity: authorizationIdentity)),
        "\(text(client.clientFirstMessage)) gives \(identity)")
    let challenge = server.challenge(credentials: knownUser ? account.credentials : nil)
    let clientFinal: [UInt8]
    do {
        clientFinal = try client.receiveServerFirst(challenge)
    } catch {
        // An unknown user's invented salt is not the one the keys were
        // saved with.
        return invariant(!knownUser && error == .savedKeysOutdated, "the client refuses \(text(challenge)): \(error)")
    }
    invariant(knownUser, "saved keys accepted an invented salt: \(text(challenge))")
    let serverBeforeFinal = server
    let signature: [UInt8]
    do {
        signature = try server.receiveClientFinal(clientFinal)
    } catch {
        return invariant(false, "the server refuses \(text(clientFinal)): \(error)")
    }
    var tamperedServer = serverBeforeFinal
    let tamperedFinal = tampered(clientFinal, at: tamperingPosition)
    invariant((try? tamperedServer.receiveClientFinal(tamperedFinal)) == nil, "accepted \(text(tamperedFinal))")

    var tamperedClient = client
    let tamperedSignature = tampered(signature, at: tamperingPosition)
    invariant((try? tamperedClient.receiveServerFinal(tamperedSignature)) == nil, "accepted \(text(tamperedSignature))")
    do {
        try client.receiveServerFinal(signature)
        invariant(client.keys == account.keys, "the client saved other keys")
    } catch {
        invariant(false, "the client refuses \(text(signature)): \(error)")
    }
}

/// The nonce of a client-first message: after the first `,r=` (a saslname
/// cannot contain a comma) up to the next comma.
func clientNonce(in message: [UInt8]) -> ArraySlice<UInt8> {
    let marker = Array(",r=".utf8)
    guard let start = (0..<message.count).first(where: { message[$0...].starts(with: marker) }) else { return [] }
    return message[(start + 3)...].prefix { $0 != UInt8(ascii: ",") }
}

/// `message` with the byte at `position` (modulo its length) changed.
func tampered(_ message: [UInt8], at position: Int) -> [UInt8] {
    var message = message
    message[position % message.count] ^= 0x01
    return message
}

/// Checks that a username the server returned is in prepared form.
func checkPrepared(_ username: String) {
    invariant(
        username.utf8.count <= 1023 && (try? PRECIS.usernameCaseMapped(username)) == username,
        "username \(username) is not prepared")
}

/// A message for a failure report.
func text(_ message: [UInt8]) -> String {
    String(decoding: message, as: UTF8.self).debugDescription
}

let scramMechanisms: [SASLMechanism] = [.scramSHA1, .scramSHA1Plus, .scramSHA256, .scramSHA256Plus]

/// Binding data for the parsing mode, as a TLS exporter would give.
let channelBindingData = [UInt8](repeating: 0xCB, count: 32)

/// One account per hash function: the credentials a server stores for the
/// password "pencil" and the keys a client saves after logging in with it,
/// made once by a real exchange (each side runs 4096 PBKDF2 rounds, too
/// slow to repeat per input; saved keys skip them).
let accounts: [HashFunction: (credentials: SCRAMCredentials, keys: SCRAMClientKeys)] = {
    var accounts: [HashFunction: (SCRAMCredentials, SCRAMClientKeys)] = [:]
    for mechanism in [SASLMechanism.scramSHA1, .scramSHA256] {
        let hash = mechanism.scramHashFunction!
        let credentials = try! SCRAMCredentials(password: "pencil", hashFunction: hash)
        var client = try! SCRAMClient(mechanism: mechanism, username: "user", secret: .password("pencil"))
        var server = SCRAMServer(mechanism: mechanism, unknownUserSecret: [1])
        _ = try! server.receiveClientFirst(client.clientFirstMessage)
        let clientFinal = try! client.receiveServerFirst(server.challenge(credentials: credentials))
        try! client.receiveServerFinal(server.receiveClientFinal(clientFinal))
        accounts[hash] = (credentials, client.keys!)
    }
    return accounts
}()

/// The part at `index`, or nothing when the input has fewer.
func part(_ parts: [[UInt8]], _ index: Int) -> [UInt8] {
    index < parts.count ? parts[index] : []
}
