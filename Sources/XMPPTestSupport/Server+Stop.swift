import Foundation
import XMPPServer

extension Server {
    /// Shuts the server down and waits at most `timeout` for it to stop;
    /// returns whether it did, so a test can report a server that hangs.
    public func stop(within timeout: DispatchTimeInterval) -> Bool {
        shutdown()
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            waitUntilStopped()
            stopped.signal()
        }
        return stopped.wait(timeout: .now() + timeout) == .success
    }
}
