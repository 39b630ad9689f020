import CommandLineSupport
import Foundation
import XMPPClient
import XMPPCore

/// What every command works with: its invocation, the home directory, and
/// how to make and connect a client from them.
struct Context {
    let invocation: Invocation
    let home: SwiftletHome

    init(_ invocation: Invocation) {
        self.invocation = invocation
        home = SwiftletHome(option: invocation.global.home, environment: ProcessInfo.processInfo.environment)
    }

    var global: GlobalOptions { invocation.global }

    /// A client for `jid` with `secret`, the server and TLS policy of the
    /// options else of `saved`, and the archive in the home directory.
    func client(for jid: JID, secret: ClientSecret, saved: SavedCredentials?) throws -> XMPPClient {
        try home.create()
        return try XMPPClient(
            configuration: global.configuration(
                for: jid, secret: secret, saved: saved, storePath: home.archivePath,
                runsUntilStopped: invocation.command.runsUntilStopped))
    }

    /// A client for the account of `--account` (or the one logged in
    /// last) with its saved login.
    /// - Throws: `CommandFailure` with `.noAccount` when there is none.
    func savedClient() throws -> XMPPClient {
        let account = try home.account(option: global.account)
        let saved = try home.credentials(for: account)
        let login = SavedLogin(mechanism: saved.mechanism, keys: saved.keys, fastToken: saved.fastToken)
        return try client(for: account, secret: .saved(login), saved: saved)
    }

    /// Connects and logs in, showing progress on a terminal.
    ///
    /// - Parameter presence: What to show contacts; `nil` connects unseen
    ///   (initial presence `unavailable`), so that contacts do not see the
    ///   account come and go, and messages keep waiting on the server for
    ///   the next `listen` or `chat` (RFC 6121 §8.5.2: a message to the
    ///   bare JID goes to available resources, else to offline storage).
    /// - Throws: the client's error; a refused saved login says how to
    ///   log in again.
    func connect(_ client: XMPPClient, presence: ShownPresence? = nil) async throws {
        let configuration = client.configuration
        let presence = presence ?? ShownPresence(availability: .unavailable)
        await client.setPresence(presence.availability, status: presence.status, priority: presence.priority)
        let server = ServerAddress(host: configuration.host ?? configuration.jid.domainpart, port: configuration.port)
        Console.progress("connecting to \(server) as \(configuration.jid)…")
        do {
            try await client.connect()
        } catch {
            guard error == .notAuthorized, case .saved = configuration.secret else { throw error }
            let account = configuration.jid
            throw CommandFailure(
                .notAuthorized,
                "the server refused the saved login of \(account) (was the password changed?); "
                    + "run 'swiftlet login \(account)'")
        }
        if let jid = await client.boundJID { Console.progress("connected as \(jid)") }
        if global.verbose, let details = await client.loginDetails { Console.note("logged in with \(details)") }
        if case .saved(let login) = configuration.secret { try await saveToken(of: client, replacing: login) }
    }

    /// Saves the FAST token the login left when it is not the one saved:
    /// the server issued or rotated one, or refused the saved one.
    private func saveToken(of client: XMPPClient, replacing saved: SavedLogin) async throws {
        guard let login = await client.savedLogin, login.fastToken != saved.fastToken else { return }
        let path = home.credentialsPath(for: client.configuration.jid)
        let credentials = try SavedCredentials.read(from: path)
        try SavedCredentials(
            jid: credentials.jid, mechanism: credentials.mechanism, keys: credentials.keys, host: credentials.host,
            port: credentials.port, tls: credentials.tls, fastToken: login.fastToken,
            userAgentID: client.configuration.userAgentID
        ).write(to: path)
    }

    /// Connects unseen, runs `body`, pings the server, disconnects, and
    /// returns `body`'s result with every event published meanwhile: the
    /// ping's answer comes after the server has handled all that `body`
    /// sent, so a bounce of a message sent in `body` is among them.
    func withConnection<T>(
        _ client: XMPPClient, _ body: (XMPPClient) async throws -> T
    ) async throws -> (result: T, events: [ClientEvent]) {
        let events = client.events()
        try await connect(client)
        let result: T
        do {
            result = try await body(client)
            try await Self.roundTrip(client)
        } catch {
            await client.disconnect()
            throw error
        }
        await client.disconnect()
        var seen: [ClientEvent] = []
        for await event in events {
            seen.append(event)
            if case .connectionState(.disconnected) = event { break }
        }
        return (result, seen)
    }

    /// Waits for the server to answer a ping; an error answer (a server
    /// without XEP-0199) comes in order too.
    private static func roundTrip(_ client: XMPPClient) async throws {
        do {
            try await client.ping()
        } catch {
            guard case .stanzaError = error else { throw error }
        }
    }

    /// The presence a command shows while connected.
    struct ShownPresence {
        var availability: Availability
        var status: String? = nil
        var priority: Int8 = 0
    }
}
