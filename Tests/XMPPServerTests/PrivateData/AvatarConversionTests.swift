import Testing
import XMPPCore
import XMPPStorage
import XMPPTestSupport

@testable import XMPPServer

/// XEP-0398: the vCard photo and the XEP-0084 PEP avatar are one avatar,
/// and presence carries its XEP-0153 hash (`AvatarConversion`).
@Suite struct AvatarConversionTests {
    /// A 3×2 PNG.
    static let png = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg=="
    static let pngHash = "5e4f1cab6e8994cef0cf614bcfd9b2eef5e18b85"
    static let vCardWithPhoto =
        "<vCard xmlns='vcard-temp'><FN>Romeo</FN><PHOTO><TYPE>image/png</TYPE><BINVAL>\(png)</BINVAL></PHOTO></vCard>"
    static let vCardWithoutPhoto = "<vCard xmlns='vcard-temp'><FN>Romeo</FN></vCard>"

    static func setVCard(_ vCard: String, by client: TestClient) {
        #expect(client.request("<iq type='set' id='vc'>\(vCard)</iq>", id: "vc")?[attribute: "type"] == "result")
    }

    static func vCard(of client: TestClient) -> Element? {
        client.request("<iq type='get' id='vcget'><vCard xmlns='vcard-temp'/></iq>", id: "vcget")?
            .child("vCard", namespace: NS.vcard)
    }

    /// Fires what PEP fires once the owner published `metadata` to the
    /// metadata node.
    static func metadataPublished(_ metadata: String, by client: TestClient, on server: TestServer, onBehalf: Bool = false) {
        let item = Element("item", namespace: NS.pubsub, attributes: ["id": pngHash], children: [.element(parsedElement(metadata))])
        let session = client.session
        server.context.hooks.fire(
            PEPItemPublished(owner: session.jid!.bare, node: NS.avatarMetadata, item: item, onBehalf: onBehalf, session: session))
        server.loop.run()
    }

    static let metadata =
        "<metadata xmlns='urn:xmpp:avatar:metadata'><info id='\(pngHash)' bytes='73' type='image/png' width='3' height='2'/></metadata>"

    // MARK: - The image

    @Test func imagesKnowTheirTypeSizeAndHash() throws {
        let png = try #require(AvatarImage.decode(Self.png))
        let image = AvatarImage(bytes: png, type: nil)
        #expect(image.type == "image/png")
        #expect(image.hash == Self.pngHash)
        #expect(image.dimensions?.width == 3)
        #expect(image.dimensions?.height == 2)
        #expect(image.info == parsedElement(Self.metadata).elements.first)
        let gif = AvatarImage(bytes: try #require(AvatarImage.decode("R0lGODlhBQAEAAAAAA==")), type: "")
        #expect(gif.type == "image/gif")
        #expect(gif.dimensions?.width == 5)
        #expect(gif.dimensions?.height == 4)
        let jpeg = AvatarImage(bytes: try #require(AvatarImage.decode("/9j/4AAEAAD/wAALCAAHAAkDAAAA")), type: "image/jpeg")
        #expect(jpeg.dimensions?.width == 9)
        #expect(jpeg.dimensions?.height == 7)
        #expect(AvatarImage(bytes: [1, 2, 3], type: "image/x-test").dimensions == nil)
        #expect(AvatarImage(bytes: png, type: "img/png").type == "image/png", "profanity 0.13's type")
    }

    @Test func aVCardPhotoMayBeWrappedInLines() {
        let wrapped = "<vCard xmlns='vcard-temp'><PHOTO><BINVAL>\n  \(Self.png.prefix(40))\r\n\t\(Self.png.dropFirst(40))\n</BINVAL></PHOTO></vCard>"
        #expect(AvatarImage(vCard: parsedElement(wrapped))?.hash == Self.pngHash)
        #expect(AvatarImage(vCard: parsedElement(Self.vCardWithoutPhoto)) == nil)
        #expect(AvatarImage(vCard: parsedElement("<vCard xmlns='vcard-temp'><PHOTO><EXTVAL>https://x/</EXTVAL></PHOTO></vCard>")) == nil)
        #expect(AvatarImage(vCard: parsedElement("<vCard xmlns='vcard-temp'><PHOTO><BINVAL>!!</BINVAL></PHOTO></vCard>")) == nil)
    }

    // MARK: - vCard to PEP, PEP's part recorded

    @Test func aVCardPhotoIsPublishedAsAnAvatarOnce() throws {
        let recorder = PEPRequestRecorder()
        let (_, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        let data = Element(
            "item", namespace: NS.pubsub, attributes: ["id": Self.pngHash],
            children: [.element(Element("data", namespace: NS.avatarData, children: [.text(Self.png)]))])
        let metadata = Element(
            "item", namespace: NS.pubsub, attributes: ["id": Self.pngHash], children: [.element(parsedElement(Self.metadata))])
        #expect(
            recorder.take() == [
                .publish(node: NS.avatarData, item: data, configuration: PEPNodeConfiguration()),
                .publish(node: NS.avatarMetadata, item: metadata, configuration: PEPNodeConfiguration()),
            ])
        Self.setVCard(Self.vCardWithPhoto.replacingOccurrences(of: "Romeo", with: "Romeo Montague"), by: romeo)
        #expect(recorder.take().isEmpty, "the photo did not change")
    }

    @Test func theSamePhotoInANewLoginIsNotPublishedAgain() throws {
        let recorder = PEPRequestRecorder()
        let (server, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        romeo.send("</stream:stream>")
        _ = recorder.take()
        let again = server.connect()
        try again.login("romeo", "pw", resource: "again")
        Self.setVCard(Self.vCardWithPhoto, by: again)
        #expect(recorder.take().isEmpty)
    }

    @Test func removingThePhotoDisablesTheAvatar() throws {
        let recorder = PEPRequestRecorder()
        let (_, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        Self.setVCard(Self.vCardWithoutPhoto, by: romeo)
        #expect(recorder.take().isEmpty, "there was no avatar to remove")
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        _ = recorder.take()
        Self.setVCard(Self.vCardWithoutPhoto, by: romeo)
        let empty = Element(
            "item", namespace: NS.pubsub, attributes: ["id": "current"],
            children: [.element(Element("metadata", namespace: NS.avatarMetadata))])
        #expect(
            recorder.take() == [
                .publish(node: NS.avatarMetadata, item: empty, configuration: PEPNodeConfiguration()),
                .retract(node: NS.avatarData, id: Self.pngHash),
            ])
    }

    @Test func aPhotoTooBigForPEPIsNotPublished() throws {
        var config = ServerConfig()
        config.limits.pepMaxItemSize = 1024
        let recorder = PEPRequestRecorder()
        let (_, romeo, _) = try romeoAndJuliet(config: config, extraFeatures: [recorder])
        let big = Base64.encode([UInt8](repeating: 7, count: 2048))
        let bigVCard = "<vCard xmlns='vcard-temp'><PHOTO><TYPE>image/png</TYPE><BINVAL>\(big)</BINVAL></PHOTO></vCard>"
        Self.setVCard(bigVCard, by: romeo)
        #expect(recorder.take().isEmpty)
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        _ = recorder.take()
        Self.setVCard(bigVCard, by: romeo)
        #expect(
            recorder.take().last == .retract(node: NS.avatarData, id: Self.pngHash),
            "the avatar it replaced is disabled")
    }

    // MARK: - PEP to vCard, PEP's event fired by hand

    @Test func aPublishedAvatarBecomesTheVCardPhoto() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        Self.setVCard(Self.vCardWithoutPhoto, by: romeo)
        #expect(romeo.publish("<data xmlns='urn:xmpp:avatar:data'>\(Self.png)</data>", to: NS.avatarData, id: Self.pngHash)?[attribute: "type"] == "result")
        Self.metadataPublished(Self.metadata, by: romeo, on: server)
        let vCard = try #require(Self.vCard(of: romeo))
        #expect(vCard.childText("FN") == "Romeo", "the other fields stay")
        #expect(vCard.child("PHOTO")?.childText("TYPE") == "image/png")
        #expect(AvatarImage(vCard: vCard)?.hash == Self.pngHash)
        Self.metadataPublished("<metadata xmlns='urn:xmpp:avatar:metadata'/>", by: romeo, on: server)
        let removed = try #require(Self.vCard(of: romeo))
        #expect(removed.child("PHOTO") == nil)
        #expect(removed.childText("FN") == "Romeo")
    }

    @Test func anAvatarIsNotConvertedWhenItsDataDoesNotMatchOrItWasTheServersOwn() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        Self.metadataPublished(Self.metadata, by: romeo, on: server)
        #expect(Self.vCard(of: romeo)?.child("PHOTO") == nil, "no data item")
        _ = romeo.publish("<data xmlns='urn:xmpp:avatar:data'>AAEC</data>", to: NS.avatarData, id: Self.pngHash)
        Self.metadataPublished(Self.metadata, by: romeo, on: server)
        #expect(Self.vCard(of: romeo)?.child("PHOTO") == nil, "the data's SHA-1 is not its id")
        _ = romeo.publish("<data xmlns='urn:xmpp:avatar:data'>\(Self.png)</data>", to: NS.avatarData, id: Self.pngHash)
        Self.metadataPublished(Self.metadata, by: romeo, on: server, onBehalf: true)
        #expect(Self.vCard(of: romeo)?.child("PHOTO") == nil, "PEP published it for the server")
        let urlOnly = "<metadata xmlns='urn:xmpp:avatar:metadata'><info id='\(Self.pngHash)' bytes='73' type='image/png' url='https://x/a.png'/></metadata>"
        Self.metadataPublished(urlOnly, by: romeo, on: server)
        #expect(Self.vCard(of: romeo)?.child("PHOTO") == nil, "an avatar at a URL only")
    }

    @Test(arguments: ["open", "presence", "whitelist"])
    func anAvatarIsConvertedUnlessItsDataNodeIsWhitelist(accessModel: String) throws {
        let (server, romeo, _) = try romeoAndJuliet()
        Self.setVCard(Self.vCardWithoutPhoto, by: romeo)
        let reply = romeo.publish(
            "<data xmlns='urn:xmpp:avatar:data'>\(Self.png)</data>", to: NS.avatarData, id: Self.pngHash,
            options: ["pubsub#access_model": accessModel])
        #expect(reply?[attribute: "type"] == "result")
        Self.metadataPublished(Self.metadata, by: romeo, on: server)
        let hash = Self.vCard(of: romeo).flatMap(AvatarImage.init(vCard:))?.hash
        #expect(hash == (accessModel == "whitelist" ? nil : Self.pngHash), "the vCard is anyone's to read")
    }

    @Test(arguments: ["purge", "delete"])
    func emptyingTheMetadataNodeRemovesThePhoto(operation: String) throws {
        let (server, romeo, _) = try romeoAndJuliet()
        Self.setVCard(Self.vCardWithoutPhoto, by: romeo)
        _ = romeo.publish("<data xmlns='urn:xmpp:avatar:data'>\(Self.png)</data>", to: NS.avatarData, id: Self.pngHash)
        #expect(romeo.publish(Self.metadata, to: NS.avatarMetadata, id: Self.pngHash)?[attribute: "type"] == "result")
        Self.metadataPublished(Self.metadata, by: romeo, on: server)
        #expect(Self.vCard(of: romeo)?.child("PHOTO") != nil)
        let reply = romeo.request(
            "<iq type='set' id='empty'><pubsub xmlns='\(NS.pubsubOwner)'><\(operation) node='\(NS.avatarMetadata)'/></pubsub></iq>",
            id: "empty")
        #expect(reply?[attribute: "type"] == "result")
        let session = romeo.session
        server.context.hooks.fire(
            PEPItemRetracted(owner: session.jid!.bare, node: NS.avatarMetadata, itemID: Self.pngHash, onBehalf: false, session: session))
        server.loop.run()
        let vCard = try #require(Self.vCard(of: romeo))
        #expect(vCard.child("PHOTO") == nil)
        #expect(vCard.childText("FN") == "Romeo")
    }

    @Test func retractingAnOlderMetadataItemKeepsThePhoto() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        Self.setVCard(Self.vCardWithoutPhoto, by: romeo)
        let keepTwo = ["pubsub#max_items": "2"]
        #expect(romeo.publish("<metadata xmlns='urn:xmpp:avatar:metadata'/>", to: NS.avatarMetadata, id: "old", options: keepTwo)?[attribute: "type"] == "result")
        _ = romeo.publish("<data xmlns='urn:xmpp:avatar:data'>\(Self.png)</data>", to: NS.avatarData, id: Self.pngHash)
        #expect(romeo.publish(Self.metadata, to: NS.avatarMetadata, id: Self.pngHash, options: keepTwo)?[attribute: "type"] == "result")
        #expect(Self.vCard(of: romeo).flatMap(AvatarImage.init(vCard:))?.hash == Self.pngHash)
        let reply = romeo.request(
            "<iq type='set' id='retract'><pubsub xmlns='\(NS.pubsub)'><retract node='\(NS.avatarMetadata)'><item id='old'/></retract></pubsub></iq>",
            id: "retract")
        #expect(reply?[attribute: "type"] == "result")
        #expect(Self.vCard(of: romeo).flatMap(AvatarImage.init(vCard:))?.hash == Self.pngHash, "the newest item is still the avatar")
        _ = romeo.request(
            "<iq type='set' id='retract'><pubsub xmlns='\(NS.pubsub)'><retract node='\(NS.avatarMetadata)'><item id='\(Self.pngHash)'/></retract></pubsub></iq>",
            id: "retract")
        #expect(Self.vCard(of: romeo)?.child("PHOTO") == nil, "no item left")
    }

    // MARK: - XEP-0153 in presence

    /// The `<photo/>` of the `vcard-temp:x:update` in the presence `client` receives from `from`.
    static func receivedUpdate(by client: TestClient, from: String) -> Element?? {
        let presence = client.receiveElements().first { $0.name == "presence" && $0[attribute: "from"] == from }
        guard let presence else { return nil }
        return .some(presence.child("x", namespace: NS.vcardUpdate))
    }

    @Test func presenceCarriesThePhotoHash() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        romeo.send("<presence><show>away</show></presence>")
        let update = try #require(Self.receivedUpdate(by: juliet, from: "romeo@localhost/orchard"))
        #expect(update == AvatarConversion.update(Self.pngHash))
        #expect(update?.childText("photo") == Self.pngHash)
    }

    @Test func aUserWithoutPhotoAdvertisesNothingYet() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send("<presence><show>away</show></presence>")
        let update = try #require(Self.receivedUpdate(by: juliet, from: "romeo@localhost/orchard"))
        #expect(update == Element("x", namespace: NS.vcardUpdate), "<x/> without <photo/>")
    }

    @Test func theHashIsReadFromTheStoredVCardAtFirstNeed() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        romeo.send("</stream:stream>")
        phone.send("</stream:stream>")
        _ = juliet.receive()
        let again = server.connect()
        try again.login("romeo", "pw", resource: "again")
        again.send("<presence/>")
        let update = try #require(Self.receivedUpdate(by: juliet, from: "romeo@localhost/again"))
        #expect(update?.childText("photo") == Self.pngHash)
    }

    @Test func aClientsOwnPhotoElementIsKeptAndAnEmptyUpdateReplaced() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        romeo.send("<presence><x xmlns='vcard-temp:x:update'><photo/></x></presence>")
        #expect(try #require(Self.receivedUpdate(by: juliet, from: "romeo@localhost/orchard")) == AvatarConversion.update("").withEmptyPhoto)
        romeo.send("<presence><x xmlns='vcard-temp:x:update'/></presence>")
        #expect(try #require(Self.receivedUpdate(by: juliet, from: "romeo@localhost/orchard")) == AvatarConversion.update(Self.pngHash))
    }

    @Test func directedPresenceCarriesTheHashToo() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        romeo.send("<presence to='juliet@localhost/balcony'/>")
        #expect(try #require(Self.receivedUpdate(by: juliet, from: "romeo@localhost/orchard")) == AvatarConversion.update(Self.pngHash))
    }

    @Test func anAvatarPublishedThroughPEPChangesTheHash() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        _ = romeo.publish("<data xmlns='urn:xmpp:avatar:data'>\(Self.png)</data>", to: NS.avatarData, id: Self.pngHash)
        Self.metadataPublished(Self.metadata, by: romeo, on: server)
        _ = juliet.receive()
        romeo.send("<presence><show>chat</show></presence>")
        #expect(try #require(Self.receivedUpdate(by: juliet, from: "romeo@localhost/orchard")) == AvatarConversion.update(Self.pngHash))
    }

    // MARK: - End to end, once PEP handles the requests and fires its events

    /// Needs PEP to carry out `PEPPublishRequest`.
    @Test
    func aVCardPhotoIsReadableAsAPEPAvatar() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        Self.setVCard(Self.vCardWithPhoto, by: romeo)
        _ = romeo.receive()
        let metadata = juliet.items(of: NS.avatarMetadata, at: "romeo@localhost")
        #expect(metadata?.pubsubItemIDs == [Self.pngHash])
        let data = juliet.items(of: NS.avatarData, at: "romeo@localhost")
        #expect(data?.pubsubItemIDs == [Self.pngHash])
    }

    /// Needs PEP to fire `PEPItemPublished` for an owner's publish.
    @Test
    func aPEPAvatarIsReadableAsAVCardPhoto() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        _ = romeo.publish("<data xmlns='urn:xmpp:avatar:data'>\(Self.png)</data>", to: NS.avatarData, id: Self.pngHash)
        _ = romeo.publish(Self.metadata, to: NS.avatarMetadata, id: Self.pngHash)
        let vCard = juliet.request("<iq type='get' id='v' to='romeo@localhost'><vCard xmlns='vcard-temp'/></iq>", id: "v")?
            .child("vCard", namespace: NS.vcard)
        #expect(vCard.flatMap(AvatarImage.init(vCard:))?.hash == Self.pngHash)
    }
}

extension Element {
    /// This `<x/>` with an empty `<photo/>`, as a client sends for no avatar.
    fileprivate var withEmptyPhoto: Element {
        var copy = self
        copy.children = [.element(Element("photo", namespace: NS.vcardUpdate))]
        return copy
    }
}
