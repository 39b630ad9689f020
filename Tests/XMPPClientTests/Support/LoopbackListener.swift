import Glibc
import XMPPCore
import XMPPNet
import XMPPTestSupport

/// A blocking listener on 127.0.0.1 and an ephemeral port, standing in for
/// a server that writes whatever a test tells it to.
final class LoopbackListener {
    let fd: Int32
    let address: SocketAddress

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var storage = sockaddr_in()
        storage.sin_family = sa_family_t(AF_INET)
        storage.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0 && listen(fd, 1) == 0
            }
        }
        guard listening, let address = SocketAddress("127.0.0.1:\(UInt16(bigEndian: storage.sin_port))") else {
            close(fd)
            throw TestFailure("cannot listen on 127.0.0.1")
        }
        self.fd = fd
        self.address = address
    }

    deinit { close(fd) }

    /// The next connection, with Nagle off so each write is a segment;
    /// waits at most `timeout` seconds, so a client that never connects
    /// fails the test instead of hanging it.
    ///
    /// The corresponding C functions are `poll` and `accept`.
    func accept(timeout: Int32 = 10) throws -> Int32 {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeout * 1000) == 1 else {
            throw TestFailure("no connection to \(address) within \(timeout) s")
        }
        let peer = Glibc.accept(fd, nil, nil)
        guard peer >= 0 else { throw TestFailure("accept: \(String(cString: strerror(errno)))") }
        var noDelay: Int32 = 1
        _ = setsockopt(peer, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return peer
    }

    /// Writes all of `bytes` to the connected socket `fd`.
    static func write(_ bytes: some Collection<UInt8>, to fd: Int32) throws {
        let bytes = Array(bytes)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw TestFailure("send: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// Plays the server's side of the handshake over the blocking socket
    /// `fd` until it completes or the client goes away.
    static func answerHandshake(_ server: TLSSession, on fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while !server.isHandshakeComplete {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0, (try? server.receive(ciphertext: Array(buffer[..<count]))) != nil,
                (try? write(server.takeOutput(), to: fd)) != nil
            else { return }
        }
    }
}
