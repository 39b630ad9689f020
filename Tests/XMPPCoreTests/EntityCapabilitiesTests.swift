import Testing
@testable import XMPPCore

/// XEP-0115 verification strings and hashes, checked against the
/// specification's own examples (§5.2, §5.3).
@Suite struct EntityCapabilitiesTests {
    private func parse(_ xml: String) -> Element {
        let parser = XMLStreamParser()
        _ = parser.feed("<stream xmlns='jabber:client'>")
        guard case .element(let element)? = parser.feed(xml).first else { fatalError("bad XML in test: \(xml)") }
        return element
    }

    /// §5.2, features given out of order.
    private var simple: Element {
        parse("""
            <query xmlns='http://jabber.org/protocol/disco#info'>\
            <identity category='client' name='Exodus 0.9.1' type='pc'/>\
            <feature var='http://jabber.org/protocol/muc'/><feature var='http://jabber.org/protocol/caps'/>\
            <feature var='http://jabber.org/protocol/disco#info'/><feature var='http://jabber.org/protocol/disco#items'/>\
            </query>
            """)
    }

    @Test func simpleExample() {
        #expect(
            EntityCapabilities.verificationString(of: simple)
                == "client/pc//Exodus 0.9.1<http://jabber.org/protocol/caps<http://jabber.org/protocol/disco#info<"
                + "http://jabber.org/protocol/disco#items<http://jabber.org/protocol/muc<")
        #expect(EntityCapabilities.ver(of: simple, using: .sha1) == "QgayPKawpkPSDYmwT/WM94uAlu0=")
        let caps = EntityCapabilities(hash: "sha-1", node: "http://code.google.com/p/exodus", ver: "QgayPKawpkPSDYmwT/WM94uAlu0=")
        #expect(caps.isVerified(by: simple))
        #expect(caps.discoNode == "http://code.google.com/p/exodus#QgayPKawpkPSDYmwT/WM94uAlu0=")
        var other = caps
        other.ver = "QgayPKawpkPSDYmwT/WM94uAlu1="
        #expect(!other.isVerified(by: simple))
        other = caps
        other.hash = nil
        #expect(!other.isVerified(by: simple), "the legacy format cannot be verified")
        other.hash = "md5"
        #expect(!other.isVerified(by: simple), "nor a hash function Swiftlet lacks")
    }

    /// §5.3: identities in two languages and an extended form.
    @Test func complexExample() {
        let info = parse("""
            <query xmlns='http://jabber.org/protocol/disco#info'>\
            <identity xml:lang='en' category='client' name='Psi 0.11' type='pc'/>\
            <identity xml:lang='el' category='client' name='Ψ 0.11' type='pc'/>\
            <feature var='http://jabber.org/protocol/disco#items'/><feature var='http://jabber.org/protocol/caps'/>\
            <feature var='http://jabber.org/protocol/disco#info'/><feature var='http://jabber.org/protocol/muc'/>\
            <x xmlns='jabber:x:data' type='result'>\
            <field var='FORM_TYPE' type='hidden'><value>urn:xmpp:dataforms:softwareinfo</value></field>\
            <field var='ip_version'><value>ipv4</value><value>ipv6</value></field>\
            <field var='os'><value>Mac</value></field><field var='os_version'><value>10.5.1</value></field>\
            <field var='software'><value>Psi</value></field><field var='software_version'><value>0.11</value></field>\
            </x></query>
            """)
        #expect(
            EntityCapabilities.verificationString(of: info)
                == "client/pc/el/Ψ 0.11<client/pc/en/Psi 0.11<http://jabber.org/protocol/caps<"
                + "http://jabber.org/protocol/disco#info<http://jabber.org/protocol/disco#items<"
                + "http://jabber.org/protocol/muc<urn:xmpp:dataforms:softwareinfo<ip_version<ipv4<ipv6<os<Mac<"
                + "os_version<10.5.1<software<Psi<software_version<0.11<")
        #expect(EntityCapabilities.ver(of: info, using: .sha1) == "q07IKJEyjvHSyhy//CH0CxmKi8w=")
    }

    @Test(arguments: [
        "<feature var='a'/><feature var='a'/>",
        "<identity category='client' type='pc'/><identity category='client' type='pc'/>",
        "<x xmlns='jabber:x:data' type='result'><field var='FORM_TYPE' type='hidden'><value>f</value></field></x>"
            + "<x xmlns='jabber:x:data' type='result'><field var='FORM_TYPE' type='hidden'><value>f</value></field></x>",
        "<x xmlns='jabber:x:data' type='result'><field var='FORM_TYPE' type='hidden'><value>f</value><value>g</value></field></x>",
    ])
    func illFormedInfoHasNoVerificationString(children: String) {
        let info = parse("<query xmlns='http://jabber.org/protocol/disco#info'>\(children)</query>")
        #expect(EntityCapabilities.verificationString(of: info) == nil)
    }

    @Test func aFormWithoutAHiddenFormTypeIsIgnored() {
        let info = parse("""
            <query xmlns='http://jabber.org/protocol/disco#info'><feature var='a'/>\
            <x xmlns='jabber:x:data' type='result'><field var='FORM_TYPE'><value>f</value></field></x></query>
            """)
        #expect(EntityCapabilities.verificationString(of: info) == "a<")
    }

    @Test func readsAndWritesTheCapsElement() throws {
        let presence = parse("""
            <presence><c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='http://n' ver='v='/></presence>
            """)
        let caps = try #require(EntityCapabilities(presence: presence))
        #expect(caps == EntityCapabilities(hash: "sha-1", node: "http://n", ver: "v="))
        #expect(EntityCapabilities(presence: Element("presence", namespace: NS.client, children: [.element(caps.element)])) == caps)
        #expect(EntityCapabilities(presence: parse("<presence><c xmlns='http://jabber.org/protocol/caps' node='n'/></presence>")) == nil)
    }
}
