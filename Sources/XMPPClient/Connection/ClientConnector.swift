#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import XMPPNet

/// How a client reaches its server: opens the byte transport its XML
/// stream runs on. The kit's stream code (TLS, parsing, negotiation) sees
/// only the `ByteTransport`, so TCP (``TCPConnector``, the default), an
/// in-process test server, or another platform's networking each need
/// just a conformance here.
public protocol ClientConnector: Sendable {
    /// The loop the transports live on and their delegates are called on.
    /// - Throws: `XMPPClientError.cannotConnect` if it cannot be started.
    func loop() throws(XMPPClientError) -> any Loop

    /// Opens a transport to `host` and `port`, reporting to `delegate` from
    /// its first byte. Call on ``loop()``; `completion` runs there once,
    /// with the open transport or why there is none (`.cannotConnect`,
    /// `.timedOut`).
    func connect(
        host: String, port: UInt16, timeout: Duration, delegate: any ByteTransportDelegate,
        completion: @escaping (Result<any ByteTransport, XMPPClientError>) -> Void)
}

/// TCP on the client loop (`ClientLoop`): resolves the host (off the loop,
/// `getaddrinfo` blocks), then tries each address in turn until one answers.
public struct TCPConnector: ClientConnector {
    /// A connector for plain TCP.
    public init() {}

    public func loop() throws(XMPPClientError) -> any Loop {
        try ClientLoop.get()
    }

    public func connect(
        host: String, port: UInt16, timeout: Duration, delegate: any ByteTransportDelegate,
        completion: @escaping (Result<any ByteTransport, XMPPClientError>) -> Void
    ) {
        let loop: EventLoop
        do {
            loop = try ClientLoop.get()
        } catch {
            return completion(.failure(error))
        }
        let waiting = LoopBound((delegate, completion), on: loop)
        Task.detached {
            let resolved = Result { () throws(IOError) in try SocketAddress.resolve(host: host, port: port) }
            waiting.execute { delegate, completion in
                switch resolved {
                case .success(let addresses):
                    Self.attempt(
                        addresses[...], on: loop, timeout: timeout, delegate: delegate, completion: completion,
                        lastError: .cannotConnect("no address to connect to"))
                case .failure(let error):
                    completion(.failure(.cannotConnect(error.reason)))
                }
            }
        }
    }

    /// Connects to the first of `addresses` that answers.
    private static func attempt(
        _ addresses: ArraySlice<SocketAddress>, on loop: EventLoop, timeout: Duration,
        delegate: any ByteTransportDelegate,
        completion: @escaping (Result<any ByteTransport, XMPPClientError>) -> Void, lastError: XMPPClientError
    ) {
        guard let address = addresses.first else { return completion(.failure(lastError)) }
        TCPConnection.connect(to: address, on: loop, timeout: timeout) { result in
            switch result {
            case .success(let connection):
                let transport = TCPTransport(connection)
                transport.delegate = delegate
                completion(.success(transport))
            case .failure(let error):
                let failure: XMPPClientError =
                    error.errno == ETIMEDOUT ? .timedOut : .cannotConnect("\(address): \(error)")
                attempt(
                    addresses.dropFirst(), on: loop, timeout: timeout, delegate: delegate, completion: completion,
                    lastError: failure)
            }
        }
    }
}
