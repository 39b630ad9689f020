import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `PushRegistrationStore` must do, checked against each
/// implementation.
@Suite struct PushRegistrationStoreContractTests {
    static let options = "<x xmlns='jabber:x:data' type='submit'><field var='secret'><value>s3cr3t</value></field></x>"

    @Test(arguments: StoresKind.allCases)
    func aServiceAndNodeAreOneRegistrationWhoseLastOptionsWin(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo", "juliet").pushRegistrations
        #expect(try store.registrations(of: "romeo").isEmpty)
        let first = PushRegistration(service: "push.localhost", node: "n2", publishOptions: Self.options)
        #expect(try store.register(first, for: "romeo", maxRegistrations: 2))
        #expect(try store.register(PushRegistration(service: "push.localhost", node: "n1", publishOptions: nil), for: "romeo", maxRegistrations: 2))
        #expect(try store.recordFailure(service: "push.localhost", node: "n2", of: "romeo", limit: 5) == 1)
        #expect(
            try store.register(PushRegistration(service: "push.localhost", node: "n2", publishOptions: nil), for: "romeo", maxRegistrations: 2),
            "replacing needs no room")
        #expect(
            try store.registrations(of: "romeo") == [
                PushRegistration(service: "push.localhost", node: "n1", publishOptions: nil),
                PushRegistration(service: "push.localhost", node: "n2", publishOptions: nil, failures: 0),
            ])
        #expect(try store.registrations(of: "juliet").isEmpty)
        #expect(try store.registrations(of: "nobody").isEmpty)
    }

    @Test(arguments: StoresKind.allCases)
    func aNewRegistrationPastTheLimitIsRefused(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").pushRegistrations
        for node in ["a", "b"] {
            #expect(try store.register(PushRegistration(service: "p", node: node, publishOptions: nil), for: "romeo", maxRegistrations: 2))
        }
        #expect(try !store.register(PushRegistration(service: "p", node: "c", publishOptions: nil), for: "romeo", maxRegistrations: 2))
        #expect(try store.registrations(of: "romeo").map(\.node) == ["a", "b"])
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try store.register(PushRegistration(service: "p", node: "a", publishOptions: nil), for: "nobody", maxRegistrations: 2)
        }
    }

    @Test(arguments: StoresKind.allCases)
    func removingOneNodeOrEveryNodeOfAService(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").pushRegistrations
        for (service, node) in [("p", "a"), ("p", "b"), ("p", "c"), ("q", "a")] {
            _ = try store.register(PushRegistration(service: service, node: node, publishOptions: nil), for: "romeo", maxRegistrations: 9)
        }
        #expect(try store.remove(service: "p", node: "b", of: "romeo") == 1)
        #expect(try store.remove(service: "p", node: "b", of: "romeo") == 0)
        #expect(try store.registrations(of: "romeo").map { "\($0.service)/\($0.node)" } == ["p/a", "p/c", "q/a"])
        #expect(try store.remove(service: "p", node: nil, of: "romeo") == 2)
        #expect(try store.registrations(of: "romeo").map { "\($0.service)/\($0.node)" } == ["q/a"])
        try store.removeAll(of: "romeo")
        #expect(try store.registrations(of: "romeo").isEmpty)
    }

    @Test(arguments: StoresKind.allCases)
    func failuresInARowRemoveTheRegistrationAtTheLimit(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").pushRegistrations
        _ = try store.register(PushRegistration(service: "p", node: "a", publishOptions: nil), for: "romeo", maxRegistrations: 9)
        #expect(try store.recordFailure(service: "p", node: "a", of: "romeo", limit: 3) == 1)
        #expect(try store.recordFailure(service: "p", node: "a", of: "romeo", limit: 3) == 2)
        try store.clearFailures(service: "p", node: "a", of: "romeo")
        #expect(try store.registrations(of: "romeo").first?.failures == 0)
        for expected in 1...2 {
            #expect(try store.recordFailure(service: "p", node: "a", of: "romeo", limit: 3) == expected)
        }
        #expect(try store.recordFailure(service: "p", node: "a", of: "romeo", limit: 3) == 3)
        #expect(try store.registrations(of: "romeo").isEmpty)
        #expect(try store.recordFailure(service: "p", node: "a", of: "romeo", limit: 3) == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func aNewPasswordOrDeletingTheAccountRemovesItsRegistrations(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        for user in ["romeo", "juliet"] {
            _ = try stores.pushRegistrations.register(
                PushRegistration(service: "p", node: "a", publishOptions: Self.options), for: user, maxRegistrations: 9)
        }
        #expect(try stores.accounts.replaceCredentials(of: "romeo", with: sampleCredentialPair()))
        #expect(try stores.pushRegistrations.registrations(of: "romeo").isEmpty)
        #expect(try stores.accounts.deleteAccount("juliet"))
        #expect(try stores.accounts.createAccount("juliet", credentials: sampleCredentialPair()))
        #expect(try stores.pushRegistrations.registrations(of: "juliet").isEmpty, "a new account inherits nothing")
    }
}
