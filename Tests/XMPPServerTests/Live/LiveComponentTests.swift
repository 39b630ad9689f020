import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// The component listener on a real socket (`127.0.0.1:0`): a component
/// connects with its handshake, exchanges a message with a user, and its
/// disconnection is logged.
@Suite(.timeLimit(.minutes(1)))
struct LiveComponentTests {
    @Test func componentAndUserExchangeMessagesOverTCP() throws {
        try LiveServer.run(configure: { config in
            config.components.listen = [ListenAddress("127.0.0.1:0")!]
            config.components.services = [ServerConfig.Component(domain: "gw.localhost", secret: "live")]
        }) { server in
            let address = try #require(server.server.componentAddresses.first)
            let component = try LiveClient(connectingTo: address, domain: "gw.localhost")
            try component.send(
                "<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' "
                    + "to='gw.localhost'>")
            guard case .streamOpen(let header) = try component.nextEvent(), let id = header[attribute: "id"] else {
                throw TestFailure("no stream header with an id")
            }
            let proof = Hex.encode(HashFunction.sha1.hash(Array((id + "live").utf8)))
            try component.send("<handshake>\(proof)</handshake>")
            #expect(try component.nextElement().name == "handshake")
            try server.waitForLog(containing: "handshake ok: gw.localhost is connected")

            try server.register("romeo", "pw")
            let romeo = try server.loggedInClient("romeo", "pw")
            try romeo.send("<message to='bot@gw.localhost' type='chat' id='u1'><body>ping</body></message>")
            let inbound = try component.nextElement()
            #expect(inbound[attribute: "from"] == "romeo@localhost/live" && inbound.childText("body") == "ping")
            try component.send(
                "<message from='bot@gw.localhost' to='romeo@localhost/live' type='chat'><body>pong</body></message>")
            let outbound = try romeo.nextElement()
            #expect(outbound[attribute: "from"] == "bot@gw.localhost" && outbound.childText("body") == "pong")

            try component.send("</stream:stream>")
            try server.waitForLog(containing: "gw.localhost is disconnected")
        }
    }
}
