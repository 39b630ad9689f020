import Testing
import XMPPCore
import XMPPTestSupport

@testable import XMPPServer

/// XEP-0363 on the XMPP side, in memory: discovery, slot requests in both
/// namespaces, their errors, and the routing of the service's addresses.
@Suite struct HTTPUploadTests {
    private static func config(_ change: (inout ServerConfig) -> Void = { _ in }) -> ServerConfig {
        var config = ServerConfig()
        change(&config)
        return config
    }

    private func request(
        _ client: TestClient, to service: String = "upload.localhost", filename: String = "photo.jpg",
        size: String = "23456", type: String? = "image/jpeg"
    ) -> Element? {
        let typeAttribute = type.map { " content-type='\($0)'" } ?? ""
        return client.request(
            "<iq type='get' id='s' to='\(service)'><request xmlns='urn:xmpp:http:upload:0' filename='\(filename)' "
                + "size='\(size)'\(typeAttribute)/></iq>", id: "s")
    }

    // MARK: Discovery

    @Test func theServerListsTheService() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = romeo.request(
            "<iq type='get' id='i' to='localhost'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>",
            id: "i")
        let items = reply?.child("query", namespace: NS.discoItems)?.elements ?? []
        #expect(items.map { $0[attribute: "jid"] } == ["upload.localhost", "conference.localhost"])
        #expect(items.first?[attribute: "name"] == "HTTP File Upload")
        let own = romeo.request(
            "<iq type='get' id='o'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>", id: "o")
        #expect(own?.child("query", namespace: NS.discoItems)?.elements.isEmpty == true, "an account has no items")
    }

    @Test(arguments: ["upload.localhost", "httpfileupload.localhost"])
    func theServiceDescribesItself(_ service: String) throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = try #require(
            romeo.request(
                "<iq type='get' id='i' to='\(service)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>",
                id: "i"))
        #expect(reply[attribute: "from"] == service)
        let query = try #require(reply.child("query", namespace: NS.discoInfo))
        let identity = try #require(query.child("identity"))
        #expect(identity[attribute: "category"] == "store")
        #expect(identity[attribute: "type"] == "file")
        let features = query.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] }
        #expect(Set(features).isSuperset(of: [NS.httpUpload, NS.httpUploadLegacy]))
        let forms = query.elements.filter { $0.name == "x" && $0.namespace == NS.dataForms }
        #expect(forms.count == 2)
        for (form, namespace) in zip(forms, [NS.httpUpload, NS.httpUploadLegacy]) {
            #expect(form[attribute: "type"] == "result")
            let fields = Dictionary(
                uniqueKeysWithValues: form.elements.map { ($0[attribute: "var"] ?? "", $0.childText("value")) })
            #expect(fields["FORM_TYPE"] == namespace)
            #expect(fields["max-file-size"] == String(100 << 20))
        }
    }

    // MARK: Slots

    @Test func aSlotInTheCurrentNamespace() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        let reply = try #require(request(romeo, filename: "my juliet.jpg"))
        #expect(reply[attribute: "type"] == "result")
        #expect(reply[attribute: "from"] == "upload.localhost")
        let slot = try #require(reply.child("slot", namespace: NS.httpUpload))
        let put = try #require(slot.child("put")?[attribute: "url"])
        let get = try #require(slot.child("get")?[attribute: "url"])
        #expect(slot.child("put")?.elements.isEmpty == true, "no headers: the URL carries the permit")
        let match = try #require(
            try #/^https://localhost:5281/upload/([A-Za-z0-9_-]{22})/my%20juliet\.jpg$/#.wholeMatch(in: get))
        #expect(put.hasPrefix(get + "?v="))
        let permit = put.dropFirst(get.count + 3)
        let service = try #require(server.context.upload)
        guard case .valid(let size) = service.signer.verify(
            permit: permit, slot: String(match.1), filename: "my juliet.jpg", contentType: "image/jpeg",
            now: WallClock.now())
        else {
            Issue.record("the permit does not verify")
            return
        }
        #expect(size == 23456)
    }

    @Test func aSlotInTheOldNamespaceForXMPPFramework() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        let reply = try #require(
            romeo.request(
                "<iq type='get' id='s' to='httpfileupload.localhost'><request xmlns='urn:xmpp:http:upload'>"
                    + "<filename>a.png</filename><size>100</size><content-type>image/png</content-type>"
                    + "</request></iq>", id: "s"))
        let slot = try #require(reply.child("slot", namespace: NS.httpUploadLegacy))
        let put = try #require(slot.child("put"))
        let get = try #require(slot.child("get"))
        #expect(put.children.isEmpty && get.children.isEmpty, "URLs in url= only, no text, no headers")
        let url = try #require(put[attribute: "url"])
        #expect(url.hasPrefix(try #require(get[attribute: "url"]) + "?v="))
        #expect(url.contains("/a.png?v="))
        _ = server
    }

    @Test func noContentTypeMeansOctetStream() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        let reply = try #require(request(romeo, filename: "blob", size: "5", type: nil))
        let put = try #require(reply.child("slot", namespace: NS.httpUpload)?.child("put")?[attribute: "url"])
        let parts = put.split(separator: "/")
        let slot = String(parts[parts.count - 2])
        let permit = put.split(separator: "=").last!
        let service = try #require(server.context.upload)
        #expect(
            service.signer.verify(
                permit: permit, slot: slot, filename: "blob", contentType: "application/octet-stream",
                now: WallClock.now()) == .valid(size: 5))
    }

    @Test func aFileTooLargeIsNotAcceptableWithTheLimit() throws {
        let config = Self.config { $0.upload.maxFileSize = 20000 }
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        let reply = try #require(request(romeo, size: "20001"))
        #expect(reply.errorCondition == "not-acceptable")
        let error = try #require(reply.child("error"))
        #expect(error[attribute: "type"] == "modify")
        let tooLarge = try #require(error.child("file-too-large", namespace: NS.httpUpload))
        #expect(tooLarge.childText("max-file-size") == "20000")
        #expect(request(romeo, size: "20000")?[attribute: "type"] == "result")
        let legacy = romeo.request(
            "<iq type='get' id='l' to='upload.localhost'><request xmlns='urn:xmpp:http:upload'>"
                + "<filename>a</filename><size>99999</size></request></iq>", id: "l")
        #expect(legacy?.child("error")?.child("file-too-large", namespace: NS.httpUploadLegacy) != nil)
    }

    @Test func theQuotaCountsUploadsAndUnusedSlots() throws {
        let config = Self.config {
            $0.upload.maxFileSize = 10_000
            $0.upload.quota = 25_000
        }
        let (_, romeo, juliet) = try romeoAndJuliet(config: config)
        #expect(request(romeo, size: "10000")?[attribute: "type"] == "result")
        #expect(request(romeo, size: "10000")?[attribute: "type"] == "result")
        let refused = try #require(request(romeo, size: "5001"))
        #expect(refused.errorCondition == "resource-constraint")
        #expect(refused.child("error")?[attribute: "type"] == "wait")
        #expect(request(romeo, size: "5000")?[attribute: "type"] == "result", "exactly up to the quota")
        #expect(request(juliet, size: "10000")?[attribute: "type"] == "result", "a quota per user")
    }

    @Test func emptyFilesGetSlotsButEachCountsOneBlockTowardTheQuota() throws {
        let config = Self.config {
            $0.upload.maxFileSize = 8192
            $0.upload.quota = 3 * 4096
        }
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        for _ in 0..<3 {
            #expect(request(romeo, filename: "empty.txt", size: "0")?[attribute: "type"] == "result")
        }
        let refused = try #require(request(romeo, filename: "empty.txt", size: "0"))
        #expect(refused.errorCondition == "resource-constraint")
    }

    @Test(arguments: [
        ("", "10"), ("a/b", "10"), ("..", "10"), ("a", ""), ("a", "-1"), ("a", "ten"), ("a", "1e3"),
        ("a", "99999999999999999999"),
    ])
    func badFileNamesAndSizesAreBadRequests(_ filename: String, _ size: String) throws {
        let (_, romeo, _) = try romeoAndJuliet()
        #expect(request(romeo, filename: filename, size: size)?.errorCondition == "bad-request")
    }

    @Test func missingFieldsAndBadTypesAreBadRequests() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let noName = romeo.request(
            "<iq type='get' id='n' to='upload.localhost'><request xmlns='urn:xmpp:http:upload:0' size='1'/></iq>",
            id: "n")
        #expect(noName?.errorCondition == "bad-request")
        let noSize = romeo.request(
            "<iq type='get' id='z' to='upload.localhost'><request xmlns='urn:xmpp:http:upload'>"
                + "<filename>a</filename></request></iq>", id: "z")
        #expect(noSize?.errorCondition == "bad-request")
        #expect(request(romeo, type: "not a type")?.errorCondition == "bad-request")
    }

    @Test func beforeLoginTheRequestIsForbidden() throws {
        let server = try TestServer()
        let client = server.connect()
        _ = try client.openStream()
        let reply = client.request(
            "<iq type='get' id='s' to='upload.localhost'><request xmlns='urn:xmpp:http:upload:0' filename='a' "
                + "size='1'/></iq>", id: "s")
        #expect(reply?.errorCondition == "forbidden")
    }

    @Test func withUploadOffTheServiceIsUnavailable() throws {
        let config = Self.config { $0.upload.enabled = false }
        let (server, romeo, _) = try romeoAndJuliet(config: config)
        #expect(server.context.upload == nil)
        #expect(request(romeo)?.errorCondition == "service-unavailable")
        #expect(request(romeo, to: "httpfileupload.localhost")?.errorCondition == "service-unavailable")
        let items = romeo.request(
            "<iq type='get' id='i' to='localhost'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>",
            id: "i")
        let listed = items?.child("query", namespace: NS.discoItems)?.elements.map { $0[attribute: "jid"] }
        #expect(listed == ["conference.localhost"])
    }

    @Test func aConfiguredServiceAddressAndURL() throws {
        let config = Self.config {
            $0.upload.service = "files.localhost"
            $0.upload.url = "https://files.example.com"
        }
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        let reply = try #require(request(romeo, to: "files.localhost"))
        let get = reply.child("slot", namespace: NS.httpUpload)?.child("get")?[attribute: "url"]
        #expect(get?.hasPrefix("https://files.example.com/upload/") == true)
        #expect(request(romeo, to: "httpfileupload.localhost")?[attribute: "type"] == "result")
        #expect(request(romeo, to: "upload.localhost")?.errorCondition == "remote-server-not-found")
    }

    // MARK: Routing to the service's addresses

    @Test func otherStanzasToTheServiceGoNowhere() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let chat = romeo.request("<message id='m' to='upload.localhost' type='chat'><body>hi</body></message>", id: "m")
        #expect(chat?.errorCondition == "service-unavailable")
        let user = romeo.request(
            "<iq type='get' id='u' to='someone@upload.localhost'><ping xmlns='urn:xmpp:ping'/></iq>", id: "u")
        #expect(user?.errorCondition == "service-unavailable")
        let resource = romeo.request(
            "<iq type='get' id='r' to='upload.localhost/x'><ping xmlns='urn:xmpp:ping'/></iq>", id: "r")
        #expect(resource?.errorCondition == "service-unavailable")
        let unknown = romeo.request(
            "<iq type='get' id='p' to='upload.localhost'><ping xmlns='urn:xmpp:ping'/></iq>", id: "p")
        #expect(unknown?.errorCondition == "service-unavailable")
        romeo.send("<presence to='upload.localhost'/>")
        romeo.send("<message to='upload.localhost' type='headline'><body>x</body></message>")
        #expect(romeo.receiveElements().isEmpty)
    }

    // MARK: XEP-0066 out-of-band data

    @Test func oobURLsInMessagesArriveIntactOnlineAndOffline() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        let url = "https://localhost:5281/upload/AAAAAAAAAAAAAAAAAAAAAA/a%20b.jpg"
        let message =
            "<message to='juliet@localhost' type='chat' id='o1'><body>\(url)</body>"
            + "<x xmlns='jabber:x:oob'><url>\(url)</url><desc>a photo</desc></x></message>"
        romeo.send(message)
        let online = try #require(juliet.receiveElements().first { $0.name == "message" })
        #expect(online.child("x", namespace: NS.oob)?.childText("url") == url)
        #expect(online.child("x", namespace: NS.oob)?.childText("desc") == "a photo")
        juliet.send("</stream:stream>")
        _ = juliet.receive()
        romeo.send(message)
        #expect(romeo.receiveElements().filter { $0.name == "message" }.isEmpty)
        let later = server.connect()
        try later.login("juliet", "pw", resource: "phone")
        later.send("<presence/>")
        let stored = try #require(later.receiveElements().first { $0.name == "message" })
        #expect(stored.childText("body") == url)
        #expect(stored.child("x", namespace: NS.oob)?.childText("url") == url)
        #expect(stored.child("delay", namespace: NS.delay) != nil)
    }
}
