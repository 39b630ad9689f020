import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The running server's door for the admin commands of the same machine:
/// a Unix socket `control` in the data directory, mode 0600, so only the
/// user the server runs as (and root) can use it.
///
/// One request per connection: a line `COMMAND ARGUMENT`, answered with a
/// line `ok`, `ok MESSAGE` or `error MESSAGE`. The commands are the ones
/// `ControlCommand` lists. Requests are served one at a time on a thread of
/// their own, which hands each to the server's loop and waits for the
/// answer; a client gets `requestTimeout` to send its line.
final class ControlSocket: @unchecked Sendable {
    // @unchecked: `descriptor` is written before the thread starts and only
    // read afterwards (closing it is what stops the thread).
    /// The socket's file name inside the data directory.
    static let fileName = "control"
    /// How long a client may take to send its request line.
    static let requestTimeout: Duration = .seconds(5)
    /// The longest request line accepted.
    static let maxRequestLength = 4096

    let path: String
    private let descriptor: Int32
    private let handle: @Sendable (ControlCommand) -> String

    /// Listens at `<dataDirectory>/control`, replacing a socket a previous
    /// run left behind, and serves requests with `handle` (which runs on
    /// the accepting thread and must do its own hop to the loop).
    /// - Throws: `ServerStartError` if the socket cannot be made.
    init(dataDirectory: String, handle: @escaping @Sendable (ControlCommand) -> String) throws {
        path = (dataDirectory as NSString).appendingPathComponent(Self.fileName)
        self.handle = handle
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ServerStartError("cannot create the control socket: \(Self.lastError)") }
        unlink(path)
        // Restrict the file before listen(): nobody can connect before then.
        guard Self.withAddress(of: path, { bind(fd, $0, $1) }) == 0, chmod(path, 0o600) == 0, listen(fd, 8) == 0
        else {
            let error = Self.lastError
            Glibc.close(fd)
            throw ServerStartError("cannot listen on \(path): \(error)")
        }
        descriptor = fd
        let thread = Thread { [self] in serve() }
        thread.name = "swiftlet.control"
        thread.start()
    }

    /// Stops serving and removes the socket file.
    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))  // wakes the blocked accept
        unlink(path)
    }

    private func serve() {
        while true {
            let client = accept(descriptor, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                Glibc.close(descriptor)
                return
            }
            answer(client)
            Glibc.close(client)
        }
    }

    private func answer(_ client: Int32) {
        var timeout = timeval(tv_sec: Int(Self.requestTimeout.components.seconds), tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let reply: String
        if let line = Self.readLine(from: client) {
            reply = ControlCommand(line).map(handle) ?? "error unknown request"
        } else {
            reply = "error no request line"
        }
        Self.writeAll(Array((reply + "\n").utf8), to: client)
    }

    // MARK: - Client side

    /// Sends `command` to the server listening in `dataDirectory` and
    /// returns its answer line; `nil` when no server listens there.
    static func send(_ command: ControlCommand, dataDirectory: String, timeout: Duration = .seconds(60)) -> String? {
        let path = (dataDirectory as NSString).appendingPathComponent(fileName)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        guard withAddress(of: path, { connect(fd, $0, $1) }) == 0 else { return nil }
        var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        writeAll(Array((command.line + "\n").utf8), to: fd)
        return readLine(from: fd) ?? "error no answer from the server"
    }

    // MARK: - Bytes

    /// Reads up to a newline (not included), at most `maxRequestLength`
    /// bytes; nil on a timeout, an error or an overlong line.
    private static func readLine(from fd: Int32) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < maxRequestLength {
            let count = recv(fd, &byte, 1, 0)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return nil }
            if byte == 0x0A { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    private static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Calls `body` with a `sockaddr_un` for `path` and its length.
    private static func withAddress(
        of path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            errno = ENAMETOOLONG
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    private static var lastError: String { String(cString: strerror(errno)) }
}

/// A request to the running server over its `ControlSocket`.
enum ControlCommand: Equatable {
    /// Delete the account, as XEP-0077 removal does: sessions ended,
    /// contacts told, data and files gone.
    case deleteAccount(String)
    /// End every session of the account (its password was changed).
    case revokeSessions(String)

    /// Reads a request line; nil for anything else.
    init?(_ line: String) {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty else { return nil }
        switch parts[0] {
        case "deluser": self = .deleteAccount(parts[1])
        case "revoke": self = .revokeSessions(parts[1])
        default: return nil
        }
    }

    /// The request line, without its newline.
    var line: String {
        switch self {
        case .deleteAccount(let username): "deluser \(username)"
        case .revokeSessions(let username): "revoke \(username)"
        }
    }
}
