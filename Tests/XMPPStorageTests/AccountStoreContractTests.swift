import Testing
import XMPPCore

@testable import XMPPStorage

/// The account stores under test; every contract test runs once per kind.
enum AccountStoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case inMemory

    var testDescription: String { rawValue }

    func makeStore() throws -> any AccountStore {
        switch self {
        case .sqlite: SQLiteAccountStore(database: try migratedInMemoryDatabase())
        case .inMemory: InMemoryAccountStore()
        }
    }
}

/// What every `AccountStore` must do, checked against each implementation.
@Suite struct AccountStoreContractTests {
    @Test(arguments: AccountStoreKind.allCases)
    func createThenDuplicateIsRefused(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        #expect(try !store.accountExists("romeo"))
        #expect(try store.createAccount("romeo", credentials: sampleCredentialPair(seed: 1)))
        #expect(try store.accountExists("romeo"))

        #expect(try !store.createAccount("romeo", credentials: sampleCredentialPair(seed: 2)))
        #expect(
            try store.credentials(of: "romeo", for: .sha256) == sampleCredentials(.sha256, seed: 1))
        #expect(try store.accountCount() == 1)
    }

    @Test(arguments: AccountStoreKind.allCases)
    func credentialsRoundTripByteForByte(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        let sha1 = sampleCredentials(.sha1, seed: 3)
        let sha256 = sampleCredentials(.sha256, seed: 4)
        #expect(try store.createAccount("juliet", credentials: [sha256, sha1]))

        let loadedSHA1 = try #require(try store.credentials(of: "juliet", for: .sha1))
        let loadedSHA256 = try #require(try store.credentials(of: "juliet", for: .sha256))
        for (loaded, original) in [(loadedSHA1, sha1), (loadedSHA256, sha256)] {
            #expect(loaded.hashFunction == original.hashFunction)
            #expect(loaded.salt == original.salt)
            #expect(loaded.iterations == original.iterations)
            #expect(loaded.storedKey == original.storedKey)
            #expect(loaded.serverKey == original.serverKey)
        }
        #expect(try store.credentials(of: "nobody", for: .sha1) == nil)
        #expect(try store.credentials(of: "Juliet", for: .sha1) == nil, "usernames arrive prepared")
    }

    @Test(arguments: AccountStoreKind.allCases)
    func credentialsDerivedFromAPasswordStillMatchIt(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        let credentials = try HashFunction.allCases.map {
            try SCRAMCredentials(password: "correct horse", hashFunction: $0)
        }
        #expect(try store.createAccount("benvolio", credentials: credentials))
        for hashFunction in HashFunction.allCases {
            let loaded = try #require(try store.credentials(of: "benvolio", for: hashFunction))
            #expect(loaded.matches(password: "correct horse"))
            #expect(!loaded.matches(password: "wrong horse"))
        }
    }

    @Test(arguments: AccountStoreKind.allCases)
    func onlyTheGivenHashFunctionsHaveCredentials(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        #expect(try store.createAccount("mercutio", credentials: [sampleCredentials(.sha256)]))
        #expect(try store.credentials(of: "mercutio", for: .sha1) == nil)
        #expect(try store.credentials(of: "mercutio", for: .sha256) == sampleCredentials(.sha256))
    }

    @Test(arguments: AccountStoreKind.allCases)
    func passwordChangeReplacesAllCredentials(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        #expect(try store.createAccount("romeo", credentials: sampleCredentialPair(seed: 1)))

        #expect(try store.replaceCredentials(of: "romeo", with: sampleCredentialPair(seed: 9)))
        #expect(try store.credentials(of: "romeo", for: .sha1) == sampleCredentials(.sha1, seed: 9))
        #expect(
            try store.credentials(of: "romeo", for: .sha256) == sampleCredentials(.sha256, seed: 9))

        #expect(
            try store.replaceCredentials(of: "romeo", with: [sampleCredentials(.sha256, seed: 5)]))
        #expect(try store.credentials(of: "romeo", for: .sha1) == nil, "dropped hashes lose theirs")
        #expect(
            try store.credentials(of: "romeo", for: .sha256) == sampleCredentials(.sha256, seed: 5))

        #expect(try !store.replaceCredentials(of: "tybalt", with: sampleCredentialPair()))
        #expect(try !store.accountExists("tybalt"), "a password change creates no account")
    }

    @Test(arguments: AccountStoreKind.allCases)
    func deleteRemovesTheAccountAndItsCredentials(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        #expect(try store.createAccount("romeo", credentials: sampleCredentialPair(seed: 1)))
        #expect(try store.createAccount("juliet", credentials: sampleCredentialPair(seed: 2)))

        #expect(try store.deleteAccount("romeo"))
        #expect(try !store.accountExists("romeo"))
        #expect(try store.credentials(of: "romeo", for: .sha1) == nil)
        #expect(try store.credentials(of: "romeo", for: .sha256) == nil)
        #expect(try !store.deleteAccount("romeo"), "deleting twice reports no account")
        #expect(try store.usernames() == ["juliet"])

        // A new account of the same name starts from nothing.
        #expect(
            try store.createAccount("romeo", credentials: [sampleCredentials(.sha256, seed: 7)]))
        #expect(try store.credentials(of: "romeo", for: .sha1) == nil)
        #expect(
            try store.credentials(of: "romeo", for: .sha256) == sampleCredentials(.sha256, seed: 7))
    }

    @Test(arguments: AccountStoreKind.allCases)
    func usernamesAreSortedAndCounted(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        #expect(try store.usernames() == [])
        #expect(try store.accountCount() == 0)
        for username in ["romeo", "élan", "benvolio", "juliet", "zoë"] {
            #expect(try store.createAccount(username, credentials: sampleCredentialPair()))
        }
        // By UTF-8 bytes: "é" (C3 A9) sorts after every ASCII letter.
        #expect(try store.usernames() == ["benvolio", "juliet", "romeo", "zoë", "élan"])
        #expect(try store.accountCount() == 5)
        #expect(try store.deleteAccount("juliet"))
        #expect(try store.accountCount() == 4)
    }

    @Test(arguments: AccountStoreKind.allCases)
    func usernamesAreComparedByTheirBytes(kind: AccountStoreKind) throws {
        let store = try kind.makeStore()
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed, "Swift calls them equal")
        #expect(try store.createAccount(composed, credentials: sampleCredentialPair(seed: 1)))
        #expect(try !store.accountExists(decomposed), "the store does not: the caller prepares")
        #expect(try store.createAccount(decomposed, credentials: sampleCredentialPair(seed: 2)))
        #expect(try store.accountCount() == 2)
    }
}
