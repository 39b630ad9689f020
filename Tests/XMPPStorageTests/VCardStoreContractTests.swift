import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `VCardStore` must do, checked against each implementation.
@Suite struct VCardStoreContractTests {
    static let vCard = """
        <vCard xmlns="vcard-temp"><FN>Roméo 🌹 &amp; "Montague"</FN><PHOTO><BINVAL>AAEC</BINVAL></PHOTO></vCard>
        """

    @Test(arguments: StoresKind.allCases)
    func setReplacesAndReadsBack(kind: StoresKind) throws {
        let vCards = try kind.makeStores(withAccounts: "romeo", "juliet").vCards
        #expect(try vCards.vCard(of: "romeo") == nil)
        try vCards.setVCard(Self.vCard, of: "romeo")
        #expect(try vCards.vCard(of: "romeo") == Self.vCard)
        try vCards.setVCard("<vCard xmlns='vcard-temp'/>", of: "romeo")
        #expect(try vCards.vCard(of: "romeo") == "<vCard xmlns='vcard-temp'/>")
        #expect(try vCards.vCard(of: "juliet") == nil, "each account has its own")
    }

    @Test(arguments: StoresKind.allCases)
    func settingForAnUnknownAccountThrows(kind: StoresKind) throws {
        let vCards = try kind.makeStores(withAccounts: "romeo").vCards
        #expect(throws: UnknownAccountError(username: "Romeo"), "usernames arrive prepared") {
            try vCards.setVCard(Self.vCard, of: "Romeo")
        }
        #expect(try vCards.vCard(of: "nobody") == nil)
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsVCard(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        try stores.vCards.setVCard(Self.vCard, of: "romeo")
        try stores.vCards.setVCard("<vCard xmlns='vcard-temp'/>", of: "juliet")
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.vCards.vCard(of: "romeo") == nil, "a new account starts without one")
        #expect(try stores.vCards.vCard(of: "juliet") == "<vCard xmlns='vcard-temp'/>")
    }
}
