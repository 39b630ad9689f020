import Foundation
import Testing
import XMPPClient
import XMPPCore
@testable import CommandLineSupport

/// Which server, port and TLS policy a command connects with, and what
/// login saves.
@Suite struct ConfigurationTests {
    let alice = try! JID("alice@example.com")
    let keys = SCRAMClientKeys(
        hashFunction: .sha256, salt: [1, 2, 3], iterations: 4096, clientKey: Array(repeating: 1, count: 32),
        serverKey: Array(repeating: 2, count: 32))!
    let pinned = ClientTLSPolicy("pin:" + String(repeating: "0F", count: 32))!

    var saved: SavedCredentials {
        SavedCredentials(jid: alice, mechanism: .scramSHA256, keys: keys, host: "10.0.0.1", port: 5223, tls: pinned)
    }

    @Test func defaultsAreTheDomainPort5222AndAValidCertificate() {
        let configuration = GlobalOptions().configuration(
            for: alice, secret: .password("pw"), saved: nil, storePath: "/a.sqlite", runsUntilStopped: false)
        #expect(configuration.host == nil)
        #expect(configuration.port == 5222)
        #expect(configuration.tls == .requireValid)
        #expect(configuration.storePath == "/a.sqlite")
        #expect(configuration.timeout == GlobalOptions.defaultTimeout)
        #expect(!configuration.reconnect.isEnabled)
        #expect(!configuration.joinsBookmarkedRooms, "a one-shot command stays out of bookmarked rooms")
    }

    @Test func theSavedServerAndPolicyApplyUnlessOverridden() {
        let fromSaved = GlobalOptions().configuration(
            for: alice, secret: .password("pw"), saved: saved, storePath: nil, runsUntilStopped: false)
        #expect(fromSaved.host == "10.0.0.1")
        #expect(fromSaved.port == 5223)
        #expect(fromSaved.tls == pinned)

        var options = GlobalOptions()
        options.server = ServerAddress(host: "xmpp.example.com")
        options.tls = .insecureAcceptAny
        options.resource = "cli"
        let overridden = options.configuration(
            for: alice, secret: .password("pw"), saved: saved, storePath: nil, runsUntilStopped: false)
        #expect(overridden.host == "xmpp.example.com")
        #expect(overridden.port == 5222, "a server without a port means the default port, not the saved one")
        #expect(overridden.tls == .insecureAcceptAny)
        #expect(overridden.resource == "cli")
    }

    @Test func timeoutIsTheWaitForOneShotCommandsAndCappedForLongRunningOnes() {
        var options = GlobalOptions()
        options.timeout = .seconds(60)
        let oneShot = options.configuration(
            for: alice, secret: .password("pw"), saved: nil, storePath: nil, runsUntilStopped: false)
        #expect(oneShot.timeout == .seconds(60))
        let listening = options.configuration(
            for: alice, secret: .password("pw"), saved: nil, storePath: nil, runsUntilStopped: true)
        #expect(listening.timeout == GlobalOptions.defaultTimeout)
        #expect(listening.reconnect.isEnabled)
        #expect(listening.joinsBookmarkedRooms)
        options.timeout = .seconds(2)
        #expect(
            options.configuration(for: alice, secret: .password("pw"), saved: nil, storePath: nil, runsUntilStopped: true)
                .timeout == .seconds(2))
    }

    @Test func loginSavesTheServerItUsedAndLeavesTheDefaultPortOut() {
        var configuration = ClientConfiguration(jid: alice, secret: .password("pw"))
        configuration.host = "127.0.0.1"
        configuration.port = 40000
        configuration.tls = pinned
        let login = SavedLogin(mechanism: .scramSHA256, keys: keys)
        let credentials = SavedCredentials(configuration: configuration, login: login)
        #expect(credentials == SavedCredentials(
            jid: alice, mechanism: .scramSHA256, keys: keys, host: "127.0.0.1", port: 40000, tls: pinned,
            userAgentID: configuration.userAgentID))
        configuration.port = 5222
        configuration.host = nil
        #expect(SavedCredentials(configuration: configuration, login: login).port == nil)
        #expect(SavedCredentials(configuration: configuration, login: login).host == nil)
    }

    @Test func theFASTTokenIsSavedWithTheUserAgentItWasIssuedTo() {
        let token = FASTToken(token: "t", mechanism: .sha256Exporter, expiry: Date(timeIntervalSince1970: 2e9))
        let configuration = ClientConfiguration(jid: alice, secret: .password("pw"))
        let credentials = SavedCredentials(
            configuration: configuration, login: SavedLogin(mechanism: .scramSHA256, keys: keys, fastToken: token))
        #expect(credentials.fastToken == token)
        #expect(credentials.userAgentID == configuration.userAgentID)
        // The next command logs in as the same user agent, under a Bind 2
        // tag of its own, so that it does not replace another's session.
        let next = GlobalOptions().configuration(
            for: alice, secret: .password("pw"), saved: credentials, storePath: nil, runsUntilStopped: false)
        let other = GlobalOptions().configuration(
            for: alice, secret: .password("pw"), saved: credentials, storePath: nil, runsUntilStopped: false)
        #expect(next.userAgentID == configuration.userAgentID)
        #expect(next.bindTag.hasPrefix("swiftlet-") && next.bindTag != other.bindTag)
        // A file from before SASL2 has no id: each run makes one up.
        let old = GlobalOptions().configuration(
            for: alice, secret: .password("pw"), saved: saved, storePath: nil, runsUntilStopped: false)
        #expect(old.userAgentID != configuration.userAgentID)
    }
}
