import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// XEP-0363 end to end on real loopback sockets: a slot asked for over
/// XMPP, the file PUT to the built-in HTTP server and fetched back, and the
/// HTTP errors.
@Suite(.timeLimit(.minutes(2)))
struct LiveUploadTests {
    /// A slot's URLs, and the request targets (path and query) in them.
    struct Slot {
        var put: String
        var get: String
        /// `/upload/<slot>/<name>?v=…`.
        var putTarget: String { Self.target(put) }
        /// `/upload/<slot>/<name>`.
        var getTarget: String { Self.target(get) }
        /// The slot id.
        var id: String { String(getTarget.split(separator: "/")[1]) }

        private static func target(_ url: String) -> String {
            let afterScheme = url.components(separatedBy: "://")[1]
            return String(afterScheme[afterScheme.firstIndex(of: "/")!...])
        }
    }

    /// Logs `romeo` in and asks for a slot in `namespace`.
    private func slot(
        on server: LiveServer, _ client: LiveClient? = nil, filename: String = "photo.jpg", size: Int,
        type: String = "image/jpeg", legacy: Bool = false
    ) throws -> Slot {
        let client = try client ?? loggedIn(server)
        let request =
            legacy
            ? "<request xmlns='urn:xmpp:http:upload'><filename>\(filename)</filename><size>\(size)</size>"
                + "<content-type>\(type)</content-type></request>"
            : "<request xmlns='urn:xmpp:http:upload:0' filename='\(filename)' size='\(size)' content-type='\(type)'/>"
        try client.send("<iq type='get' id='slot' to='upload.localhost'>\(request)</iq>")
        let reply = try client.reply(to: "slot")
        let namespace = legacy ? NS.httpUploadLegacy : NS.httpUpload
        guard let slot = reply.child("slot", namespace: namespace), let put = slot.child("put")?[attribute: "url"],
            let get = slot.child("get")?[attribute: "url"]
        else { throw TestFailure("no slot: \(reply.xml)") }
        return Slot(put: put, get: get)
    }

    private func loggedIn(_ server: LiveServer) throws -> LiveClient {
        _ = try? server.register("romeo", "pw")  // fails once romeo exists
        return try server.loggedInClient("romeo", "pw")
    }

    private func http(_ server: LiveServer) -> SocketAddress { server.server.httpAddresses[0] }

    private static func file(size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }
    }

    @Test func putThenGetATenMegabyteFile() throws {
        try LiveServer.run { server in
            let size = 10 << 20
            let slot = try slot(on: server, filename: "my juliet.jpg", size: size)
            #expect(slot.get.hasPrefix("http://localhost:\(http(server).port)/upload/"))
            #expect(slot.get.hasSuffix("/my%20juliet.jpg"))
            let data = Self.file(size: size)
            let put = try LiveHTTPClient.exchange(
                http(server), "PUT", slot.putTarget,
                fields: [("Content-Type", "image/jpeg"), ("Content-Length", String(size))], body: data)
            #expect(put.status == 201)
            #expect(put.fields["access-control-allow-origin"] == "*")

            let get = try LiveHTTPClient.exchange(http(server), "GET", slot.getTarget)
            #expect(get.status == 200)
            #expect(get.body == data)
            #expect(get.fields["content-type"] == "image/jpeg")
            #expect(get.fields["content-length"] == String(size))
            #expect(get.fields["content-disposition"]?.hasPrefix("inline; filename=\"my juliet.jpg\"") == true)
            #expect(get.fields["x-content-type-options"] == "nosniff")
            #expect(get.fields["content-security-policy"]?.hasPrefix("default-src 'none'") == true)
            #expect(get.fields["etag"] == "\"\(slot.id)\"")
            #expect(get.fields["cache-control"]?.contains("max-age=") == true)
            #expect(get.fields["connection"] == "close")
            #expect(get.fields["date"]?.hasSuffix(" GMT") == true)

            let head = try LiveHTTPClient.exchange(http(server), "HEAD", slot.getTarget)
            #expect(head.status == 200)
            #expect(head.fields["content-length"] == String(size))
            let cached = try LiveHTTPClient.exchange(
                http(server), "GET", slot.getTarget, fields: [("If-None-Match", "\"\(slot.id)\"")])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)

            let onDisk = "\(server.dataDirectory)/uploads/\(slot.id)/my juliet.jpg"
            let attributes = try FileManager.default.attributesOfItem(atPath: onDisk)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let directory = try FileManager.default.attributesOfItem(atPath: "\(server.dataDirectory)/uploads/\(slot.id)")
            #expect((directory[.posixPermissions] as? Int) == 0o700)
        }
    }

    @Test func theOldNamespaceAndAFileWithoutAnInlineType() throws {
        try LiveServer.run { server in
            let body = Array("%PDF-1.4 not really".utf8)
            let slot = try slot(on: server, filename: "report.pdf", size: body.count, type: "application/pdf", legacy: true)
            let put = try LiveHTTPClient.exchange(
                http(server), "PUT", slot.putTarget,
                fields: [("Content-Type", "application/pdf"), ("Content-Length", String(body.count))], body: body)
            #expect(put.status == 201)
            let get = try LiveHTTPClient.exchange(http(server), "GET", slot.getTarget)
            #expect(get.body == body)
            #expect(get.fields["content-disposition"]?.hasPrefix("attachment;") == true)
        }
    }

    @Test func aSecondPutIsAConflict() throws {
        try LiveServer.run { server in
            let slot = try slot(on: server, size: 5)
            let fields = [("Content-Type", "image/jpeg"), ("Content-Length", "5")]
            let body = Array("hello".utf8)
            #expect(try LiveHTTPClient.exchange(http(server), "PUT", slot.putTarget, fields: fields, body: body).status == 201)
            #expect(try LiveHTTPClient.exchange(http(server), "PUT", slot.putTarget, fields: fields, body: body).status == 409)
            #expect(try LiveHTTPClient.exchange(http(server), "GET", slot.getTarget).body == body)
        }
    }

    @Test func expiredForgedAndWrongPutsAreRefused() throws {
        try LiveServer.run { server in
            let slot = try slot(on: server, size: 100)
            let path = slot.getTarget
            func put(_ target: String, _ fields: [(String, String)]) throws -> Int {
                // The head only: the server answers before any body.
                let client = try LiveHTTPClient(connectingTo: http(server))
                try client.sendHead("PUT", target, fields: fields)
                return try client.readResponse().status
            }
            let jpeg = ("Content-Type", "image/jpeg")
            #expect(try put(slot.putTarget, [jpeg, ("Content-Length", "101")]) == 413)
            #expect(try put(slot.putTarget, [jpeg, ("Content-Length", "99")]) == 400)
            #expect(try put(slot.putTarget, [jpeg]) == 411)
            #expect(try put(slot.putTarget, [jpeg, ("Transfer-Encoding", "chunked")]) == 501)
            #expect(try put(slot.putTarget, [("Content-Type", "image/png"), ("Content-Length", "100")]) == 403)
            #expect(try put(path, [jpeg, ("Content-Length", "100")]) == 403, "no permit")
            #expect(try put(path + "?v=1.2.3", [jpeg, ("Content-Length", "100")]) == 403, "a malformed permit")

            // A permit the server itself signed, expired a second ago.
            let secret = try Array(Data(contentsOf: URL(fileURLWithPath: "\(server.dataDirectory)/scram-secret")))
            let permit = UploadSigner(serverSecret: secret).permit(
                slot: slot.id, filename: "photo.jpg", size: 100, contentType: "image/jpeg",
                expiry: WallClock.now() - 1)
            #expect(try put("\(path)?v=\(permit)", [jpeg, ("Content-Length", "100")]) == 403)

            let tooLarge = try LiveHTTPClient(connectingTo: http(server))
            try tooLarge.sendHead("PUT", slot.putTarget, fields: [jpeg, ("Content-Length", String(200 << 20))])
            #expect(try tooLarge.readResponse().status == 413, "over upload_max_size")
            #expect(try tooLarge.serverCloses())

            // The right upload still works after all that.
            let body = [UInt8](repeating: 7, count: 100)
            let ok = try LiveHTTPClient.exchange(
                http(server), "PUT", slot.putTarget, fields: [jpeg, ("Content-Length", "100")], body: body)
            #expect(ok.status == 201)
        }
    }

    @Test func anErrorAnswerBeforeTheBodyStillReachesTheClient() throws {
        try LiveServer.run { server in
            let slot = try slot(on: server, size: 1000)
            // The client sends the whole (wrongly typed) body at once, as
            // URLSession does; the server answers 403 and reads the rest.
            let response = try LiveHTTPClient.exchange(
                http(server), "PUT", slot.putTarget,
                fields: [("Content-Type", "text/plain"), ("Content-Length", "1000")],
                body: [UInt8](repeating: 1, count: 1000))
            #expect(response.status == 403)
            let expecting = try LiveHTTPClient(connectingTo: http(server))
            try expecting.sendHead(
                "PUT", slot.putTarget,
                fields: [("Content-Type", "text/plain"), ("Content-Length", "1000"), ("Expect", "100-continue")])
            #expect(try expecting.readResponse().status == 403)
            #expect(try expecting.serverCloses(), "no body comes: the server closes at once")
        }
    }

    @Test func continueIsSentBeforeAnExpectedBody() throws {
        try LiveServer.run { server in
            let slot = try slot(on: server, size: 3)
            let client = try LiveHTTPClient(connectingTo: http(server))
            try client.sendHead(
                "PUT", slot.putTarget,
                fields: [("Content-Type", "image/jpeg"), ("Content-Length", "3"), ("Expect", "100-continue")])
            #expect(try client.readResponse().status == 100)
            try client.send(Array("abc".utf8))
            #expect(try client.readResponse().status == 201)
        }
    }

    @Test func unknownFilesMethodsAndPreflight() throws {
        try LiveServer.run { server in
            let address = http(server)
            #expect(try LiveHTTPClient.exchange(address, "GET", "/upload/AAAAAAAAAAAAAAAAAAAAAA/x.jpg").status == 404)
            #expect(try LiveHTTPClient.exchange(address, "GET", "/").status == 404)
            #expect(try LiveHTTPClient.exchange(address, "GET", "/upload/../../etc/passwd").status == 404)
            let slot = try slot(on: server, size: 10)
            #expect(try LiveHTTPClient.exchange(address, "GET", slot.getTarget).status == 404, "not uploaded yet")
            let post = try LiveHTTPClient.exchange(address, "POST", slot.getTarget, fields: [("Content-Length", "0")])
            #expect(post.status == 405)
            #expect(post.fields["allow"] == "GET, HEAD, PUT, OPTIONS")
            let preflight = try LiveHTTPClient.exchange(
                address, "OPTIONS", slot.putTarget,
                fields: [("Origin", "https://web.example"), ("Access-Control-Request-Method", "PUT")])
            #expect(preflight.status == 204)
            #expect(preflight.fields["access-control-allow-origin"] == "*")
            #expect(preflight.fields["access-control-allow-methods"]?.contains("PUT") == true)
            #expect(preflight.fields["access-control-allow-headers"] == "Content-Type")
            let malformed = try LiveHTTPClient(connectingTo: address)
            try malformed.send(Array("GET / HTTP/1.1\r\nHost : x\r\n\r\n".utf8))
            #expect(try malformed.readResponse().status == 400)
            let long = try LiveHTTPClient(connectingTo: address)
            try long.send(Array("GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\n".utf8))
            #expect(try long.readResponse().status == 414)
        }
    }

    @Test func aSlowClientGets408() throws {
        try LiveServer.run(configure: { $0.http.timeout = .seconds(1) }) { server in
            let client = try LiveHTTPClient(connectingTo: http(server))
            try client.send(Array("GET /upload/AAAAAAAAAAAAAAAAAAAAAA/x HTTP/1.1\r\nHost: local".utf8))
            let response = try client.readResponse()
            #expect(response.status == 408)
            #expect(try client.serverCloses())

            let slot = try slot(on: server, size: 100)
            let stalled = try LiveHTTPClient(connectingTo: http(server))
            try stalled.sendHead("PUT", slot.putTarget, fields: [("Content-Type", "image/jpeg"), ("Content-Length", "100")])
            try stalled.send([UInt8](repeating: 1, count: 40))
            #expect(try stalled.readResponse().status == 408)
            let partial = "\(server.dataDirectory)/uploads/\(slot.id).part"
            #expect(!FileManager.default.fileExists(atPath: partial), "the unfinished upload is deleted")
            // The slot can be used again.
            let retry = try LiveHTTPClient.exchange(
                http(server), "PUT", slot.putTarget, fields: [("Content-Type", "image/jpeg"), ("Content-Length", "100")],
                body: [UInt8](repeating: 2, count: 100))
            #expect(retry.status == 201)
        }
    }

    @Test func uploadsOverHTTPS() throws {
        try LiveServer.run(configure: { $0.http.tlsListen = [ListenAddress("127.0.0.1:0")!] }) { server in
            let https = server.server.httpAddresses[1]
            let body = Self.file(size: 300_000)
            let slot = try slot(on: server, filename: "voice.ogg", size: body.count, type: "audio/ogg")
            #expect(slot.get.hasPrefix("https://localhost:\(https.port)/upload/"), "\(slot.get)")
            let put = try LiveHTTPClient.exchange(
                https, "PUT", slot.putTarget,
                fields: [("Content-Type", "audio/ogg"), ("Content-Length", String(body.count))], body: body,
                trusting: server.certificatePEM)
            #expect(put.status == 201)
            let get = try LiveHTTPClient.exchange(https, "GET", slot.getTarget, trusting: server.certificatePEM)
            #expect(get.status == 200)
            #expect(get.body == body)
        }
    }

    @Test func aDeletedAccountsFilesGoWithIt() throws {
        try LiveServer.run { server in
            let slot = try slot(on: server, size: 4)
            let body = Array("data".utf8)
            let fields = [("Content-Type", "image/jpeg"), ("Content-Length", "4")]
            #expect(try LiveHTTPClient.exchange(http(server), "PUT", slot.putTarget, fields: fields, body: body).status == 201)
            let directory = "\(server.dataDirectory)/uploads/\(slot.id)"
            #expect(FileManager.default.fileExists(atPath: directory))
            let client = try server.loggedInClient("romeo", "pw", resource: "other")
            try client.send("<iq type='set' id='bye'><query xmlns='jabber:iq:register'><remove/></query></iq>")
            _ = try? client.reply(to: "bye")
            #expect(try LiveHTTPClient.exchange(http(server), "GET", slot.getTarget).status == 404)
            #expect(!FileManager.default.fileExists(atPath: directory), "removed with the account, not at the next purge")
        }
    }
}
