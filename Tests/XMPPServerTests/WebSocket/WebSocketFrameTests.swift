import Testing

@testable import XMPPServer

/// RFC 6455 frames as the server reads them: whole, split anywhere,
/// fragmented, and each way a client can break the rules.
@Suite struct WebSocketFrameTests {
    /// A client frame: FIN and `opcode`, masked with `mask` unless told not to.
    static func frame(
        _ opcode: UInt8, _ payload: [UInt8], final: Bool = true, masked: Bool = true, rsv: UInt8 = 0,
        mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D], longForm: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [(final ? 0x80 : 0) | rsv | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 && !longForm {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF && !longForm {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        }
        guard masked else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    static func text(_ string: String) -> [UInt8] { frame(0x1, Array(string.utf8)) }

    private func feed(_ decoder: inout WebSocketFrameDecoder, _ bytes: [UInt8]) throws(WebSocketViolation) -> [WebSocketInput] {
        let frames = bytes.withUnsafeBytes { decoder.feed($0) }
        if let violation = frames.violation { throw violation }
        return frames.inputs
    }

    private func violation(_ bytes: [UInt8], max: Int = 1000) -> WebSocketViolation? {
        var decoder = WebSocketFrameDecoder(maxMessageSize: max)
        do {
            _ = try feed(&decoder, bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func theRFCsMaskedHelloDecodes() throws {
        // RFC 6455 §5.7: a masked "Hello".
        var decoder = WebSocketFrameDecoder(maxMessageSize: 100)
        let inputs = try feed(&decoder, [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(inputs == [.message(Array("Hello".utf8))])
    }

    @Test func framesSplitAnywhereDecodeTheSame() throws {
        let payload = String(repeating: "<message xmlns='jabber:client'/>", count: 10)
        let bytes = Self.text("<a/>") + Self.text(payload) + Self.frame(0x9, [1, 2]) + Self.text("<b/>")
        var whole = WebSocketFrameDecoder(maxMessageSize: 1000)
        let expected = try feed(&whole, bytes)
        #expect(expected == [.message(Array("<a/>".utf8)), .message(Array(payload.utf8)), .ping([1, 2]), .message(Array("<b/>".utf8))])
        for split in [1, 2, 3, 7, 13] {
            var decoder = WebSocketFrameDecoder(maxMessageSize: 1000)
            var inputs: [WebSocketInput] = []
            var index = 0
            while index < bytes.count {
                inputs += try feed(&decoder, Array(bytes[index..<min(index + split, bytes.count)]))
                index += split
            }
            #expect(inputs == expected, "split every \(split) bytes")
        }
    }

    @Test func fragmentsJoinWithControlFramesBetween() throws {
        var decoder = WebSocketFrameDecoder(maxMessageSize: 100)
        let bytes = Self.frame(0x1, Array("<mess".utf8), final: false) + Self.frame(0xA, [])
            + Self.frame(0x0, Array("age/".utf8), final: false) + Self.frame(0x0, Array(">".utf8))
        #expect(try feed(&decoder, bytes) == [.pong, .message(Array("<message/>".utf8))])
    }

    @Test func lengthsOfEveryFormDecode() throws {
        for count in [0, 125, 126, 65535, 65536] {
            var decoder = WebSocketFrameDecoder(maxMessageSize: 70000)
            let payload = [UInt8](repeating: 0x61, count: count)
            #expect(try feed(&decoder, Self.frame(0x1, payload)) == [.message(payload)])
        }
    }

    @Test func theEncoderWritesEveryLengthForm() throws {
        for count in [0, 125, 126, 65535, 65536] {
            let payload = [UInt8](repeating: 0x61, count: count)
            let frame = payload.withUnsafeBytes { WebSocketFrameEncoder.text($0) }
            let header = count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
            #expect(frame.count == header + count)
            #expect(frame[0] == 0x81)
            #expect(frame[1] & 0x80 == 0, "server frames are not masked")
        }
        #expect(WebSocketFrameEncoder.close(.messageTooBig) == [0x88, 2, 0x03, 0xF1])
        #expect(WebSocketFrameEncoder.pong([9]) == [0x8A, 1, 9])
    }

    @Test func unmaskedFramesAreAProtocolError() {
        #expect(violation(Self.frame(0x1, Array("<a/>".utf8), masked: false))?.code == .protocolError)
    }

    @Test func reservedBitsAndOpcodesAreAProtocolError() {
        #expect(violation(Self.frame(0x1, [0x61], rsv: 0x40))?.code == .protocolError, "RSV1: no compression was agreed")
        #expect(violation(Self.frame(0x3, [0x61]))?.code == .protocolError)
        #expect(violation(Self.frame(0xB, []))?.code == .protocolError)
    }

    @Test func binaryMessagesAreRefused() {
        #expect(violation(Self.frame(0x2, [1, 2, 3]))?.code == .unsupportedData)
    }

    @Test func controlFramesMustBeShortAndWhole() {
        #expect(violation(Self.frame(0x9, [UInt8](repeating: 0, count: 126)))?.code == .protocolError)
        #expect(violation(Self.frame(0x9, [1], final: false))?.code == .protocolError)
    }

    @Test func continuationsOnlyInsideAMessage() {
        #expect(violation(Self.frame(0x0, [0x61]))?.code == .protocolError)
        #expect(violation(Self.frame(0x1, [0x61], final: false) + Self.frame(0x1, [0x62]))?.code == .protocolError)
    }

    @Test func lengthsMustUseTheShortestForm() {
        #expect(violation(Self.frame(0x1, [0x61], longForm: true))?.code == .protocolError)
        var sixteenBit: [UInt8] = [0x81, 0x80 | 126, 0, 5, 0, 0, 0, 0] + [UInt8](repeating: 0x61, count: 5)
        #expect(violation(sixteenBit)?.code == .protocolError)
        sixteenBit[3] = 200
        #expect(violation(sixteenBit) == nil, "incomplete, not wrong")
    }

    @Test func oversizeMessagesAreRefusedFromTheirHeader() {
        // Only the header is sent: the refusal does not wait for the payload.
        let header: [UInt8] = [0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0]
        #expect(violation(header, max: 1000)?.code == .messageTooBig)
        let fragments = Self.frame(0x1, [UInt8](repeating: 0x61, count: 600), final: false)
            + Array(Self.frame(0x0, [UInt8](repeating: 0x61, count: 600)).prefix(4))
        #expect(violation(fragments, max: 1000)?.code == .messageTooBig, "fragments count together")
        #expect(violation(Self.frame(0x1, [UInt8](repeating: 0x61, count: 1000)), max: 1000) == nil)
    }

    @Test func textMustBeUTF8() {
        #expect(violation(Self.frame(0x1, [0x3C, 0xC3, 0x28, 0x3E]))?.code == .invalidPayload)
        #expect(violation(Self.frame(0x1, [0xE2, 0x82], final: false) + Self.frame(0x0, [0xAC])) == nil, "split inside a character")
    }

    @Test func nothingAfterACloseFrameIsRead() throws {
        var decoder = WebSocketFrameDecoder(maxMessageSize: 100)
        let unmasked = Self.frame(0x1, [0x61], masked: false)
        #expect(try feed(&decoder, Self.frame(0x8, [0x03, 0xE8]) + unmasked) == [.close(1000)])
        #expect(try feed(&decoder, Self.text("<a/>")) == [])
    }

    @Test func whatCameBeforeAViolationIsReportedWithIt() {
        var decoder = WebSocketFrameDecoder(maxMessageSize: 100)
        let frames = (Self.text("<a/>") + Self.frame(0x2, [1])).withUnsafeBytes { decoder.feed($0) }
        #expect(frames.inputs == [.message(Array("<a/>".utf8))])
        #expect(frames.violation?.code == .unsupportedData)
        #expect(Self.text("<b/>").withUnsafeBytes { decoder.feed($0) } == WebSocketFrames(), "nothing after a violation")
    }

    @Test func closeFramesCarryAValidCode() throws {
        var decoder = WebSocketFrameDecoder(maxMessageSize: 100)
        #expect(try feed(&decoder, Self.frame(0x8, [])) == [.close(nil)])
        decoder = WebSocketFrameDecoder(maxMessageSize: 100)
        #expect(try feed(&decoder, Self.frame(0x8, [0x03, 0xE8] + Array("bye".utf8))) == [.close(1000)])
        #expect(violation(Self.frame(0x8, [0x03]))?.code == .protocolError)
        #expect(violation(Self.frame(0x8, [0x03, 0xED]))?.code == .protocolError, "1005 is never sent")
        #expect(violation(Self.frame(0x8, [0x03, 0xE8, 0xFF]))?.code == .invalidPayload)
    }
}
