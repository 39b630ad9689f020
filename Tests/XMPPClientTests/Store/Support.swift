import Foundation
import Testing
import XMPPClient
import XMPPCore

/// Accounts and contacts the store tests share; the strings are valid JIDs.
enum People {
    static let juliet = try! JID("juliet@capulet.example")
    static let nurse = try! JID("nurse@capulet.example")
    static let romeo = try! JID("romeo@montague.example")
    static let mercutio = try! JID("mercutio@montague.example")
    static let benvolio = try! JID("benvolio@montague.example")
}

/// The date `milliseconds` after 1970, the archive's precision.
func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
}

/// A message between `account` and `contact`, stamped `milliseconds` after
/// 1970; its stanza id is the body unless given.
func message(
    _ body: String, at milliseconds: Int64, account: JID = People.juliet,
    contact: JID = People.romeo, outgoing: Bool = false, id: String? = nil,
    serverID: String? = nil
) -> ArchivedMessage {
    ArchivedMessage(
        account: account, contact: contact, body: body, timestamp: date(milliseconds),
        isOutgoing: outgoing, id: id ?? body, serverID: serverID)
}

/// Calls `body` with the path of a new directory (not yet created) under
/// the temporary directory, and removes it afterwards.
@discardableResult
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("swiftlet-client-tests-" + UUID().uuidString).path
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// The keys a real SCRAM login with `password` leaves the client, from an
/// exchange between XMPPCore's client and server (without channel binding,
/// which does not change the keys).
func scramKeys(password: String, hashFunction: HashFunction) throws -> SCRAMClientKeys {
    let mechanism: SASLMechanism = hashFunction == .sha1 ? .scramSHA1 : .scramSHA256
    let credentials = try SCRAMCredentials(password: password, hashFunction: hashFunction)
    var client = try SCRAMClient(
        mechanism: mechanism, username: "juliet", secret: .password(password))
    var server = SCRAMServer(mechanism: mechanism, unknownUserSecret: [1])
    _ = try server.receiveClientFirst(client.clientFirstMessage)
    let clientFinal = try client.receiveServerFirst(server.challenge(credentials: credentials))
    try client.receiveServerFinal(server.receiveClientFinal(clientFinal))
    return try #require(client.keys)
}
