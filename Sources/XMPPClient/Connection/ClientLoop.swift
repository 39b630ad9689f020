import Synchronization
import XMPPNet

/// The one event loop thread that carries every client connection of the
/// process: started at the first connection, then kept. A client does
/// little I/O, so one thread serves any number of clients.
enum ClientLoop {
    private static let shared = Mutex<EventLoop?>(nil)

    /// The loop, started if needed.
    /// - Throws: `XMPPClientError.cannotConnect` if the thread or its epoll
    ///   instance cannot be created.
    static func get() throws(XMPPClientError) -> EventLoop {
        try shared.withLock { (loop: inout EventLoop?) throws(XMPPClientError) -> EventLoop in
            if let loop { return loop }
            do {
                let started = try EventLoop.start(name: "xmpp-client")
                loop = started
                return started
            } catch {
                throw .cannotConnect("cannot start the network thread: \(error)")
            }
        }
    }
}
