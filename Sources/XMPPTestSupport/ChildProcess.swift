import Foundation
import Glibc
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

    private let process = Process()
    private let collected = OutputBuffer()
    private let exited = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)
    /// Whether `exited` was consumed (it is signalled once).
    private var reaped = false
    /// Whether `drained` was consumed: the whole output is in.
    private var outputClosed = false

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - input: Written to the child's standard input, which is then closed.
    ///   - directory: The working directory; the test's when `nil`.
    /// - Throws: If the executable cannot be started.
    public init(_ executable: String, _ arguments: [String], input: String = "", directory: URL? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = standardInput
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let writer = standardInput.fileHandleForWriting
        writer.write(Data(input.utf8))
        try? writer.close()
        let reader = output.fileHandleForReading
        let collected = self.collected
        let drained = self.drained
        Thread.detachNewThread {
            while case let data = reader.availableData, !data.isEmpty {
                collected.append(data)
            }
            drained.signal()
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
            guard process.isRunning else { throw TestFailure("the child exited before printing '\(text)':\n\(output)") }
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
        process.terminate()
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
    /// Once Foundation has reaped a child, `isRunning` is false and its
    /// pid may belong to another process: that one is never signalled.
    ///
    /// The corresponding C function is `kill`.
    @discardableResult
    public func kill() -> Outcome {
        if !reaped {
            if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
            exited.wait()
            reaped = true
        }
        return finish(timedOut: false)
    }

    /// The outcome once the child has exited and its output is read.
    private func finish(timedOut: Bool) -> Outcome {
        if !outputClosed {
            outputClosed = drained.wait(timeout: .now() + Self.grace) == .success
        }
        return Outcome(status: process.terminationStatus, timedOut: timedOut, output: output)
    }
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
