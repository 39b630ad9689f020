import Dispatch
import Glibc
import Testing

@testable import XMPPNet

/// A test ran past its deadline waiting for the loop.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out: \(what)" }
}

/// A value shared between the loop thread and the test thread.
///
/// `@unchecked Sendable`: `value` is read and written only under `lock`.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func mutate<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&stored) }
    }
}

/// Starts a loop on its own thread for the duration of `body`, then stops it
/// and waits for the thread to end.
func withRunningLoop<Result>(_ body: (EventLoop) throws -> Result) throws -> Result {
    let loop = try EventLoop.start(name: "test-loop")
    defer { loop.stopAndWait() }
    return try body(loop)
}

/// Runs `work` on `loop` and waits, at most `timeout`, for its result.
func onLoop<T: Sendable>(
    _ loop: EventLoop, timeout: Duration = .seconds(10), _ work: @escaping @Sendable () throws -> T
) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    loop.execute {
        result.mutate { $0 = Result { try work() } }
        done.signal()
    }
    guard done.wait(timeout: .now() + timeout.timeInterval) == .success else {
        throw TimedOut(what: "work posted to the loop")
    }
    return try result.value!.get()
}

/// Polls `probe` about every millisecond until it returns a value or
/// `timeout` passes (nil then).
func waitFor<T>(timeout: Duration = .seconds(10), _ probe: () throws -> T?) rethrows -> T? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let value = try probe() { return value }
        usleep(1000)
    }
    return try probe()
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
    try waitFor(timeout: timeout) { try condition() ? true : nil } ?? false
}

extension Duration {
    var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// What a connection reported, readable from the test thread.
final class Recording: Sendable {
    let bytes = Locked<[UInt8]>([])
    let closes = Locked<[IOError?]>([])
    /// The connection's unsent byte count when the first read arrived.
    let bufferedAtFirstRead = Locked<Int?>(nil)
    let drains = Locked(0)

    var text: String { String(decoding: bytes.value, as: UTF8.self) }
    /// The number of bytes received, without copying them (holding a copy
    /// while the loop appends would make every append copy megabytes).
    var byteCount: Int { bytes.mutate { $0.count } }

    /// Whether the bytes received are `chunk` repeated `times` times
    /// (compared with memcmp: element-wise loops are slow in debug builds).
    func received(_ chunk: [UInt8], times: Int) -> Bool {
        bytes.mutate { bytes in
            bytes.count == chunk.count * times
                && bytes.withUnsafeBytes { all in
                    chunk.withUnsafeBytes { one in
                        (0..<times).allSatisfy {
                            memcmp(all.baseAddress! + $0 * one.count, one.baseAddress!, one.count) == 0
                        }
                    }
                }
        }
    }
}

/// A handler that records into a `Recording`; optionally echoes.
final class RecordingHandler: ByteTransportDelegate {
    let recording: Recording
    weak var connection: TCPConnection?
    let echo: Bool

    init(_ recording: Recording, connection: TCPConnection, echo: Bool = false) {
        self.recording = recording
        self.connection = connection
        self.echo = echo
    }

    func didRead(bytes: UnsafeRawBufferPointer) {
        let buffered = connection?.bufferedByteCount ?? -1
        recording.bufferedAtFirstRead.mutate { $0 = $0 ?? buffered }
        recording.bytes.mutate { $0.append(contentsOf: bytes) }
        if echo { connection?.write(bytes) }
    }

    func didDrain() {
        recording.drains.mutate { $0 += 1 }
    }

    func didClose(error: IOError?) {
        recording.closes.mutate { $0.append(error) }
    }
}

/// One client connection to one server connection over loopback, both on
/// `loop`, each with a `RecordingHandler`.
struct ConnectedPair: Sendable {
    let server: LoopBound<TCPConnection>
    let client: LoopBound<TCPConnection>
    let serverRecording: Recording
    let clientRecording: Recording

    /// Listens on an ephemeral port of `ip`, connects to it, and waits for both ends.
    static func make(
        on loop: EventLoop, ip: String = "127.0.0.1", echo: Bool = false,
        serverOptions: TCPConnection.Options = TCPConnection.Options()
    ) throws -> ConnectedPair {
        let serverRecording = Recording()
        let clientRecording = Recording()
        let accepted = Locked<LoopBound<TCPConnection>?>(nil)
        let connected = Locked<Result<LoopBound<TCPConnection>, IOError>?>(nil)
        try onLoop(loop) {
            var listener: TCPListener?
            listener = try TCPListener(
                address: SocketAddress(ip: ip, port: 0)!, connectionOptions: serverOptions, on: loop
            ) { connection in
                connection.handler = RecordingHandler(serverRecording, connection: connection, echo: echo)
                accepted.mutate { $0 = LoopBound(connection, on: loop) }
                listener?.close()  // one connection per pair
            }
            TCPConnection.connect(to: listener!.localAddress, on: loop) { result in
                connected.mutate {
                    $0 = result.map { connection in
                        connection.handler = RecordingHandler(clientRecording, connection: connection)
                        return LoopBound(connection, on: loop)
                    }
                }
            }
        }
        guard let client = try waitFor({ try connected.value?.get() }) else { throw TimedOut(what: "connect") }
        guard let server = waitFor({ accepted.value }) else { throw TimedOut(what: "accept") }
        return ConnectedPair(
            server: server, client: client, serverRecording: serverRecording, clientRecording: clientRecording)
    }
}

/// `count` bytes of a pattern with period 251 (a prime, so it does not line
/// up with buffer sizes): lost, repeated or reordered chunks show.
func pattern(_ count: Int) -> [UInt8] {
    let cycle = (0..<251).map { UInt8($0) }
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + cycle.count)
    while bytes.count < count { bytes.append(contentsOf: cycle) }
    return Array(bytes.prefix(count))
}

/// Bytes waiting unread in the socket's receive queue (peeks at up to 64).
func unreadBytes(_ connection: TCPConnection) -> Int {
    var scratch = [UInt8](repeating: 0, count: 64)
    let count = recv(connection.fd, &scratch, scratch.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
    return max(count, 0)
}
