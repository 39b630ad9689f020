import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `RosterStore` must do, checked against each implementation.
@Suite struct RosterStoreContractTests {
    /// The nine states of RFC 6121 Appendix A.1, then pre-approval, which
    /// may accompany the states without `from`.
    static let allStates: [SubscriptionState] = [
        SubscriptionState(.none),
        SubscriptionState(.none, pendingOut: true),
        SubscriptionState(.none, pendingIn: true),
        SubscriptionState(.none, pendingOut: true, pendingIn: true),
        SubscriptionState(.to),
        SubscriptionState(.to, pendingIn: true),
        SubscriptionState(.from),
        SubscriptionState(.from, pendingOut: true),
        SubscriptionState(.both),
        SubscriptionState(.none, preApproved: true),
        SubscriptionState(.none, pendingOut: true, preApproved: true),
        SubscriptionState(.to, preApproved: true),
    ]

    /// An entry with every field set, and text that trips naive escaping.
    static let juliet = RosterItem(
        contact: "juliet@capulet.lit", name: "Джульетта 🌹 \"Jules\" O'Capulet",
        groups: ["Friends", "Семья", "朋友", "a/b \"q\" 'r' \\ <&>", ""],
        state: SubscriptionState(.none, pendingOut: true, pendingIn: true, preApproved: true),
        inRoster: true,
        pendingInRequest: """
            <presence xmlns="jabber:client" from='juliet@capulet.lit/balcony' type="subscribe">\
            <status>Wherefore art thou — "Romeo"? &amp; 'thee'</status></presence>
            """)

    @Test(arguments: StoresKind.allCases)
    func aNewAccountHasAnEmptyRosterAtVersionZero(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo").roster
        for username in ["romeo", "nobody"] {
            #expect(try roster.items(of: username) == [])
            #expect(try roster.item("juliet@capulet.lit", of: username) == nil)
            #expect(try roster.version(of: username) == 0)
        }
    }

    @Test(arguments: StoresKind.allCases)
    func everyFieldRoundTrips(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo").roster
        let hidden = RosterItem(
            contact: "tybalt@capulet.lit", name: "", groups: [],
            state: SubscriptionState(.none, pendingIn: true), inRoster: false,
            pendingInRequest: "<presence type='subscribe'/>")
        let plain = RosterItem(contact: "benvolio@montague.lit")
        for item in [Self.juliet, hidden, plain] {
            _ = try roster.put(item, of: "romeo")
        }

        #expect(try roster.item("juliet@capulet.lit", of: "romeo") == Self.juliet)
        let loadedHidden = try #require(try roster.item("tybalt@capulet.lit", of: "romeo"))
        #expect(loadedHidden == hidden)
        #expect(loadedHidden.name == "", "an empty name is not a missing one")
        #expect(!loadedHidden.inRoster)
        let loadedPlain = try #require(try roster.item("benvolio@montague.lit", of: "romeo"))
        #expect(loadedPlain.name == nil)
        #expect(loadedPlain.groups == [])
        #expect(loadedPlain.pendingInRequest == nil)
        #expect(loadedPlain.state == SubscriptionState())
        #expect(try roster.items(of: "romeo") == [plain, Self.juliet, hidden])
    }

    @Test(arguments: StoresKind.allCases)
    func allSubscriptionStatesRoundTrip(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo").roster
        let items = Self.allStates.enumerated().map { index, state in
            // Two digits, so that the sorted listing keeps this order.
            RosterItem(contact: "contact\(index + 10)@example.com", state: state)
        }
        for item in items {
            _ = try roster.put(item, of: "romeo")
        }
        for item in items {
            #expect(try roster.item(item.contact, of: "romeo")?.state == item.state)
        }
        #expect(try roster.items(of: "romeo").map(\.state) == Self.allStates)
    }

    @Test(arguments: StoresKind.allCases)
    func groupsKeepTheirOrder(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo").roster
        let item = RosterItem(
            contact: "juliet@capulet.lit", groups: ["zeta", "Alpha", "mid", "alpha"])
        _ = try roster.put(item, of: "romeo")
        #expect(try roster.item("juliet@capulet.lit", of: "romeo")?.groups == item.groups)
    }

    @Test(arguments: StoresKind.allCases)
    func everyChangeBumpsTheVersionOnce(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo", "juliet").roster
        #expect(try roster.put(Self.juliet, of: "romeo") == 1)
        #expect(try roster.put(RosterItem(contact: "mercutio@example.com"), of: "romeo") == 2)
        var renamed = Self.juliet
        renamed.name = "Juliet"
        #expect(try roster.put(renamed, of: "romeo") == 3, "a replacement is a change")
        #expect(try roster.put(renamed, of: "romeo") == 4, "a put always counts")
        #expect(try roster.version(of: "romeo") == 4)

        #expect(try roster.remove("juliet@capulet.lit", of: "romeo") == 5)
        #expect(try roster.remove("juliet@capulet.lit", of: "romeo") == nil)
        #expect(try roster.remove("nobody@example.com", of: "romeo") == nil)
        #expect(try roster.remove("juliet@capulet.lit", of: "nobody") == nil)
        #expect(try roster.version(of: "romeo") == 5, "removing nothing changes nothing")

        #expect(try roster.version(of: "juliet") == 0, "versions are per account")
        #expect(try roster.put(RosterItem(contact: "romeo@montague.lit"), of: "juliet") == 1)
        #expect(try roster.remove("mercutio@example.com", of: "romeo") == 6)
        #expect(try roster.items(of: "romeo") == [])
        #expect(try roster.version(of: "romeo") == 6, "an emptied roster keeps its version")
    }

    @Test(arguments: StoresKind.allCases)
    func aPutReplacesEveryField(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo").roster
        _ = try roster.put(Self.juliet, of: "romeo")
        let replacement = RosterItem(
            contact: Self.juliet.contact, name: nil, groups: ["Other"],
            state: SubscriptionState(.both), inRoster: false, pendingInRequest: nil)
        _ = try roster.put(replacement, of: "romeo")
        #expect(try roster.item(Self.juliet.contact, of: "romeo") == replacement)
        #expect(try roster.items(of: "romeo").count == 1)
    }

    @Test(arguments: StoresKind.allCases)
    func itemsAreSortedByTheBytesOfTheContact(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo").roster
        for contact in ["romeo@x", "élise@x", "benvolio@x", "zoë@x", "juliet@x", "Zed@x"] {
            _ = try roster.put(RosterItem(contact: contact), of: "romeo")
        }
        #expect(
            try roster.items(of: "romeo").map(\.contact) == [
                "Zed@x", "benvolio@x", "juliet@x", "romeo@x", "zoë@x", "élise@x",
            ])
    }

    @Test(arguments: StoresKind.allCases)
    func contactsAndUsernamesAreComparedByTheirBytes(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo", "caf\u{E9}").roster
        _ = try roster.put(RosterItem(contact: "caf\u{E9}@x", name: "composed"), of: "romeo")
        _ = try roster.put(RosterItem(contact: "cafe\u{301}@x", name: "decomposed"), of: "romeo")
        #expect(try roster.items(of: "romeo").count == 2)
        #expect(try roster.item("caf\u{E9}@x", of: "romeo")?.name == "composed")
        #expect(try roster.item("cafe\u{301}@x", of: "romeo")?.name == "decomposed")

        _ = try roster.put(RosterItem(contact: "romeo@x"), of: "caf\u{E9}")
        #expect(try roster.items(of: "cafe\u{301}") == [])
        #expect(throws: UnknownAccountError(username: "cafe\u{301}")) {
            try roster.put(RosterItem(contact: "romeo@x"), of: "cafe\u{301}")
        }
    }

    @Test(arguments: StoresKind.allCases)
    func rostersOfDifferentAccountsAreSeparate(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo", "juliet").roster
        let shared = RosterItem(contact: "nurse@capulet.lit", name: "Nurse")
        _ = try roster.put(shared, of: "romeo")
        var julietsNurse = shared
        julietsNurse.name = "Angelica"
        _ = try roster.put(julietsNurse, of: "juliet")

        #expect(try roster.remove("nurse@capulet.lit", of: "romeo") == 2)
        #expect(try roster.items(of: "romeo") == [])
        #expect(try roster.items(of: "juliet") == [julietsNurse])
        #expect(try roster.version(of: "juliet") == 1)
    }

    @Test(arguments: StoresKind.allCases)
    func aPutForAnUnknownAccountThrowsAndStoresNothing(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo")
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try stores.roster.put(Self.juliet, of: "nobody")
        }
        #expect(try stores.roster.version(of: "nobody") == 0)
        #expect(try stores.accounts.createAccount("nobody", credentials: sampleCredentialPair()))
        #expect(try stores.roster.items(of: "nobody") == [])
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsRosterAndVersion(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        _ = try stores.roster.put(Self.juliet, of: "romeo")
        _ = try stores.roster.put(RosterItem(contact: "mercutio@example.com"), of: "romeo")
        _ = try stores.roster.put(RosterItem(contact: "romeo@montague.lit"), of: "juliet")

        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.roster.items(of: "romeo") == [])
        #expect(try stores.roster.version(of: "romeo") == 0)

        // A new account of the same name starts from nothing.
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.roster.items(of: "romeo") == [])
        #expect(try stores.roster.version(of: "romeo") == 0)
        #expect(
            try stores.roster.put(RosterItem(contact: "rosaline@example.com"), of: "romeo") == 1)
        #expect(try stores.roster.items(of: "juliet").map(\.contact) == ["romeo@montague.lit"])
    }
}

/// `RosterItem` on its own: its groups.
@Suite struct RosterItemTests {
    @Test func duplicateGroupsAreDroppedKeepingTheFirst() {
        var item = RosterItem(contact: "juliet@capulet.lit", groups: ["b", "a", "b", "c", "a"])
        #expect(item.groups == ["b", "a", "c"])
        item.groups = ["x", "x", "y", "x"]
        #expect(item.groups == ["x", "y"], "assignments are cleaned as well")
        item.groups.append("y")
        #expect(item.groups == ["x", "y"])
    }

    @Test func groupsAreComparedByTheirBytes() {
        let item = RosterItem(contact: "a@x", groups: ["caf\u{E9}", "cafe\u{301}", "Caf\u{E9}"])
        #expect(item.groups.count == 3, "the stores compare bytes, so the item does too")
    }

    @Test(arguments: StoresKind.allCases)
    func aContactIsRemovedFromEveryRosterWithItsVersionBumped(kind: StoresKind) throws {
        let roster = try kind.makeStores(withAccounts: "romeo", "juliet", "nurse").roster
        let bob = "bob@localhost"
        let shown = RosterItem(contact: bob, name: "Bob", state: SubscriptionState(.both))
        let hidden = RosterItem(contact: bob, state: SubscriptionState(.none, pendingIn: true), inRoster: false)
        let preApproved = RosterItem(contact: bob, state: SubscriptionState(.none, preApproved: true))
        _ = try roster.put(shown, of: "romeo")
        _ = try roster.put(hidden, of: "juliet")
        _ = try roster.put(preApproved, of: "nurse")
        _ = try roster.put(RosterItem(contact: "other@localhost"), of: "nurse")
        let nurseVersion = try roster.version(of: "nurse")

        let removed = try roster.removeEverywhere(bob)
        #expect(removed == [
            RemovedRosterEntry(owner: "juliet", item: hidden, version: 2),
            RemovedRosterEntry(owner: "nurse", item: preApproved, version: nurseVersion + 1),
            RemovedRosterEntry(owner: "romeo", item: shown, version: 2),
        ])
        for owner in ["romeo", "juliet", "nurse"] { #expect(try roster.item(bob, of: owner) == nil) }
        #expect(try roster.item("other@localhost", of: "nurse") != nil)
        #expect(try roster.removeEverywhere(bob) == [])
    }
}
