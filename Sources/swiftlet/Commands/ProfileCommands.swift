import CommandLineSupport
import Foundation
import XMPPClient
import XMPPCore

/// `profile`, `set-profile`, `block`, `unblock` and `blocklist`: what
/// others see of you, and whom you keep out.
enum ProfileCommands {
    /// `profile JID [--json]`
    static func show(_ context: Context) async throws {
        let jid = try context.invocation.jid(at: 0).bare
        let client = try context.savedClient()
        let (profile, _) = try await context.withConnection(client) { try await $0.profile(of: jid) }
        Console.print(context.invocation.flag("--json") ? profile.json.line : profile.lines)
    }

    /// `set-profile [--name NAME] [--nickname NICK] [--email ADDRESS] [--avatar PATH]`
    static func set(_ context: Context) async throws {
        let invocation = context.invocation
        var avatar: Profile.Avatar?
        if let path = invocation.value("--avatar") {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(.badData, "cannot read \(path)")
            }
            avatar = Profile.Avatar(data: Array(data), type: XMPPClient.mediaType(ofFileNamed: path))
        }
        let profile = Profile(
            fullName: invocation.value("--name"), nickname: invocation.value("--nickname"),
            email: invocation.value("--email"), avatar: avatar)
        let client = try context.savedClient()
        _ = try await context.withConnection(client) { try await $0.setProfile(profile) }
        Console.print("profile published" + (avatar.map { " with avatar \($0.hash)" } ?? ""))
    }

    /// `block JID`
    static func block(_ context: Context) async throws {
        let jid = try context.invocation.jid(at: 0).bare
        let client = try context.savedClient()
        _ = try await context.withConnection(client) { try await $0.block(jid) }
        Console.print("blocked \(jid)")
    }

    /// `unblock JID`
    static func unblock(_ context: Context) async throws {
        let jid = try context.invocation.jid(at: 0).bare
        let client = try context.savedClient()
        _ = try await context.withConnection(client) { try await $0.unblock(jid) }
        Console.print("unblocked \(jid)")
    }

    /// `blocklist`
    static func blocklist(_ context: Context) async throws {
        let client = try context.savedClient()
        let (jids, _) = try await context.withConnection(client) { try await $0.blocklist() }
        for jid in jids { Console.print(jid.description) }
    }
}
