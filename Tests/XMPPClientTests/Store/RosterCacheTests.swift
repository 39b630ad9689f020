import Testing
import XMPPClient
import XMPPCore

/// The roster cache of `ClientStore`: full replacements, pushes, versions.
@Suite struct RosterCacheTests {
    let store: ClientStore

    init() throws {
        store = try ClientStore.inMemory()
    }

    private let romeo = RosterContact(
        jid: People.romeo, name: "Romeo", groups: ["Montagues", "Friends"], subscription: .both)
    private let mercutio = RosterContact(jid: People.mercutio, isPendingOut: true)
    private let benvolio = RosterContact(jid: People.benvolio, subscription: .from)

    @Test func nothingIsCachedAtFirst() async throws {
        let cached = try await store.cachedRoster(account: People.juliet)
        #expect(cached.version == nil)
        #expect(cached.contacts.isEmpty)
    }

    @Test func aReplacedRosterReadsBackSortedByJID() async throws {
        try await store.replaceRoster(
            account: People.juliet, version: "v1", contacts: [romeo, mercutio, benvolio])
        let cached = try await store.cachedRoster(account: People.juliet)
        #expect(cached.version == "v1")
        // montague.example sorts by localpart: benvolio, mercutio, romeo.
        #expect(cached.contacts == [benvolio, mercutio, romeo])
        #expect(cached.contacts.last?.groups == ["Montagues", "Friends"])
    }

    @Test func replacingDropsWhatTheNewRosterLacks() async throws {
        try await store.replaceRoster(account: People.juliet, version: "v1", contacts: [romeo, mercutio])
        try await store.replaceRoster(account: People.juliet, version: nil, contacts: [benvolio])
        let cached = try await store.cachedRoster(account: People.juliet)
        #expect(cached.version == nil)
        #expect(cached.contacts == [benvolio])
    }

    @Test func aPushAddsOrUpdatesAContact() async throws {
        try await store.replaceRoster(account: People.juliet, version: "v1", contacts: [romeo])
        try await store.applyRosterPush(account: People.juliet, version: "v2", change: .update(mercutio))
        let renamed = RosterContact(jid: People.romeo, name: "R.", subscription: .to)
        try await store.applyRosterPush(account: People.juliet, version: "v3", change: .update(renamed))
        let cached = try await store.cachedRoster(account: People.juliet)
        #expect(cached.version == "v3")
        #expect(cached.contacts == [mercutio, renamed])
    }

    @Test func aPushRemovesAContact() async throws {
        try await store.replaceRoster(account: People.juliet, version: "v1", contacts: [romeo, mercutio])
        try await store.applyRosterPush(
            account: People.juliet, version: "v2", change: .remove(People.romeo))
        #expect(try await store.cachedRoster(account: People.juliet).contacts == [mercutio])
        // Removing someone absent only moves the version on.
        try await store.applyRosterPush(
            account: People.juliet, version: "v3", change: .remove(People.benvolio))
        let cached = try await store.cachedRoster(account: People.juliet)
        #expect(cached.version == "v3")
        #expect(cached.contacts == [mercutio])
    }

    @Test func aPushWithoutVersionForgetsTheVersion() async throws {
        try await store.replaceRoster(account: People.juliet, version: "v1", contacts: [])
        try await store.applyRosterPush(account: People.juliet, version: nil, change: .update(romeo))
        let cached = try await store.cachedRoster(account: People.juliet)
        #expect(cached.version == nil)
        #expect(cached.contacts == [romeo])
    }

    @Test func rostersOfAccountsAreApart() async throws {
        try await store.replaceRoster(account: People.juliet, version: "j1", contacts: [romeo])
        try await store.replaceRoster(account: People.nurse, version: "n1", contacts: [mercutio])
        try await store.applyRosterPush(
            account: People.nurse, version: "n2", change: .remove(People.mercutio))
        let juliet = try await store.cachedRoster(account: People.juliet)
        #expect(juliet.version == "j1")
        #expect(juliet.contacts == [romeo])
        let nurse = try await store.cachedRoster(account: People.nurse)
        #expect(nurse.version == "n2")
        #expect(nurse.contacts.isEmpty)
    }
}
