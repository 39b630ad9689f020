import CommandLineSupport
import Foundation
import TerminalSupport
import XMPPCore

/// `swiftlet`: an XMPP client for the command line. This target only reads
/// the command line, runs the command with XMPPClient and turns its
/// failure into a message and an exit status; the parsing, formats and
/// error mapping are in CommandLineSupport.

let status: ExitStatus
do {
    switch try CommandLineParser.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help(let text):
        Console.print(text)
    case .version:
        Console.print("swiftlet \(Swiftlet.version)")
    case .run(let invocation):
        try await run(invocation)
    }
    status = .success
} catch {
    let failure = CommandFailure(error)
    Console.error(failure.message)
    status = failure.status
}
exit(status.rawValue)

/// Runs one command.
func run(_ invocation: Invocation) async throws {
    let context = Context(invocation)
    switch invocation.command {
    case .register: try await AccountCommands.register(context)
    case .login: try await AccountCommands.login(context)
    case .passwd: try await AccountCommands.changePassword(context)
    case .unregister: try await AccountCommands.unregister(context)
    case .send: try await MessageCommands.send(context)
    case .sendFile: try await MessageCommands.sendFile(context)
    case .chat: try await MessageCommands.chat(context)
    case .listen: try await ListenCommand.listen(context, presence: nil)
    case .presence: try await ListenCommand.presence(context)
    case .rosterList: try await RosterCommands.list(context)
    case .rosterAdd: try await RosterCommands.add(context)
    case .rosterRemove: try await RosterCommands.remove(context)
    case .rosterAccept: try await RosterCommands.accept(context)
    case .rosterReject: try await RosterCommands.reject(context)
    case .history: try await ArchiveCommands.history(context)
    case .recent: try await ArchiveCommands.recent(context)
    case .profile: try await ProfileCommands.show(context)
    case .setProfile: try await ProfileCommands.set(context)
    case .block: try await ProfileCommands.block(context)
    case .unblock: try await ProfileCommands.unblock(context)
    case .blocklist: try await ProfileCommands.blocklist(context)
    case .roomList: try await RoomCommands.list(context)
    case .roomCreate: try await RoomCommands.create(context)
    case .roomJoin: try await RoomCommands.join(context)
    case .roomLeave: try await RoomCommands.leave(context)
    case .roomSend: try await RoomCommands.send(context)
    case .roomOccupants: try await RoomCommands.occupants(context)
    case .roomInvite: try await RoomCommands.invite(context)
    case .roomSubject: try await RoomCommands.subject(context)
    case .roomHistory: try await ArchiveCommands.roomHistory(context)
    case .roomKick: try await RoomCommands.kick(context)
    case .roomBan: try await RoomCommands.ban(context)
    }
}
