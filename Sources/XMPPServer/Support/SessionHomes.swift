import XMPPNet

/// Which loop each account's client sessions live on when the server runs
/// several (`threads`): one chosen by the username, the same for all of
/// the account's TCP sessions. Whatever happens between them then stays
/// on one thread, as with one loop: stream resumption finds the session it
/// resumes (XEP-0198), a resource replaces another, and what the user's
/// resources tell each other (presence, carbons) keeps its order.
///
/// A connection is accepted on any loop (in turn) and moves to its
/// account's once it has authenticated (`ClientSession.moveHome`).
/// WebSocket sessions stay with the HTTP server on the first loop.
///
/// `@unchecked Sendable`: the homes are set once, by the server, before
/// any connection is accepted, and only read afterwards.
final class SessionHomes: @unchecked Sendable {
    /// A loop's context and the connections it serves.
    struct Home {
        let context: ServerContext
        let connections: ConnectionTable
    }

    /// One per loop, in the server's order; empty on a server (or test)
    /// that does not move sessions.
    private(set) var homes: [Home] = []

    /// Sets the loops' homes; call once, before connections arrive.
    func install(_ homes: [Home]) {
        precondition(self.homes.isEmpty, "the homes are set once")
        self.homes = homes
    }

    /// The home of `username`'s sessions; nil with fewer than two loops.
    func home(of username: String) -> Home? {
        guard homes.count > 1 else { return nil }
        // FNV-1a: stable from run to run (unlike `hashValue`), which lets
        // tests choose names that land on every loop.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in username.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return homes[Int(hash % UInt64(homes.count))]
    }

    /// The home of the loop `context` serves.
    func home(of context: ServerContext) -> Home? {
        homes.first { $0.context === context }
    }
}
