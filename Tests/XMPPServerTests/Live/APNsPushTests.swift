import Foundation
import Testing
import XMPPCore
import XMPPNet
@testable import XMPPServer
import XMPPTestSupport

/// The built-in APNs push service against `tools/interop/apns_standin.py`,
/// a stand-in for Apple's HTTP/2 provider API on loopback that checks the
/// provider token's ES256 signature with the public half of a key made
/// here, the headers and the payload, and answers as the test asks per
/// device token.
///
/// Skipped when `python3 -c "import h2, cryptography"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1`.
@Suite(.timeLimit(.minutes(1)), .serialized)
struct APNsPushTests {
    static let libraries = PythonInterop.probe(["h2", "cryptography"])
    static let keyID = "ABCDE12345"
    static let teamID = "TEAM123456"
    static let topic = "org.example.chat"
    static let good = String(repeating: "ab", count: 32)
    static let gone = String(repeating: "cd", count: 32)
    static let flaky = String(repeating: "ef", count: 32)

    /// An APNs key and a TLS certificate for 127.0.0.1, made with
    /// `openssl` in a fresh directory, for `body`.
    private func withKeys(_ body: (_ directory: String, _ p8: String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-apns-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func openssl(_ arguments: [String]) throws {
            let outcome = try ChildProcess("/usr/bin/env", ["openssl"] + arguments).wait(timeout: 30)
            guard outcome.status == 0 else { throw TestFailure("openssl \(arguments): \(outcome.output)") }
        }
        let p8 = "\(directory)/AuthKey.p8"
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8])
        chmod(p8, 0o600)
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            "\(directory)/tls.key", "-out", "\(directory)/tls.crt", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        try body(directory, p8)
    }

    /// A live server whose built-in APNs service uses `p8` and sends to
    /// `https://127.0.0.1:PORT`, trusting the certificate in `directory`.
    private func withServer(
        sendingTo port: String, _ directory: String, _ p8: String, _ body: (LiveServer) throws -> Void
    ) throws {
        try LiveServer.run(configure: { config in
            config.push.apns.keyFile = p8
            config.push.apns.keyID = Self.keyID
            config.push.apns.teamID = Self.teamID
            config.push.apns.topic = Self.topic
            config.push.apns.endpoint = "https://127.0.0.1:\(port)"
            config.push.apns.caFile = "\(directory)/tls.crt"
        }, body)
    }

    /// Keys and a certificate, the stand-in started on them; runs `body`
    /// with a live server sending to it.
    private func withStandIn(_ body: (LiveServer, _ records: () throws -> [[String: Any]]) throws -> Void) throws {
        try withKeys { directory, p8 in
            let record = "\(directory)/requests.jsonl"
            let standIn = try ChildProcess(
                "/usr/bin/env",
                [
                    "python3", ChildProcess.repositoryRoot.appendingPathComponent("tools/interop/apns_standin.py").path,
                    "--cert", "\(directory)/tls.crt", "--key", "\(directory)/tls.key", "--provider-key", p8,
                    "--key-id", Self.keyID, "--team-id", Self.teamID, "--topic", Self.topic, "--record", record,
                    "--respond", "\(Self.gone)=410:Unregistered", "--respond", "\(Self.flaky)=503:ServiceUnavailable*2",
                    "--max-seconds", "50",
                ])
            defer { _ = standIn.wait(timeout: 0) }
            let line = try standIn.waitForLine(containing: "listening ", timeout: 20)
            let port = try #require(line.split(separator: " ").last.map(String.init))
            try withServer(sendingTo: port, directory, p8) { server in
                try body(server) {
                    guard let text = try? String(contentsOfFile: record, encoding: .utf8) else { return [] }
                    return try text.split(separator: "\n").map { line in
                        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    }
                }
            }
        }
    }

    /// Reads what `client` gets until the reply to a ping of its own:
    /// everything that was queued before it.
    private func drain(_ client: LiveClient) throws -> [Element] {
        let id = "drain-\(UUID())"
        try client.send("<iq type='get' id='\(id)' to='localhost'><ping xmlns='urn:xmpp:ping'/></iq>")
        var elements: [Element] = []
        while true {
            let element = try client.nextElement()
            if element.name == "iq", element[attribute: "id"] == id { return elements }
            elements.append(element)
        }
    }

    /// Waits until `records` has `count` entries.
    private func wait(for count: Int, in records: () throws -> [[String: Any]]) throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let current = try records()
            if current.count >= count { return current }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try records()
    }

    /// Logs `username` in, enables push with `token`, and logs out, so that
    /// messages to it go to offline storage and are announced.
    private func enableAndLeave(_ server: LiveServer, _ username: String, token: String) throws {
        try server.register(username, "pw")
        let client = try server.loggedInClient(username, "pw")
        try client.send("<iq type='set' id='p1'><enable xmlns='urn:xmpp:push:0' jid='apns.localhost' node='\(token)'/></iq>")
        var reply = try client.nextElement()
        while reply[attribute: "id"] != "p1" { reply = try client.nextElement() }
        #expect(reply[attribute: "type"] == "result", "\(reply.xml)")
        _ = try client.close()
    }

    private func message(_ sender: LiveClient, to username: String, _ text: String) throws {
        try sender.send("<message type='chat' to='\(username)@localhost'><body>\(text)</body></message>")
        _ = try sender.ping()
    }

    /// Romeo enables push with `token` and leaves; Juliet's message to him
    /// is routed at once, however APNs answers.
    private func messageWithoutWaiting(_ server: LiveServer, toRomeoWithToken token: String) throws {
        try enableAndLeave(server, "romeo", token: token)
        try server.register("juliet", "pw")
        let juliet = try server.loggedInClient("juliet", "pw", resource: "balcony")
        let sent = ContinuousClock.now
        try message(juliet, to: "romeo", "hello")
        #expect(ContinuousClock.now - sent < .seconds(1), "routing does not wait for APNs")
    }

    @Test(.enabled(if: libraries.shouldRun, "h2 or cryptography is missing: pip install h2 cryptography"))
    func offlineMessagesReachTheDeviceThroughOneConnectionAndAGoneTokenIsForgotten() throws {
        guard PythonInterop.requireAvailable(Self.libraries) else { return }
        try withStandIn { server, records in
            try enableAndLeave(server, "romeo", token: Self.good)
            try enableAndLeave(server, "mercutio", token: Self.gone)
            try server.register("juliet", "pw")
            let juliet = try server.loggedInClient("juliet", "pw", resource: "balcony")
            try message(juliet, to: "romeo", "wherefore")
            try message(juliet, to: "romeo", "art thou")
            var seen = try wait(for: 2, in: records)
            #expect(seen.count == 2)
            let first = try #require(seen.first)
            let headers = try #require(first["headers"] as? [String: Any])
            #expect(first["path"] as? String == "/3/device/\(Self.good)")
            #expect(first["status"] as? Int == 200)
            #expect(headers["jwt_valid"] as? Bool == true)
            #expect(headers["apns-topic"] as? String == Self.topic)
            #expect(headers["apns-push-type"] as? String == "alert")
            #expect(headers["apns-priority"] as? String == "10")
            #expect(headers["apns-collapse-id"] as? String == "juliet@localhost")
            let aps = try #require((first["payload"] as? [String: Any])?["aps"] as? [String: Any])
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["title"] as? String == "juliet@localhost" && alert["body"] as? String == "New message")
            #expect(aps["badge"] as? Int == 1)
            #expect(((seen[1]["payload"] as? [String: Any])?["aps"] as? [String: Any])?["badge"] as? Int == 2)
            #expect(first["connection"] as? Int == seen[1]["connection"] as? Int, "one connection for both")

            try message(juliet, to: "mercutio", "draw")
            seen = try wait(for: 3, in: records)
            #expect(seen.last?["status"] as? Int == 410)
            try server.waitForLog(containing: "of mercutio: the device is gone (Unregistered); disabled")
            try message(juliet, to: "mercutio", "again")
            Thread.sleep(forTimeInterval: 0.5)
            #expect(try records().count == 3, "a forgotten token gets nothing more")
            #expect(!server.log.lines.contains { $0.contains("BEGIN PRIVATE KEY") })
        }
    }

    @Test(.enabled(if: libraries.shouldRun, "h2 or cryptography is missing: pip install h2 cryptography"))
    func passingFailuresAreRetriedWithoutHoldingUpRouting() throws {
        guard PythonInterop.requireAvailable(Self.libraries) else { return }
        try withStandIn { server, records in
            try messageWithoutWaiting(server, toRomeoWithToken: Self.flaky)
            let seen = try wait(for: 3, in: records)
            #expect(seen.compactMap { $0["status"] as? Int } == [503, 503, 200])
        }
    }

    @Test(.enabled(if: libraries.shouldRun, "h2 or cryptography is missing: pip install h2 cryptography"))
    func aDetachedSessionGetsOnePushItsMessageOnceOnResumptionAndNothingOnceDisabled() throws {
        guard PythonInterop.requireAvailable(Self.libraries) else { return }
        try withStandIn { server, records in
            try server.register("romeo", "pw")
            try server.register("juliet", "pw")
            let romeo = try server.loggedInClient("romeo", "pw", resource: "phone")
            try romeo.send("<enable xmlns='urn:xmpp:sm:3' resume='true'/><presence/>")
            try romeo.send("<iq type='set' id='p1'><enable xmlns='urn:xmpp:push:0' jid='apns.localhost' node='\(Self.good)'/></iq>")
            let setUp = try drain(romeo)
            let enabled = try #require(setUp.first { $0.name == "enabled" })
            #expect(setUp.contains { $0[attribute: "id"] == "p1" && $0[attribute: "type"] == "result" })
            let juliet = try server.loggedInClient("juliet", "pw", resource: "balcony")
            romeo.reset()
            try server.waitForLog(containing: "waiting 259200.0 seconds for the client to resume")
            try message(juliet, to: "romeo", "one")
            #expect(try wait(for: 1, in: records).count == 1)
            Thread.sleep(forTimeInterval: 0.3)
            #expect(try records().count == 1, "exactly one push")

            let again = try server.connectWithTLS()
            #expect(try again.authenticate("romeo", "pw", mechanism: .scramSHA256).name == "success")
            try again.openStream()
            try again.send("<resume xmlns='urn:xmpp:sm:3' previd='\(enabled[attribute: "id"]!)' h='0'/>")
            let resumed = try drain(again)
            #expect(resumed.first?.name == "resumed")
            #expect(resumed.filter { $0.name == "message" && $0.childText("body") == "one" }.count == 1)
            try again.send("<iq type='set' id='p2'><disable xmlns='urn:xmpp:push:0' jid='apns.localhost'/></iq>")
            #expect(try drain(again).contains { $0[attribute: "id"] == "p2" && $0[attribute: "type"] == "result" })
            again.reset()
            try message(juliet, to: "romeo", "two")
            Thread.sleep(forTimeInterval: 0.5)
            #expect(try records().count == 1, "disabled: no push")
        }
    }

    @Test func anUnreachableAPNsIsTriedAgainWithoutHoldingUpRouting() throws {
        try withKeys { directory, p8 in
            try withServer(sendingTo: "1", directory, p8) { server in
                try messageWithoutWaiting(server, toRomeoWithToken: Self.good)
                try server.waitForLog(containing: "trying again in 1.0 seconds")
                try server.waitForLog(containing: "trying again in 4.0 seconds", timeout: .seconds(10))
                try server.waitForLog(containing: "APNs: a notification given up after 4 tries", timeout: .seconds(10))
            }
        }
    }

    @Test func aKeyOthersMayReadIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-apns-\(UUID()).p8").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        try certificate.privateKeyPEM.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        var settings = ServerConfig.APNs()
        settings.keyFile = path
        let loop = try EventLoop()
        #expect(throws: APNsSetupError.self) {
            try APNsClient(settings: settings, endpoint: "https://127.0.0.1:1", log: Logger(level: .error), on: loop)
        }
        chmod(path, 0o600)
        _ = try APNsClient(settings: settings, endpoint: "https://127.0.0.1:1", log: Logger(level: .error), on: loop)
    }
}
