import Dispatch
import Synchronization
import XMPPCore

extension Server {
    /// How long a control request may take on the loop (an account
    /// deletion waits for storage) before its client hears of a timeout.
    static let controlAnswerTimeout = DispatchTimeInterval.seconds(30)

    /// Opens the control socket for the admin commands (`ControlSocket`).
    func startControlSocket() throws -> ControlSocket {
        try ControlSocket(dataDirectory: config.dataDirectory) { [self] command in answer(command) }
    }

    /// Carries out `command` on the loop and waits for the outcome; runs on
    /// the control socket's thread.
    private func answer(_ command: ControlCommand) -> String {
        let answer = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let finish = { @Sendable (text: String) in
            answer.withLock { $0 = text }
            done.signal()
        }
        loop.execute { [self] in
            switch command {
            case .deleteAccount(let username):
                context.deleteAccount(username) { result in
                    switch result {
                    case .success(true): finish("ok")
                    case .success(false): finish("error no account \(username)@\(self.context.domain)")
                    case .failure(let error): finish("error \(error)")
                    }
                }
            case .revokeSessions(let username):
                context.revokeSessions(of: username, because: "the password was changed")
                finish("ok")
            }
            log.notice("control: \(command.line)")
        }
        guard done.wait(timeout: .now() + Self.controlAnswerTimeout) == .success else {
            return "error the server did not answer in time"
        }
        return answer.withLock { $0 } ?? "error no answer"
    }
}
