import CommandLineSupport
import Foundation
import TerminalSupport
import XMPPClient
import XMPPCore

/// `register`, `login`, `passwd`, `unregister`: the account on the server
/// and its saved login.
enum AccountCommands {
    /// `register JID`: creates the account, then logs in as `login` does.
    static func register(_ context: Context) async throws {
        let jid = try context.invocation.jid(at: 0, account: true)
        let password = try PasswordInput.read(confirm: true)
        let client = try context.client(for: jid, secret: .password(password), saved: nil)
        Console.progress("registering \(jid)…")
        try await client.register(username: jid.localpart ?? "", password: password)
        Console.print("registered \(jid)")
        try await saveLogin(client, context)
    }

    /// `login JID`: logs in with the password and saves the login. The
    /// server and TLS policy of an earlier login stay unless overridden.
    static func login(_ context: Context) async throws {
        let jid = try context.invocation.jid(at: 0, account: true)
        let earlier = try? context.home.credentials(for: jid)
        let password = try PasswordInput.read(confirm: false)
        let client = try context.client(for: jid, secret: .password(password), saved: earlier)
        try await saveLogin(client, context)
    }

    /// `passwd`: changes the password, then saves a login with the new one.
    static func changePassword(_ context: Context) async throws {
        let client = try context.savedClient()
        let password = try PasswordInput.read(prompt: "New password: ", confirm: true)
        _ = try await context.withConnection(client) { try await $0.changePassword(to: password) }
        Console.print("password changed for \(client.configuration.jid)")
        // The client now holds the new password: a second login derives
        // the keys to save.
        try await saveLogin(client, context)
    }

    /// `unregister --yes`: deletes the account on the server and its saved
    /// login; the archive stays.
    static func unregister(_ context: Context) async throws {
        guard context.invocation.flag("--yes") else {
            throw CommandFailure.usage("unregister deletes the account on the server; add --yes to do it")
        }
        let client = try context.savedClient()
        let account = client.configuration.jid
        try await context.connect(client)
        do {
            // It disconnects when done: the server may close the stream as
            // soon as the account is gone.
            try await client.deleteAccount()
        } catch {
            await client.disconnect()
            throw error
        }
        try? FileManager.default.removeItem(atPath: context.home.credentialsPath(for: account))
        Console.print("deleted \(account) on the server")
    }

    /// Logs in with `client` (which has the password) and saves what the
    /// SCRAM login leaves, with the server and TLS policy it used.
    private static func saveLogin(_ client: XMPPClient, _ context: Context) async throws {
        let (login, _) = try await context.withConnection(client) { await $0.savedLogin }
        guard let login else {
            throw CommandFailure(.refused, "the server offers no SCRAM login, so there are no keys to save")
        }
        let path = context.home.credentialsPath(for: client.configuration.jid)
        try SavedCredentials(configuration: client.configuration, login: login).write(to: path)
        Console.print("saved the login of \(client.configuration.jid) to \(path)")
    }
}
