import CommandLineSupport
import XMPPClient
import XMPPCore

/// `roster list|add|remove|accept|reject`, each on a connection of its own,
/// unseen.
enum RosterCommands {
    /// `roster list [--json]`: the contacts, as the server has them.
    static func list(_ context: Context) async throws {
        let client = try context.savedClient()
        let (contacts, _) = try await context.withConnection(client) { await $0.roster }
        let json = context.invocation.flag("--json")
        for contact in contacts { Console.print(json ? contact.json.line : contact.line) }
    }

    /// `roster add JID [--name NAME] [--group GROUP]...`
    static func add(_ context: Context) async throws {
        let invocation = context.invocation
        let contact = try invocation.jid(at: 0).bare
        let client = try context.savedClient()
        _ = try await context.withConnection(client) {
            try await $0.addContact(contact, name: invocation.value("--name"), groups: invocation.values("--group"))
        }
        Console.print("added \(contact) and asked to see their presence")
    }

    /// `roster remove JID`
    static func remove(_ context: Context) async throws {
        let contact = try context.invocation.jid(at: 0).bare
        let client = try context.savedClient()
        _ = try await context.withConnection(client) { try await $0.removeContact(contact) }
        Console.print("removed \(contact)")
    }

    /// `roster accept JID [--no-subscribe-back]`
    static func accept(_ context: Context) async throws {
        let contact = try context.invocation.jid(at: 0).bare
        let subscribeBack = !context.invocation.flag("--no-subscribe-back")
        let client = try context.savedClient()
        _ = try await context.withConnection(client) {
            try await $0.acceptSubscription(from: contact, subscribeBack: subscribeBack)
        }
        Console.print("\(contact) may see your presence")
    }

    /// `roster reject JID`
    static func reject(_ context: Context) async throws {
        let contact = try context.invocation.jid(at: 0).bare
        let client = try context.savedClient()
        _ = try await context.withConnection(client) { try await $0.rejectSubscription(from: contact) }
        Console.print("\(contact) may not see your presence")
    }
}
