import Foundation
import Glibc
import CSystem
import Synchronization

/// A child process for live tests, started at once: its standard output and
/// standard error are collected (interleaved) while it runs, so a chatty
/// child never blocks on a full pipe and a test can wait for a line it
/// prints; its standard input is a pipe given `input` and then closed, so
/// a child never reads the test's terminal.
///
/// Only the process this object started is ever signalled, and one still
/// running when the object goes away is killed.
public final class ChildProcess {
    /// How a finished (or killed) process ended.
    public struct Outcome {
        /// The exit status, or the signal that ended it.
        public var status: Int32
        /// Whether `wait(timeout:)` had to end it.
        public var timedOut: Bool
        /// Standard output and standard error, interleaved.
        public var output: String
    }

    /// The repository root (two levels above this file's directory),
    /// where the tools and the default build directory are.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path of the executable `name` that `swift test` built next to
    /// the test bundle (or in `.build/debug`).
    /// - Throws: `TestFailure` when there is none.
    public static func builtExecutable(_ name: String) throws -> String {
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent(name).path,
            repositoryRoot.appendingPathComponent(".build/debug/\(name)").path,
        ].compactMap { $0 }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestFailure("no \(name) executable at \(candidates); run swift build")
        }
        return found
    }

    /// The longest the output may stay open after the process has exited
    /// (only a grandchild holding the pipe could keep it open), and the
    /// longest a child may take to end after `SIGTERM`.
    public static let grace = DispatchTimeInterval.seconds(5)

    private let pid: pid_t
    private let state = ExitState()
    private let collected = OutputBuffer()
    private let exited = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)
    /// Whether `exited` was consumed (it is signalled once).
    private var reaped = false
    /// Whether `drained` was consumed: the whole output is in.
    private var outputClosed = false

    /// Starts `executable` with `arguments` and this process's environment.
    ///
    /// Spawned with `posix_spawn` rather than Foundation's `Process`, whose
    /// `run()` on Linux (6.3) sometimes reads past a directory buffer while
    /// listing the descriptors to close and crashes the test process.
    /// - Parameters:
    ///   - input: Written to the child's standard input, which is then closed.
    ///   - directory: The working directory; the test's when `nil`.
    /// - Throws: If the executable cannot be started.
    public init(_ executable: String, _ arguments: [String], input: String = "", directory: URL? = nil) throws {
        var output: [Int32] = [0, 0]
        var standardInput: [Int32] = [0, 0]
        // No other child gets these: each spawn closes all but 0, 1 and 2.
        guard pipe(&output) == 0 else { throw TestFailure("pipe: errno \(errno)") }
        guard pipe(&standardInput) == 0 else {
            close(output[0])
            close(output[1])
            throw TestFailure("pipe: errno \(errno)")
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = directory.map { swiftlet_spawn(executable, argv, standardInput[0], output[1], $0.path) }
            ?? swiftlet_spawn(executable, argv, standardInput[0], output[1], nil)
        let spawnError = errno
        close(output[1])
        close(standardInput[0])
        guard spawned > 0 else {
            close(output[0])
            close(standardInput[1])
            throw TestFailure("cannot start \(executable): errno \(spawnError)")
        }
        pid = spawned
        Self.write(Array(input.utf8), to: standardInput[1])
        close(standardInput[1])
        let (collected, drained, exited, state) = (self.collected, self.drained, self.exited, self.state)
        let reader = output[0]
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                collected.append(Data(buffer[..<count]))
            }
            close(reader)
            drained.signal()
        }
        Thread.detachNewThread {
            // Waited for without reaping first, so that the pid stays this
            // child's until `state` says it has exited: `kill()` never
            // signals a pid another process may have by then.
            var info = siginfo_t()
            while waitid(P_PID, id_t(spawned), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
            state.status.withLock { result in
                var status: Int32 = 0
                while waitpid(spawned, &status, 0) < 0, errno == EINTR {}
                // Exited: the code in bits 8-15; killed: the signal in 0-6.
                result = status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
            }
            exited.signal()
        }
    }

    deinit {
        if !reaped { kill() }
    }

    /// Everything the child printed so far.
    public var output: String { collected.text }

    /// Waits until a line of output contains `text`, for at most `timeout`
    /// seconds; returns that line.
    /// - Throws: `TestFailure`, with the output, if the child exits or the
    ///   time runs out first.
    public func waitForLine(containing text: String, timeout: Double) throws -> String {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let line = output.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            guard isRunning else { throw TestFailure("the child exited before printing '\(text)':\n\(output)") }
            guard Date() < deadline else { throw TestFailure("no line with '\(text)' within \(timeout) s:\n\(output)") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Waits for the child to exit, ending it with `SIGTERM` after `timeout`
    /// seconds (and `SIGKILL` if that is not enough within
    /// `grace`); returns how it ended.
    public func wait(timeout: Double) -> Outcome {
        let timedOut = exited.wait(timeout: .now() + timeout) == .timedOut
        guard timedOut else {
            reaped = true
            return finish(timedOut: false)
        }
        signal(SIGTERM)
        if exited.wait(timeout: .now() + Self.grace) == .success {
            reaped = true
        } else {
            kill()
        }
        return finish(timedOut: true)
    }

    /// Kills the child with `SIGKILL` (no chance to clean up, as in a power
    /// cut) unless it has exited already, and waits until it is gone;
    /// returns how it ended.
    ///
    /// The corresponding C function is `kill`.
    @discardableResult
    public func kill() -> Outcome {
        if !reaped {
            signal(SIGKILL)
            exited.wait()
            reaped = true
        }
        return finish(timedOut: false)
    }

    /// Whether the child has not exited yet.
    private var isRunning: Bool { state.status.withLock { $0 == nil } }

    /// Sends `signal` to the child unless it has exited (and may have been
    /// reaped, its pid free for another process).
    private func signal(_ signal: Int32) {
        state.status.withLock { status in
            if status == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// The outcome once the child has exited and its output is read.
    private func finish(timedOut: Bool) -> Outcome {
        if !outputClosed {
            outputClosed = drained.wait(timeout: .now() + Self.grace) == .success
        }
        return Outcome(status: state.status.withLock { $0 } ?? -1, timedOut: timedOut, output: output)
    }

    /// Writes all of `bytes` to `fd`, giving up if the child stops reading
    /// (its end closed).
    private static func write(_ bytes: [UInt8], to fd: Int32) {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            written += count
        }
    }
}

/// How the child ended; set by the thread that waits for it, read by the
/// test's.
private final class ExitState: Sendable {
    /// The exit status, or the signal that ended it; nil while it runs.
    let status = Mutex<Int32?>(nil)
}

/// The bytes a child printed; appended by the reading thread, read by the
/// test's.
private final class OutputBuffer: Sendable {
    private let data = Mutex(Data())

    func append(_ bytes: Data) {
        data.withLock { $0.append(bytes) }
    }

    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
