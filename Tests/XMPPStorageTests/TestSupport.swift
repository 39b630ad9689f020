import Foundation
import SQLiteKit
import XMPPCore

@testable import XMPPStorage

/// Calls `body` with a new, empty directory under /tmp and removes the
/// directory afterwards, whether `body` throws or not.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = "/tmp/swiftlet-storage-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Opens a migrated in-memory database.
func migratedInMemoryDatabase() throws -> Database {
    let database = try Database.inMemory()
    try Storage.migrator.migrate(database)
    return database
}

/// Credentials with arbitrary key bytes; `seed` makes different sets differ.
/// The salt starts with NUL bytes, which text handling would cut off.
func sampleCredentials(_ hashFunction: HashFunction, seed: UInt8 = 1) -> SCRAMCredentials {
    let keyLength = hashFunction.outputByteCount
    return SCRAMCredentials(
        hashFunction: hashFunction, salt: [0, 0, seed, 0xFF, 0x80, 0x7F, 0, seed],
        iterations: 4096 + Int(seed),
        storedKey: (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) },
        serverKey: (0..<keyLength).map { UInt8(truncatingIfNeeded: 255 &- $0 &+ Int(seed)) })!
}

/// Both SCRAM credential sets an account normally has.
func sampleCredentialPair(seed: UInt8 = 1) -> [SCRAMCredentials] {
    [sampleCredentials(.sha1, seed: seed), sampleCredentials(.sha256, seed: seed)]
}

/// An error a test throws on purpose.
struct PlannedError: Error, Equatable {}

extension ArchiveStore {
    /// Appends `item` to `username`'s archive as a message with one copy.
    ///
    /// - Returns: Whether it was added.
    func append(_ item: ArchiveItem, for username: String) throws -> Bool {
        let copy = ArchiveCopy(owner: username, sequence: item.sequence, peer: item.peer)
        return try append([ArchivedMessage(timestamp: item.timestamp, stanza: item.stanza, copies: [copy])]) == 1
    }
}
