import Testing
import XMPPClient
import XMPPCore

/// A roster `<item/>` with `attributes` and a `<group/>` per group.
private func item(
    _ attributes: KeyValuePairs<String, String>, groups: [String] = [], name: String = "item",
    namespace: String = NS.roster
) -> Element {
    Element(
        name, namespace: namespace, attributes: attributes,
        children: groups.map {
            .element(Element("group", namespace: NS.roster, children: [.text($0)]))
        })
}

/// `RosterContact` and `RosterChange` read from and written to
/// `jabber:iq:roster` items (RFC 6121 §2.1.2).
@Suite struct RosterContactTests {
    @Test func readsEveryField() throws {
        let contact = try #require(
            RosterContact(
                item: item(
                    [
                        "jid": "Romeo@Montague.Example", "name": "Romeo", "subscription": "to",
                        "ask": "subscribe",
                    ],
                    groups: ["Friends", "Verona"])))
        #expect(contact.jid == People.romeo)
        #expect(contact.name == "Romeo")
        #expect(contact.subscription == .to)
        #expect(contact.isPendingOut)
        #expect(contact.groups == ["Friends", "Verona"])
    }

    @Test func defaultsWhenAttributesAreMissing() throws {
        let contact = try #require(RosterContact(item: item(["jid": "romeo@montague.example"])))
        #expect(contact == RosterContact(jid: People.romeo))
        #expect(contact.subscription == .none)
        #expect(!contact.isPendingOut)
        #expect(contact.name == nil)
        #expect(contact.groups.isEmpty)
        let emptyName = RosterContact(item: item(["jid": "romeo@montague.example", "name": ""]))
        #expect(emptyName?.name == nil)
        let otherAsk = RosterContact(
            item: item(["jid": "romeo@montague.example", "ask": "unsubscribe"]))
        #expect(otherAsk?.isPendingOut == false)
    }

    @Test func groupsAreDeduplicatedInOrderAndEmptyOnesSkipped() throws {
        // "é" precomposed and decomposed are different bytes, as the server sees them.
        let contact = try #require(
            RosterContact(
                item: item(
                    ["jid": "romeo@montague.example"],
                    groups: ["B", "A", "B", "", "A", "\u{E9}", "e\u{301}"])))
        #expect(contact.groups == ["B", "A", "\u{E9}", "e\u{301}"])
    }

    @Test(arguments: [
        item(["name": "no jid"]),
        item(["jid": ""]),
        item(["jid": "@montague.example"]),
        item(["jid": "romeo@montague.example/orchard"]),
        item(["jid": "romeo@montague.example", "subscription": "remove"]),
        item(["jid": "romeo@montague.example", "subscription": "Both"]),
        item(["jid": "romeo@montague.example"], name: "contact"),
        item(["jid": "romeo@montague.example"], namespace: NS.client),
    ])
    func refusesWhatIsNotAContact(_ element: Element) {
        #expect(RosterContact(item: element) == nil)
    }

    @Test func theElementCarriesJIDNameAndGroupsOnly() throws {
        let contact = RosterContact(
            jid: People.romeo, name: "Romeo", groups: ["Friends", "Verona"], subscription: .both,
            isPendingOut: true)
        #expect(
            contact.element
                == item(
                    ["jid": "romeo@montague.example", "name": "Romeo"],
                    groups: ["Friends", "Verona"]))
        let back = try #require(RosterContact(item: contact.element))
        #expect(
            back == RosterContact(jid: People.romeo, name: "Romeo", groups: ["Friends", "Verona"]))
        #expect(RosterContact(jid: People.romeo).element == item(["jid": "romeo@montague.example"]))
    }

    @Test func theInitializerDropsResourceAndRepeatedGroups() throws {
        let contact = RosterContact(
            jid: try JID("romeo@montague.example/orchard"), groups: ["A", "A", "B"])
        #expect(contact.jid == People.romeo)
        #expect(contact.groups == ["A", "B"])
    }

    // MARK: Pushes

    @Test func aPushItemIsAnUpdateOrARemoval() throws {
        let update = RosterChange(
            item: item(["jid": "romeo@montague.example", "subscription": "both"]))
        #expect(update == .update(RosterContact(jid: People.romeo, subscription: .both)))
        let removal = RosterChange(
            item: item(["jid": "romeo@montague.example", "subscription": "remove"]))
        #expect(removal == .remove(People.romeo))
        #expect(removal?.jid == People.romeo)
        #expect(RosterChange(item: item(["jid": "romeo@/x", "subscription": "remove"])) == nil)
        #expect(
            RosterChange(item: item(["jid": "romeo@montague.example", "subscription": "bogus"]))
                == nil)
    }
}
