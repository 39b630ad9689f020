import Foundation
import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `FastTokenStore` must do, checked against each implementation.
@Suite struct FastTokenStoreTests {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)
    private let phone = "d4565fa7-4d72-4749-b3d3-740edbf87770"
    private let laptop = "8c2a1c4e-5d0b-4b8e-9f2e-0a7d9f3b6e11"

    /// A token of `userAgent` whose nonce holds `seed` (and NUL bytes, which
    /// text handling would cut off), expiring `seconds` after `start`.
    private func token(_ userAgent: String, _ seed: UInt8, expiresAfter seconds: TimeInterval) -> FastTokenRecord {
        FastTokenRecord(
            userAgent: userAgent, mechanism: "HT-SHA-256-NONE", nonce: [0, seed, 0xFF, 0],
            expiry: start.addingTimeInterval(seconds))
    }

    @Test(arguments: StoresKind.allCases)
    func theNewTokenComesBeforeTheCurrentOne(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo", "juliet").fastTokens
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [])
        let first = token(phone, 1, expiresAfter: 100)
        try store.issue(first, to: "romeo", maxClients: 5)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [first])
        try store.used(nonce: first.nonce, of: "romeo", userAgent: phone)
        var second = token(phone, 2, expiresAfter: 50)
        second.mechanism = "HT-SHA-3-512-NONE"
        try store.issue(second, to: "romeo", maxClients: 5)
        #expect(
            try store.tokens(of: "romeo", userAgent: phone, at: start) == [second, first],
            "the new one first, though it expires sooner")
        #expect(try store.tokens(of: "romeo", userAgent: laptop, at: start) == [], "each user agent has its own")
        #expect(try store.tokens(of: "juliet", userAgent: phone, at: start) == [], "each account has its own")
    }

    @Test(arguments: StoresKind.allCases)
    func usingTheNewTokenMakesItTheCurrentOne(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").fastTokens
        let (a, b, c, d) = (
            token(phone, 1, expiresAfter: 100), token(phone, 2, expiresAfter: 100), token(phone, 3, expiresAfter: 100),
            token(phone, 4, expiresAfter: 100)
        )
        try store.issue(a, to: "romeo", maxClients: 5)
        try store.used(nonce: a.nonce, of: "romeo", userAgent: phone)
        try store.issue(b, to: "romeo", maxClients: 5)
        try store.used(nonce: b.nonce, of: "romeo", userAgent: phone)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [b], "the old current one is dropped")

        try store.issue(c, to: "romeo", maxClients: 5)
        try store.used(nonce: b.nonce, of: "romeo", userAgent: phone)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [c, b], "using the current one keeps the new one")
        try store.used(nonce: [9, 9], of: "romeo", userAgent: phone)
        try store.used(nonce: c.nonce, of: "romeo", userAgent: laptop)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [c, b], "other nonces change nothing")

        try store.issue(d, to: "romeo", maxClients: 5)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [d, b], "issuing replaces the unused new one")
    }

    @Test(arguments: StoresKind.allCases)
    func expiredTokensAreNotListedAndCanBeRemoved(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo", "juliet").fastTokens
        let current = token(phone, 1, expiresAfter: 100)
        let new = token(phone, 2, expiresAfter: 10)
        try store.issue(current, to: "romeo", maxClients: 5)
        try store.used(nonce: current.nonce, of: "romeo", userAgent: phone)
        try store.issue(new, to: "romeo", maxClients: 5)
        try store.issue(token(laptop, 3, expiresAfter: 5), to: "juliet", maxClients: 5)

        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start.addingTimeInterval(9.999)) == [new, current])
        #expect(
            try store.tokens(of: "romeo", userAgent: phone, at: start.addingTimeInterval(10)) == [current],
            "a token is not accepted at its expiry")
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start.addingTimeInterval(100)) == [])

        #expect(try store.removeExpired(at: start.addingTimeInterval(4)) == 0)
        #expect(try store.removeExpired(at: start.addingTimeInterval(10)) == 2, "one of each account")
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [current])
        #expect(try store.tokens(of: "juliet", userAgent: laptop, at: start) == [])
        #expect(try store.removeExpired(at: start.addingTimeInterval(10)) == 0)
        #expect(try store.removeExpired(at: start.addingTimeInterval(100)) == 1)
        try store.issue(new, to: "romeo", maxClients: 1)
        #expect(
            try store.tokens(of: "romeo", userAgent: phone, at: start) == [new], "a user agent whose tokens expired can get more")
    }

    @Test(arguments: StoresKind.allCases)
    func expiryIsKeptToTheNearestMillisecond(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").fastTokens
        var record = token(phone, 1, expiresAfter: 0)
        record.expiry = Date(timeIntervalSince1970: 1_700_000_000.123_6)
        try store.issue(record, to: "romeo", maxClients: 5)
        record.expiry = Date(timeIntervalSince1970: 1_700_000_000.124)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [record])
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: Date(timeIntervalSince1970: 1_700_000_000.123_7)) == [])
    }

    @Test(arguments: StoresKind.allCases)
    func aNewUserAgentBeyondTheLimitEvictsTheOneWhoseLastTokenExpiresFirst(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo", "juliet").fastTokens
        let tablet = "3f1e0b7a-2c4d-4e5f-8a9b-0c1d2e3f4a5b"
        // The phone's new token expires first of all, but its current one last.
        try store.issue(token(phone, 1, expiresAfter: 500), to: "romeo", maxClients: 2)
        try store.used(nonce: [0, 1, 0xFF, 0], of: "romeo", userAgent: phone)
        try store.issue(token(phone, 2, expiresAfter: 100), to: "romeo", maxClients: 2)
        try store.issue(token(laptop, 3, expiresAfter: 300), to: "romeo", maxClients: 2)
        try store.issue(token("juliet's", 4, expiresAfter: 1), to: "juliet", maxClients: 2)
        try store.issue(token(tablet, 5, expiresAfter: 200), to: "romeo", maxClients: 4)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start).count == 2, "below the limit, all stay")
        #expect(try store.tokens(of: "romeo", userAgent: laptop, at: start).count == 1)

        try store.issue(token(tablet, 6, expiresAfter: 200), to: "romeo", maxClients: 2)
        #expect(try store.tokens(of: "romeo", userAgent: laptop, at: start) == [])
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start).count == 2)
        #expect(try store.tokens(of: "romeo", userAgent: tablet, at: start).map(\.nonce) == [[0, 6, 0xFF, 0]])
        #expect(try store.tokens(of: "juliet", userAgent: "juliet's", at: start).count == 1, "other accounts do not count")

        try store.issue(token(phone, 7, expiresAfter: 1), to: "romeo", maxClients: 1)
        #expect(try store.tokens(of: "romeo", userAgent: tablet, at: start) == [], "the issuing user agent is never evicted")
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start).count == 2)
    }

    @Test(arguments: StoresKind.allCases)
    func equalExpiriesEvictTheLowestUserAgent(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").fastTokens
        for (userAgent, seed) in [("b", UInt8(1)), ("a", 2), ("c", 3)] {
            try store.issue(token(userAgent, seed, expiresAfter: 100), to: "romeo", maxClients: 2)
        }
        #expect(try store.tokens(of: "romeo", userAgent: "a", at: start) == [])
        #expect(try store.tokens(of: "romeo", userAgent: "b", at: start).count == 1)
        #expect(try store.tokens(of: "romeo", userAgent: "c", at: start).count == 1)
    }

    @Test(arguments: StoresKind.allCases)
    func invalidatingForgetsOneUserAgentOrAll(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo", "juliet").fastTokens
        try store.issue(token(phone, 1, expiresAfter: 100), to: "romeo", maxClients: 5)
        try store.used(nonce: [0, 1, 0xFF, 0], of: "romeo", userAgent: phone)
        try store.issue(token(phone, 2, expiresAfter: 100), to: "romeo", maxClients: 5)
        try store.issue(token(laptop, 3, expiresAfter: 100), to: "romeo", maxClients: 5)
        try store.issue(token(phone, 4, expiresAfter: 100), to: "juliet", maxClients: 5)

        try store.invalidate("romeo", userAgent: phone)
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [], "both slots")
        #expect(try store.tokens(of: "romeo", userAgent: laptop, at: start).count == 1)
        #expect(try store.tokens(of: "juliet", userAgent: phone, at: start).count == 1)

        try store.issue(token(phone, 5, expiresAfter: 100), to: "romeo", maxClients: 5)
        try store.invalidateAll(of: "romeo")
        #expect(try store.tokens(of: "romeo", userAgent: phone, at: start) == [])
        #expect(try store.tokens(of: "romeo", userAgent: laptop, at: start) == [])
        #expect(try store.tokens(of: "juliet", userAgent: phone, at: start).count == 1)
    }

    @Test(arguments: StoresKind.allCases)
    func issuingForAnUnknownAccountThrows(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").fastTokens
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try store.issue(token(phone, 1, expiresAfter: 100), to: "nobody", maxClients: 5)
        }
        try store.used(nonce: [0, 1, 0xFF, 0], of: "nobody", userAgent: phone)
        try store.invalidate("nobody", userAgent: phone)
        try store.invalidateAll(of: "nobody")
        #expect(try store.tokens(of: "nobody", userAgent: phone, at: start) == [])
    }

    @Test(arguments: StoresKind.allCases)
    func changingThePasswordForgetsTheAccountsTokens(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        try stores.fastTokens.issue(token(phone, 1, expiresAfter: 100), to: "romeo", maxClients: 5)
        try stores.fastTokens.issue(token(phone, 2, expiresAfter: 100), to: "juliet", maxClients: 5)
        #expect(try stores.accounts.replaceCredentials(of: "romeo", with: sampleCredentialPair(seed: 7)))
        #expect(try stores.fastTokens.tokens(of: "romeo", userAgent: phone, at: start) == [])
        #expect(try stores.fastTokens.tokens(of: "juliet", userAgent: phone, at: start).count == 1)
        #expect(try stores.accounts.credentials(of: "romeo", for: .sha256) == sampleCredentials(.sha256, seed: 7))
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsTokens(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        try stores.fastTokens.issue(token(phone, 1, expiresAfter: 100), to: "romeo", maxClients: 5)
        try stores.fastTokens.issue(token(phone, 2, expiresAfter: 100), to: "juliet", maxClients: 5)
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.fastTokens.tokens(of: "romeo", userAgent: phone, at: start) == [], "a new account starts empty")
        #expect(try stores.fastTokens.tokens(of: "juliet", userAgent: phone, at: start).count == 1)
    }
}
