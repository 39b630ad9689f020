import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `LastActivityStore` must do, checked against each implementation.
@Suite struct LastActivityStoreContractTests {
    @Test(arguments: StoresKind.allCases)
    func setReplacesAndReadsBack(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo", "juliet").lastActivity
        #expect(try store.lastLogout(of: "romeo") == nil)
        try store.setLastLogout(LastLogout(timestamp: 1_700_000_000, status: "Heading home 🌙"), of: "romeo")
        #expect(try store.lastLogout(of: "romeo") == LastLogout(timestamp: 1_700_000_000, status: "Heading home 🌙"))
        try store.setLastLogout(LastLogout(timestamp: 1_700_000_900, status: nil), of: "romeo")
        #expect(try store.lastLogout(of: "romeo") == LastLogout(timestamp: 1_700_000_900, status: nil))
        try store.setLastLogout(LastLogout(timestamp: 5, status: ""), of: "juliet")
        #expect(try store.lastLogout(of: "juliet")?.status == "", "an empty status is not no status")
    }

    @Test(arguments: StoresKind.allCases)
    func recordingForAnUnknownAccountThrows(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").lastActivity
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try store.setLastLogout(LastLogout(timestamp: 1, status: nil), of: "nobody")
        }
        #expect(try store.lastLogout(of: "nobody") == nil)
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsRecord(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        try stores.lastActivity.setLastLogout(LastLogout(timestamp: 1, status: "bye"), of: "romeo")
        try stores.lastActivity.setLastLogout(LastLogout(timestamp: 2, status: nil), of: "juliet")
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.lastActivity.lastLogout(of: "romeo") == nil)
        #expect(try stores.lastActivity.lastLogout(of: "juliet")?.timestamp == 2)
    }
}
