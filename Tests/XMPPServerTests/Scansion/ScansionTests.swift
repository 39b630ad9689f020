import Foundation
import Testing
import XMPPServer
import XMPPTestSupport

/// Scripted conversations (`Tests/Scripts/scansion/*.scs`: Prosody's, and
/// Swiftlet's own `swiftlet_*`; see the `README.md` there) played against
/// the in-memory server: every script in the directory, except those
/// listed in `notPassing` with the reason, each on a fresh server with the
/// defaults and what `configs` adds for it, after the `adaptations` of
/// its text.
@Suite("Scansion scripts")
struct ScansionTests {
    /// The scripts that do not pass, by file name without `.scs`, with the
    /// reason; `Tests/Scripts/README.md` lists the same.
    static let notPassing: [String: String] = [
        // Prosody's own rules.
        "muc_nickname_robotface":
            "Prosody's strict resourceprep of nicknames: it refuses 🤖️ (with U+FE0F) and names the error "
            + "from the prepared nickname",
        // A generic pubsub service (XEP-0060 outside PEP), which Swiftlet
        // does not have.
        "pubsub_advanced": "pubsub service", "pubsub_basic": "pubsub service",
        "pubsub_createdelete": "pubsub service", "pubsub_max_items": "pubsub service",
        "pubsub_multi_items": "pubsub service", "pubsub_resend_on_sub": "pubsub service",
        // What only Prosody's setup or texts have.
        "http_upload":
            "Prosody's error texts ('File too large'…), its allowed-types setting (application/x-executable "
            + "refused) and its slot: <get> before <put>, an Authorization header",
        "version": "the software name 'Prosody'",
        // Prosody's mod_tombstones: a probe to a deleted account gets a
        // `gone` presence error before the `unsubscribed`. RFC 6121 §4.3.2
        // asks only for the `unsubscribed` (for any account that does not
        // exist); the error, and telling deleted accounts from never-created
        // ones, are that module's own.
        "tombstones": "Prosody's mod_tombstones (presence error 'gone' for a deleted account)",
        // Prosody-specific: the PEP part of these passes.
        "pubsub_config": "Prosody's node_config form: its labels, and its access models authorize and roster",
        "pubsub_preconditions": "Prosody's node_config form (labels, authorize and roster) and its error text",
    ]

    /// The settings a script assumes beyond the defaults, as config file
    /// text: what Prosody's test config (`spec/scansion/prosody.cfg.lua`)
    /// sets for it.
    static let configs: [String: String] = [
        "extdisco": """
            external_services = stun:default.example:9876, turn:default.example:9876, turn:default.example:9876, \
            ftp://john:password@default.example:2121, ftp://john:password@ftp.example.com:21
            turn_secret = secret
            """,
        "server_contact_info": """
            contact_abuse = mailto:abuse@localhost, xmpp:abuse@localhost
            contact_admin = mailto:admin@localhost, xmpp:admin@localhost
            contact_feedback = http://localhost/feedback.html, mailto:feedback@localhost, xmpp:feedback@localhost
            contact_sales = xmpp:sales@localhost
            contact_security = xmpp:security@localhost
            contact_status = gopher://status.localhost
            contact_support = https://localhost/support.html, xmpp:support@localhost
            """,
        "swiftlet_push": "components = push-5=s3cret",
    ]

    /// Changes to a script's text where it asserts a value the RFCs leave
    /// to the server, each with the reason; the rest of the script plays
    /// as written.
    static let adaptations: [String: (reason: String, change: @Sendable (String) -> String)] = [
        "pep_itemreply": (rosterVersionsReason, anyRosterVersion),
        "pep_publish_subscribe": (rosterVersionsReason, anyRosterVersion),
        "muc_create_destroy": (
            noPhotoReason + "; and the script is played up to 'Admin connects': what follows is Prosody's "
                + "ad-hoc command for server admins http://prosody.im/protocol/muc#destroy",
            { text in
                let played = text.components(separatedBy: "Admin connects")[0]
                return played.replacingOccurrences(
                    of: "<x xmlns=\"vcard-temp:x:update\">\n\t\t\t<photo/>\n\t\t</x>",
                    with: "<x xmlns=\"vcard-temp:x:update\"/>")
            }
        ),
        "muc_outcast_reason": (
            "the script sends a presence after Romeo disconnects, which scansion's client drops silently; "
                + "the runner refuses to send on a closed stream",
            { $0.replacingOccurrences(of: "Romeo disconnects\n\nRomeo sends:\n\t<presence type='unavailable'/>\n", with: "Romeo disconnects\n") }
        ),
        "extdisco": (
            "Swiftlet says when TURN credentials expire (XEP-0215 `expires`, turn_credentials_lifetime); "
                + "Prosody's test setup gives them no lifetime",
            { $0.replacingOccurrences(of: "type='turn' restricted='1'", with: "type='turn' restricted='1' expires='{scansion:any}'") }
        ),
    ]

    static let noPhotoReason =
        "a user without a vCard photo gets <x xmlns='vcard-temp:x:update'/> without <photo/> (XEP-0153 §4.3: "
        + "the server cannot tell that the client has no avatar); Prosody's setup sends an empty <photo/>"

    static let rosterVersionsReason =
        "roster versions are opaque strings (RFC 6121 §2.6.1); the script expects Prosody's numbers"

    /// `text` with every roster version number matching any value.
    @Sendable static func anyRosterVersion(_ text: String) -> String {
        text.replacingOccurrences(of: #"ver='[0-9]+'"#, with: "ver='{scansion:any}'", options: .regularExpression)
    }

    /// Accounts a script writes to that are not among its clients: Prosody's
    /// test setup authenticates anyone (`authentication = "insecure"`), so
    /// there every account exists.
    static let otherAccounts: [String: [String]] = ["mam_extended": ["someone"]]

    /// Every script of the directory that is expected to pass.
    static let scripts = (try? allScripts().filter { notPassing[$0] == nil }) ?? []

    @Test("Scansion script", arguments: scripts)
    func script(_ name: String) throws {
        let config = try ServerConfig.parse(Self.configs[name] ?? "", fileName: "\(name) config")
        let script = try Self.load(name, changing: Self.adaptations[name]?.change ?? { $0 })
        let server = try TestServer(config: config)
        for username in Self.otherAccounts[name] ?? [] { try server.addUser(username, password: "unused") }
        try ScansionRunner.run(script, on: server)
    }

    @Test("Every script not passing is one of the directory's")
    func notPassingScriptsExist() throws {
        let all = Set(try Self.allScripts())
        #expect(Set(Self.notPassing.keys).subtracting(all).isEmpty)
        #expect(Set(Self.configs.keys).subtracting(all).isEmpty)
        #expect(Set(Self.adaptations.keys).subtracting(all).isEmpty)
        #expect(Set(Self.otherAccounts.keys).subtracting(all).isEmpty)
        #expect(Self.scripts.count + Self.notPassing.count == all.count)
    }

    static var directory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Scansion
            .deletingLastPathComponent()  // XMPPServerTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Scripts/scansion")
    }

    /// The names of the directory's scripts, without `.scs`, sorted.
    static func allScripts() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".scs") }.map { String($0.dropLast(4)) }.sorted()
    }

    /// Reads and parses `Tests/Scripts/scansion/<name>.scs`, after
    /// `change` of its text.
    static func load(_ name: String, changing change: (String) -> String = { $0 }) throws -> ScansionScript {
        let text = try String(contentsOf: directory.appendingPathComponent("\(name).scs"), encoding: .utf8)
        return try ScansionScript(parsing: change(text), name: name)
    }
}
