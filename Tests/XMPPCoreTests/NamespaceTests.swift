import Testing
@testable import XMPPCore

@Suite struct NamespaceTests {
    /// Typed from the RFCs and XEPs, so a misspelled constant fails.
    @Test func namespaceURIs() {
        let table: [(String, String)] = [
            (NS.streams, "http://etherx.jabber.org/streams"),
            (NS.client, "jabber:client"),
            (NS.server, "jabber:server"),
            (NS.tls, "urn:ietf:params:xml:ns:xmpp-tls"),
            (NS.sasl, "urn:ietf:params:xml:ns:xmpp-sasl"),
            (NS.bind, "urn:ietf:params:xml:ns:xmpp-bind"),
            (NS.session, "urn:ietf:params:xml:ns:xmpp-session"),
            (NS.stanzas, "urn:ietf:params:xml:ns:xmpp-stanzas"),
            (NS.streamErrors, "urn:ietf:params:xml:ns:xmpp-streams"),
            (NS.xml, "http://www.w3.org/XML/1998/namespace"),
            (NS.roster, "jabber:iq:roster"),
            (NS.rosterVersioning, "urn:xmpp:features:rosterver"),
            (NS.dataForms, "jabber:x:data"),
            (NS.dataFormsValidate, "http://jabber.org/protocol/xdata-validate"),
            (NS.last, "jabber:iq:last"),
            (NS.discoInfo, "http://jabber.org/protocol/disco#info"),
            (NS.discoItems, "http://jabber.org/protocol/disco#items"),
            (NS.vcard, "vcard-temp"),
            (NS.rsm, "http://jabber.org/protocol/rsm"),
            (NS.oob, "jabber:x:oob"),
            (NS.register, "jabber:iq:register"),
            (NS.registerFeature, "http://jabber.org/features/iq-register"),
            (NS.chatstates, "http://jabber.org/protocol/chatstates"),
            (NS.version, "jabber:iq:version"),
            (NS.caps, "http://jabber.org/protocol/caps"),
            (NS.archive, "urn:xmpp:archive"),
            (NS.vcardUpdate, "vcard-temp:x:update"),
            (NS.receipts, "urn:xmpp:receipts"),
            (NS.blocking, "urn:xmpp:blocking"),
            (NS.blockingErrors, "urn:xmpp:blocking:errors"),
            (NS.sm, "urn:xmpp:sm:3"),
            (NS.ping, "urn:xmpp:ping"),
            (NS.time, "urn:xmpp:time"),
            (NS.delay, "urn:xmpp:delay"),
            (NS.carbons, "urn:xmpp:carbons:2"),
            (NS.forward, "urn:xmpp:forward:0"),
            (NS.hints, "urn:xmpp:hints"),
            (NS.mam, "urn:xmpp:mam:2"),
            (NS.hints, "urn:xmpp:hints"),
            (NS.csi, "urn:xmpp:csi:0"),
            (NS.stanzaID, "urn:xmpp:sid:0"),
            (NS.httpUpload, "urn:xmpp:http:upload:0"),
            (NS.httpUploadLegacy, "urn:xmpp:http:upload"),
        ]
        for (constant, uri) in table { #expect(constant == uri) }
    }
}
