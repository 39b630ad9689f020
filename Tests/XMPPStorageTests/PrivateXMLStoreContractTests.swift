import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `PrivateXMLStore` must do, checked against each implementation.
@Suite struct PrivateXMLStoreContractTests {
    static let prefs = "<exodus xmlns='exodus:prefs'><defaultnick>Roméo 🌹</defaultnick></exodus>"

    @Test(arguments: StoresKind.allCases)
    func oneElementPerQualifiedName(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo", "juliet").privateXML
        #expect(try store.element(namespace: "exodus:prefs", name: "exodus", of: "romeo") == nil)
        try store.setElement(Self.prefs, namespace: "exodus:prefs", name: "exodus", of: "romeo")
        try store.setElement("<other xmlns='exodus:prefs'/>", namespace: "exodus:prefs", name: "other", of: "romeo")
        #expect(try store.element(namespace: "exodus:prefs", name: "exodus", of: "romeo") == Self.prefs)
        #expect(try store.elementCount(of: "romeo") == 2)
        try store.setElement("<exodus xmlns='exodus:prefs'/>", namespace: "exodus:prefs", name: "exodus", of: "romeo")
        #expect(try store.element(namespace: "exodus:prefs", name: "exodus", of: "romeo") == "<exodus xmlns='exodus:prefs'/>")
        #expect(try store.elementCount(of: "romeo") == 2, "a set replaces")
        #expect(try store.element(namespace: "exodus:prefs", name: "exodus", of: "juliet") == nil)
        #expect(try store.element(namespace: "Exodus:prefs", name: "exodus", of: "romeo") == nil, "byte for byte")
        #expect(try store.elementCount(of: "juliet") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func removing(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").privateXML
        try store.setElement(Self.prefs, namespace: "exodus:prefs", name: "exodus", of: "romeo")
        try store.removeElement(namespace: "exodus:prefs", name: "exodus", of: "romeo")
        try store.removeElement(namespace: "exodus:prefs", name: "exodus", of: "romeo")
        try store.removeElement(namespace: "exodus:prefs", name: "exodus", of: "nobody")
        #expect(try store.element(namespace: "exodus:prefs", name: "exodus", of: "romeo") == nil)
        #expect(try store.elementCount(of: "romeo") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func settingForAnUnknownAccountThrows(kind: StoresKind) throws {
        let store = try kind.makeStores(withAccounts: "romeo").privateXML
        #expect(throws: UnknownAccountError(username: "Romeo")) {
            try store.setElement(Self.prefs, namespace: "exodus:prefs", name: "exodus", of: "Romeo")
        }
        #expect(try store.elementCount(of: "nobody") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsElements(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        try stores.privateXML.setElement(Self.prefs, namespace: "exodus:prefs", name: "exodus", of: "romeo")
        try stores.privateXML.setElement(Self.prefs, namespace: "exodus:prefs", name: "exodus", of: "juliet")
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.privateXML.elementCount(of: "romeo") == 0, "a new account starts without any")
        #expect(try stores.privateXML.element(namespace: "exodus:prefs", name: "exodus", of: "juliet") == Self.prefs)
    }
}
