import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `OfflineStore` must do, checked against each implementation.
@Suite struct OfflineStoreContractTests {
    static let stanza = """
        <message xmlns="jabber:client" from='juliet@capulet.lit/balcony' to="romeo@montague.lit" \
        type='chat'><body>Ô Roméo, 🌹 "why" &amp; 'wherefore'</body></message>
        """

    /// Stores `count` messages numbered from `first`, and returns their texts.
    private func storeNumbered(
        _ count: Int, from first: Int = 0, for username: String, in offline: any OfflineStore
    ) throws -> [String] {
        var stanzas: [String] = []
        for number in first..<first + count {
            let stanza = "<message><body>\(number)</body></message>"
            let stored = try offline.store(
                stanza, from: "juliet@capulet.lit", timestamp: number, for: username, quota: OfflineQuota(messages: 100))
            #expect(stored)
            stanzas.append(stanza)
        }
        return stanzas
    }

    @Test(arguments: StoresKind.allCases)
    func everyFieldRoundTrips(kind: StoresKind) throws {
        let offline = try kind.makeStores(withAccounts: "romeo").offline
        #expect(try offline.messages(for: "romeo") == [])
        #expect(try offline.count(for: "romeo") == 0)

        let timestamp = 1_700_000_000_123
        #expect(
            try offline.store(
                Self.stanza, from: "juliet@capulet.lit/balcony", timestamp: timestamp,
                for: "romeo", quota: OfflineQuota(messages: 10)))
        #expect(
            try offline.store(
                "", from: "žofie@example.com", timestamp: Int(Int64.max), for: "romeo", quota: OfflineQuota(messages: 10)))

        let messages = try offline.messages(for: "romeo")
        try #require(messages.count == 2)
        #expect(messages[0].stanza == Self.stanza)
        #expect(messages[0].sender == "juliet@capulet.lit/balcony")
        #expect(messages[0].timestamp == timestamp)
        #expect(messages[1].stanza == "")
        #expect(messages[1].sender == "žofie@example.com")
        #expect(messages[1].timestamp == Int(Int64.max))
        #expect(messages[0].id != messages[1].id)
        #expect(try offline.count(for: "romeo") == 2)
    }

    @Test(arguments: StoresKind.allCases)
    func messagesComeInArrivalOrderWhateverTheirTimestamps(kind: StoresKind) throws {
        let offline = try kind.makeStores(withAccounts: "romeo", "juliet").offline
        for (index, timestamp) in [500, 100, 900, 100, 0].enumerated() {
            #expect(
                try offline.store(
                    "<message id='\(index)'/>", from: "juliet@capulet.lit", timestamp: timestamp,
                    for: index == 2 ? "juliet" : "romeo", quota: OfflineQuota(messages: 10)))
        }
        let messages = try offline.messages(for: "romeo")
        #expect(
            messages.map(\.stanza) == [
                "<message id='0'/>", "<message id='1'/>",
                "<message id='3'/>", "<message id='4'/>",
            ])
        #expect(messages.map(\.timestamp) == [500, 100, 100, 0])
        #expect(messages.map(\.id) == messages.map(\.id).sorted(), "ids grow with arrival")
        #expect(try offline.messages(for: "juliet").map(\.stanza) == ["<message id='2'/>"])
    }

    @Test(arguments: StoresKind.allCases)
    func theQuotaRefusesWithoutStoring(kind: StoresKind) throws {
        let offline = try kind.makeStores(withAccounts: "romeo", "juliet").offline
        for number in 0..<3 {
            #expect(
                try offline.store(
                    "<m>\(number)</m>", from: "a@x", timestamp: number, for: "romeo", quota: OfflineQuota(messages: 3)))
        }
        #expect(try !offline.store("<m>3</m>", from: "a@x", timestamp: 3, for: "romeo", quota: OfflineQuota(messages: 3)))
        #expect(try offline.count(for: "romeo") == 3)
        #expect(
            try offline.messages(for: "romeo").map(\.stanza) == [
                "<m>0</m>", "<m>1</m>", "<m>2</m>",
            ])
        #expect(try !offline.store("<m>3</m>", from: "a@x", timestamp: 3, for: "romeo", quota: OfflineQuota(messages: 2)))
        #expect(try offline.store("<m>3</m>", from: "a@x", timestamp: 3, for: "romeo", quota: OfflineQuota(messages: 4)))

        #expect(try offline.store("<m/>", from: "a@x", timestamp: 0, for: "juliet", quota: OfflineQuota(messages: 1)))
        #expect(try !offline.store("<m/>", from: "a@x", timestamp: 0, for: "juliet", quota: OfflineQuota(messages: 0)))

        let first = try #require(try offline.messages(for: "romeo").first)
        #expect(try offline.remove([first.id], for: "romeo") == 1)
        #expect(try offline.store("<m>4</m>", from: "a@x", timestamp: 4, for: "romeo", quota: OfflineQuota(messages: 4)))
        #expect(try offline.count(for: "romeo") == 4)
    }

    @Test(arguments: StoresKind.allCases)
    func theByteQuotaCountsTheUTF8BytesOfEveryKeptStanza(kind: StoresKind) throws {
        let offline = try kind.makeStores(withAccounts: "romeo", "juliet").offline
        let quota = OfflineQuota(messages: 100, bytes: 20)
        let rose = "<m>🌹</m>"  // 8 characters, 11 bytes
        #expect(try offline.store(rose, from: "a@x", timestamp: 0, for: "romeo", quota: quota))
        #expect(try !offline.store("<m>123</m>", from: "a@x", timestamp: 1, for: "romeo", quota: quota), "11 + 10 > 20")
        #expect(try offline.store("<m>12</m>", from: "a@x", timestamp: 2, for: "romeo", quota: quota), "11 + 9 = 20")
        #expect(
            try !offline.store("", from: "a@x", timestamp: 3, for: "romeo", quota: OfflineQuota(messages: 100, bytes: 19)),
            "a lowered quota refuses even an empty stanza")
        #expect(try offline.messages(for: "romeo").map(\.stanza) == [rose, "<m>12</m>"])
        #expect(try !offline.store("<m/>", from: "a@x", timestamp: 0, for: "juliet", quota: OfflineQuota(messages: 1, bytes: 3)))
        #expect(try offline.store("<m/>", from: "a@x", timestamp: 0, for: "juliet", quota: OfflineQuota(messages: 1, bytes: 4)))

        let first = try #require(try offline.messages(for: "romeo").first)
        #expect(try offline.remove([first.id], for: "romeo") == 1)
        #expect(try offline.store("<m>123</m>", from: "a@x", timestamp: 4, for: "romeo", quota: quota), "removing frees bytes")
    }

    @Test(arguments: StoresKind.allCases)
    func removeTakesOnlyTheGivenIdsOfThatAccount(kind: StoresKind) throws {
        let offline = try kind.makeStores(withAccounts: "romeo", "juliet").offline
        _ = try storeNumbered(5, for: "romeo", in: offline)
        _ = try storeNumbered(2, from: 10, for: "juliet", in: offline)
        let romeos = try offline.messages(for: "romeo")
        let juliets = try offline.messages(for: "juliet")

        let removed = try offline.remove(
            [romeos[1].id, romeos[3].id, juliets[0].id, 999_999], for: "romeo")
        #expect(removed == 2, "juliet's message and an unknown id are ignored")
        #expect(try offline.messages(for: "romeo") == [romeos[0], romeos[2], romeos[4]])
        #expect(try offline.messages(for: "juliet") == juliets)
        #expect(try offline.remove([romeos[1].id], for: "romeo") == 0, "already gone")
        #expect(try offline.remove([], for: "romeo") == 0)
        #expect(try offline.remove([juliets[0].id], for: "nobody") == 0)
        #expect(try offline.count(for: "romeo") == 3)
        #expect(try offline.count(for: "juliet") == 2)
    }

    @Test(arguments: StoresKind.allCases)
    func idsAreNeverReused(kind: StoresKind) throws {
        let offline = try kind.makeStores(withAccounts: "romeo", "juliet").offline
        _ = try storeNumbered(3, for: "romeo", in: offline)
        let before = try offline.messages(for: "romeo").map(\.id)
        #expect(try offline.remove(Set(before), for: "romeo") == 3)
        _ = try storeNumbered(1, for: "juliet", in: offline)
        _ = try storeNumbered(1, for: "romeo", in: offline)
        let after = try offline.messages(for: "juliet") + offline.messages(for: "romeo")
        #expect(after.allSatisfy { message in before.allSatisfy { message.id > $0 } })
        #expect(after[0].id < after[1].id)
    }

    @Test(arguments: StoresKind.allCases)
    func storingForAnUnknownAccountThrows(kind: StoresKind) throws {
        let offline = try kind.makeStores(withAccounts: "romeo").offline
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try offline.store(Self.stanza, from: "a@x", timestamp: 0, for: "nobody", quota: OfflineQuota(messages: 10))
        }
        #expect(throws: UnknownAccountError(username: "Romeo"), "usernames arrive prepared") {
            try offline.store(Self.stanza, from: "a@x", timestamp: 0, for: "Romeo", quota: OfflineQuota(messages: 10))
        }
        #expect(try offline.messages(for: "nobody") == [])
        #expect(try offline.count(for: "nobody") == 0)
        #expect(try offline.count(for: "romeo") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsMessages(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        _ = try storeNumbered(3, for: "romeo", in: stores.offline)
        let juliets = try storeNumbered(1, for: "juliet", in: stores.offline)

        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.offline.messages(for: "romeo") == [])
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.offline.count(for: "romeo") == 0, "a new account starts empty")
        #expect(try stores.offline.messages(for: "juliet").map(\.stanza) == juliets)
    }
}
