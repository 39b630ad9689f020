import Foundation
import Glibc
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPClient

/// STARTTLS in the client kit's transport: nothing the server (or someone
/// on the path) sends in plaintext after `<proceed/>` reaches the stream
/// that TLS secures.
@Suite(.timeLimit(.clientSuite))
struct StartTLSTests {
    @Test func plaintextAfterProceedFailsTheUpgrade() async throws {
        let listener = try LoopbackListener()
        let transport = try await StreamTransport.connect(
            host: listener.address.ipString, port: listener.address.port, timeout: .seconds(5), through: TCPConnector())
        defer { transport.close() }
        let peer = try listener.accept()
        defer { close(peer) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        // One segment: the stream header, <proceed/>, and an injected stanza.
        try LoopbackListener.write(
            Array(
                ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"
                    + "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"
                    + "<message from='bob@localhost/x'><body>injected</body></message>").utf8),
            to: peer)
        var reader = StreamReader(transport)
        guard case .streamOpen = try await reader.next() else { throw TestFailure("no stream header") }
        #expect(try await reader.nextElement().name == "proceed")

        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let serverContext = try TLSContext(configuration: .server(certificate: certificate.source))
        let handshakeOver = DispatchSemaphore(value: 0)
        Thread {
            LoopbackListener.answerHandshake(TLSSession(context: serverContext), on: peer)
            handshakeOver.signal()
        }.start()
        let trust = try TLSContext(configuration: .client(verification: .insecureAcceptAny))
        do throws(XMPPClientError) {
            do {
                try await transport.startTLS(trust, eventsRead: reader.eventsRead)
            } catch let error as XMPPClientError {
                throw error
            } catch {
                throw .tls("\(error)")
            }
            Issue.record("TLS started with plaintext after <proceed/>; next: \(try await reader.next())")
        } catch {
            #expect(error == .tls("the server sent plaintext after <proceed/>"))
        }
        handshakeOver.wait()
    }
}
