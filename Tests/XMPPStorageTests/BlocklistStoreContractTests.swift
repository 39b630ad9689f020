import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `BlocklistStore` must do, checked against each implementation.
@Suite struct BlocklistStoreContractTests {
    @Test(arguments: StoresKind.allCases)
    func blockUnblockAndListInByteOrder(kind: StoresKind) throws {
        let lists = try kind.makeStores(withAccounts: "romeo", "juliet").blocklists
        #expect(try lists.blocklist(of: "romeo") == [])
        try lists.block(["tybalt@verona.lit", "capulet.lit", "žofie@example.com/phone", "Zed@x"], for: "romeo")
        try lists.block(["capulet.lit", "benvolio@verona.lit"], for: "romeo")
        #expect(
            try lists.blocklist(of: "romeo") == [
                "Zed@x", "benvolio@verona.lit", "capulet.lit", "tybalt@verona.lit", "žofie@example.com/phone",
            ], "once each, by UTF-8 bytes")
        try lists.unblock(["capulet.lit", "nobody@x"], for: "romeo")
        #expect(try lists.blocklist(of: "romeo").count == 4)
        #expect(try lists.blocklist(of: "juliet") == [], "each account has its own")
        try lists.unblockAll(for: "romeo")
        #expect(try lists.blocklist(of: "romeo") == [])
        try lists.block(["tybalt@verona.lit"], for: "romeo")
        #expect(try lists.blocklist(of: "romeo") == ["tybalt@verona.lit"], "usable after unblocking all")
    }

    @Test(arguments: StoresKind.allCases)
    func blocksMatchesAnyOfTheGivenForms(kind: StoresKind) throws {
        let lists = try kind.makeStores(withAccounts: "romeo", "juliet").blocklists
        try lists.block(["tybalt@verona.lit", "capulet.lit/chamber"], for: "romeo")
        #expect(try lists.blocks("romeo", anyOf: ["tybalt@verona.lit/sword", "tybalt@verona.lit", "verona.lit"]))
        #expect(try lists.blocks("romeo", anyOf: ["capulet.lit/chamber"]))
        #expect(try !lists.blocks("romeo", anyOf: ["capulet.lit", "nurse@capulet.lit"]))
        #expect(try !lists.blocks("romeo", anyOf: []))
        #expect(try !lists.blocks("juliet", anyOf: ["tybalt@verona.lit"]))
        #expect(try !lists.blocks("nobody", anyOf: ["tybalt@verona.lit"]))
    }

    @Test(arguments: StoresKind.allCases)
    func blockingForAnUnknownAccountThrows(kind: StoresKind) throws {
        let lists = try kind.makeStores(withAccounts: "romeo").blocklists
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try lists.block(["tybalt@verona.lit"], for: "nobody")
        }
        try lists.unblock(["tybalt@verona.lit"], for: "nobody")
        try lists.unblockAll(for: "nobody")
        #expect(try lists.blocklist(of: "nobody") == [])
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsBlocklist(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        try stores.blocklists.block(["tybalt@verona.lit"], for: "romeo")
        try stores.blocklists.block(["paris@verona.lit"], for: "juliet")
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.blocklists.blocklist(of: "romeo") == [], "a new account starts empty")
        #expect(try stores.blocklists.blocklist(of: "juliet") == ["paris@verona.lit"])
    }
}
