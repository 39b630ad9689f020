import Foundation
import Testing
import XMPPClient
import XMPPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `SavedCredentials` on disk: round trips, file modes, refusals, secrecy.
@Suite struct SavedCredentialsTests {
    static let password = "correct horse battery staple"

    private func credentials(
        _ mechanism: SASLMechanism = .scramSHA256, host: String? = "xmpp.capulet.example",
        port: Int? = 5223,
        tls: ClientTLSPolicy = .pinned(CertificateFingerprint(bytes: Array(0..<32))!)
    ) throws -> SavedCredentials {
        SavedCredentials(
            jid: try JID("juliet@capulet.example/balcony"), mechanism: mechanism,
            keys: try scramKeys(
                password: Self.password, hashFunction: try #require(mechanism.scramHashFunction)),
            host: host, port: port, tls: tls)
    }

    /// The permission bits of `path`.
    private func mode(_ path: String) throws -> mode_t {
        var status = stat()
        try #require(stat(path, &status) == 0)
        return status.st_mode & 0o7777
    }

    /// Writes `text` to `path` with mode 0600, as if `write(to:)` had.
    private func writePrivately(_ text: String, to path: String) throws {
        try #require(
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
    }

    @Test(arguments: [SASLMechanism.scramSHA1, .scramSHA256, .scramSHA256Plus])
    func roundTrips(_ mechanism: SASLMechanism) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/credentials.json"
            for saved in [
                try credentials(mechanism),
                try credentials(mechanism, host: nil, port: nil, tls: .requireValid),
                try credentials(mechanism, tls: .insecureAcceptAny),
            ] {
                try saved.write(to: path)
                let read = try SavedCredentials.read(from: path)
                #expect(read == saved)
                #expect(read.jid == People.juliet)
            }
        }
    }

    /// The credentials with a FAST token and the user-agent id it was
    /// issued to.
    private func withToken() throws -> SavedCredentials {
        let saved = try credentials()
        return SavedCredentials(
            jid: saved.jid, mechanism: saved.mechanism, keys: saved.keys, host: saved.host, port: saved.port,
            tls: saved.tls,
            fastToken: FASTToken(
                token: "s3cr3t-t0ken", mechanism: .sha256Exporter,
                expiry: Date(timeIntervalSince1970: 1_800_000_000.25)),
            userAgentID: UUID(uuidString: "d4565fa7-4d72-4749-b3d3-740edbf87770"))
    }

    @Test func roundTripsWithAFASTToken() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/credentials.json"
            let saved = try withToken()
            try saved.write(to: path)
            #expect(try SavedCredentials.read(from: path) == saved)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains("\"expiry\" : \"2027-01-15T08:00:00.250Z\""))
            #expect(text.contains("\"userAgent\" : \"d4565fa7-4d72-4749-b3d3-740edbf87770\""))
            #expect(!text.contains(Self.password))
        }
    }

    @Test func aFileFromBeforeSASL2StillReads() throws {
        let saved = try credentials()
        // What the first version wrote, field for field.
        let contents = """
            {
              "clientKey" : "\(Base64.encode(saved.keys.clientKey))",
              "format" : 1,
              "host" : "xmpp.capulet.example",
              "iterations" : \(saved.keys.iterations),
              "jid" : "juliet@capulet.example",
              "mechanism" : "SCRAM-SHA-256",
              "port" : 5223,
              "salt" : "\(Base64.encode(saved.keys.salt))",
              "serverKey" : "\(Base64.encode(saved.keys.serverKey))",
              "tls" : "\(saved.tls)"
            }
            """
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/credentials.json"
            try writePrivately(contents, to: path)
            let read = try SavedCredentials.read(from: path)
            #expect(read == saved)
            #expect(read.fastToken == nil && read.userAgentID == nil)
        }
    }

    @Test func refusesAMalformedTokenOrUserAgent() throws {
        let token = ["token": "t", "mechanism": "HT-SHA-256-EXPR", "expiry": "2027-01-15T08:00:00Z"]
        let samples: [(String, String)] = [
            (try edited { $0["userAgent"] = "not a UUID" }, "\"userAgent\" is not a UUID"),
            (
                try edited { $0["fastToken"] = token.merging(["mechanism": "SCRAM-SHA-1"]) { $1 } },
                "\"fastToken\" is not a token, a FAST mechanism and an expiry"
            ),
            (
                try edited { $0["fastToken"] = token.merging(["expiry": "tomorrow"]) { $1 } },
                "\"fastToken\" is not a token, a FAST mechanism and an expiry"
            ),
            (
                try edited { $0["fastToken"] = token.merging(["token": ""]) { $1 } },
                "\"fastToken\" is not a token, a FAST mechanism and an expiry"
            ),
        ]
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/credentials.json"
            try expectRefused(samples, at: path)
            // The same token, well formed, reads.
            try? FileManager.default.removeItem(atPath: path)
            try writePrivately(try edited { $0["fastToken"] = token }, to: path)
            #expect(try SavedCredentials.read(from: path).fastToken?.token == "t")
        }
    }

    @Test func theDescriptionLeavesTheTokenOut() throws {
        let saved = try withToken()
        var dumped = ""
        dump(saved, to: &dumped)
        for text in [saved.description, dumped] {
            #expect(!text.contains("s3cr3t-t0ken"))
        }
        #expect(saved.description.hasSuffix("token: <redacted>))"))
    }

    @Test func theFileIsPrivateAndTheDirectoryCreated() throws {
        try withTemporaryDirectory { directory in
            let nested = directory + "/config/swiftlet"
            let path = nested + "/credentials.json"
            try credentials().write(to: path)
            #expect(try mode(path) == 0o600)
            #expect(try mode(nested) == 0o700)
            // Rewriting replaces the file and leaves no temporary file behind.
            let other = try credentials(host: "other.example")
            try other.write(to: path)
            #expect(try mode(path) == 0o600)
            #expect(try SavedCredentials.read(from: path) == other)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: nested) == ["credentials.json"])
        }
    }

    @Test func theFileHoldsNoPassword() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/credentials.json"
            let saved = try credentials()
            try saved.write(to: path)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(!text.contains(Self.password))
            #expect(!text.contains(Base64.encode(Array(Self.password.utf8))))
            // What it does hold is the keys, base64.
            #expect(text.contains(Base64.encode(saved.keys.clientKey)))
        }
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660] as [mode_t])
    func refusesAFileOthersMayRead(_ mode: mode_t) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/credentials.json"
            try credentials().write(to: path)
            try #require(chmod(path, mode) == 0)
            #expect(throws: SavedCredentialsError.insecureFile(path: path, mode: UInt32(mode))) {
                try SavedCredentials.read(from: path)
            }
        }
    }

    @Test func saysWhenThereIsNoFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/missing.json"
            #expect(throws: SavedCredentialsError.notFound(path: path)) {
                try SavedCredentials.read(from: path)
            }
        }
    }

    @Test func refusesADirectory() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            #expect(
                throws: SavedCredentialsError.cannotRead(
                    path: directory, reason: "not a regular file")
            ) {
                try SavedCredentials.read(from: directory)
            }
        }
    }

    /// Valid contents with one field changed by `edit`.
    private func edited(_ edit: (inout [String: Any]) -> Void) throws -> String {
        try withTemporaryDirectory { directory in
            let path = directory + "/credentials.json"
            try credentials().write(to: path)
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
                    as? [String: Any])
            edit(&object)
            return String(
                decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
    }

    /// Checks that each file of `samples`, written at `path`, is refused
    /// as malformed for its reason.
    private func expectRefused(_ samples: [(contents: String, reason: String)], at path: String) throws {
        for (contents, reason) in samples {
            try? FileManager.default.removeItem(atPath: path)
            try writePrivately(contents, to: path)
            #expect(throws: SavedCredentialsError.malformed(path: path, reason: reason)) {
                try SavedCredentials.read(from: path)
            }
        }
    }

    @Test func refusesMalformedContents() throws {
        let samples: [(String, String)] = [
            ("not json", "not a JSON object with the expected fields"),
            ("{}", "not a JSON object with the expected fields"),
            (
                try edited { $0["salt"] = "not base64!" },
                "not a JSON object with the expected fields"
            ),
            (try edited { $0["format"] = 2 }, "format 2 is not known to this version"),
            (
                try edited { $0["jid"] = "juliet@capulet.example/balcony" },
                "\"jid\" is not a bare JID"
            ),
            (try edited { $0["jid"] = "@capulet.example" }, "\"jid\" is not a bare JID"),
            (try edited { $0["mechanism"] = "PLAIN" }, "\"mechanism\" is not a SCRAM mechanism"),
            (try edited { $0["mechanism"] = "SCRAM-SHA-1" }, "the keys do not fit SCRAM-SHA-1"),
            (try edited { $0["clientKey"] = "AAAA" }, "the keys do not fit SCRAM-SHA-256"),
            (try edited { $0["iterations"] = 0 }, "the keys do not fit SCRAM-SHA-256"),
            (try edited { $0["port"] = 0 }, "\"port\" is not a TCP port"),
            (try edited { $0["port"] = 65536 }, "\"port\" is not a TCP port"),
            (
                try edited { $0["tls"] = "pin:00" },
                "\"tls\" is not require, insecure or pin:<SHA-256 fingerprint>"
            ),
        ]
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/credentials.json"
            try expectRefused(samples, at: path)
            try writePrivately(String(repeating: " ", count: 64 * 1024 + 1), to: path + ".big")
            #expect(
                throws: SavedCredentialsError.malformed(
                    path: path + ".big", reason: "the file is too large")
            ) {
                try SavedCredentials.read(from: path + ".big")
            }
        }
    }

    @Test func descriptionAndDumpLeaveTheKeysOut() throws {
        let saved = try credentials()
        var dumped = ""
        dump(saved, to: &dumped)
        for text in [saved.description, String(describing: saved), dumped] {
            #expect(text.contains("juliet@capulet.example"))
            for key in [saved.keys.clientKey, saved.keys.serverKey, saved.keys.salt] {
                #expect(!text.contains(Base64.encode(key)))
                #expect(!text.contains(key.map(String.init).joined(separator: ", ")))
            }
        }
        #expect(
            saved.description
                == "SavedCredentials(juliet@capulet.example, SCRAM-SHA-256, "
                + "xmpp.capulet.example:5223, tls: \(saved.tls), keys: <redacted>)")
    }

    @Test func writingWhereNoDirectoryCanBeMadeFails() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true)
            let blocker = directory + "/file"
            try writePrivately("", to: blocker)
            #expect {
                try credentials().write(to: blocker + "/credentials.json")
            } throws: { error in
                guard case .cannotWrite(let path, _) = error as? SavedCredentialsError else {
                    return false
                }
                return path == blocker + "/credentials.json"
            }
        }
    }
}
