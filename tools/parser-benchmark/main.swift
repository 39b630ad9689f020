// Parser throughput: XMPPCore's XMLStreamParser against its ceiling, raw
// Expat callbacks that build nothing, on the same bytes of a realistic
// client stream (mixed message, presence and iq stanzas).
//
//   swift run -c release parser-benchmark [--stanzas N] [--runs R] [--chunk BYTES]
//
// Prints MB/s and stanzas/s for both, and the ratio. Each figure is the best
// of R runs, which is the most stable statistic on a shared machine.

import CExpat
import XMPPCore

struct Options {
    var stanzas = 100_000
    var runs = 5
    var chunk = 4096

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard let value = iterator.next().flatMap(Int.init), value > 0 else {
                fatalError("usage: parser-benchmark [--stanzas N] [--runs R] [--chunk BYTES]")
            }
            switch argument {
            case "--stanzas": stanzas = value
            case "--runs": runs = value
            case "--chunk": chunk = value
            default: fatalError("unknown option \(argument)")
            }
        }
    }
}

/// A client stream like a busy chat app's: mostly chat messages, presence
/// with caps and avatar hashes, and the usual iqs. Deterministic.
func makeClientStream(stanzas: Int) -> [UInt8] {
    var text = """
        <?xml version='1.0'?><stream:stream xmlns='jabber:client' \
        xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='example.com' xml:lang='en'>
        """
    let words = ["wherefore", "art", "thou", "Romeo", "deny", "thy", "father", "and", "refuse", "name", "Grüße", "😀"]
    var state: UInt64 = 42
    func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
    for index in 0..<stanzas {
        let id = "A1B2C3D4-\(index)"
        switch next(10) {
        case 0..<5:
            let body = (0..<(3 + next(30))).map { _ in words[next(words.count)] }.joined(separator: " ")
            text += """
                <message to='juliet@example.com' from='romeo@example.net/orchard' type='chat' id='\(id)'>\
                <body>\(body) &amp; more</body><active xmlns='http://jabber.org/protocol/chatstates'/>\
                <request xmlns='urn:xmpp:receipts'/><origin-id xmlns='urn:xmpp:sid:0' id='\(id)'/></message>
                """
        case 5..<8:
            text += """
                <presence><show>away</show><status>In the orchard</status><priority>5</priority>\
                <c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='https://gajim.org' \
                ver='QgayPKawpkPSDYmwT/WM94uAlu0='/><x xmlns='vcard-temp:x:update'>\
                <photo>01b87fcd030b72895ff8e88db57ec525450f000d</photo></x></presence>
                """
        case 8:
            text += "<iq type='get' id='\(id)'><ping xmlns='urn:xmpp:ping'/></iq>"
        default:
            text += """
                <iq type='set' id='\(id)'><query xmlns='jabber:iq:roster'><item jid='nurse@example.com' \
                name='Nurse'><group>Servants</group></item></query></iq>
                """
        }
    }
    return Array(text.utf8)
}

/// Feeds `bytes` to a fresh XMLStreamParser in `chunk`-sized reads; returns
/// the number of stanzas it reported.
func runParser(_ bytes: [UInt8], chunk: Int) -> Int {
    let parser = XMLStreamParser()
    var stanzas = 0
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let count = min(chunk, buffer.count - offset)
            for event in parser.feed(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])) {
                switch event {
                case .element: stanzas += 1
                case .error(let error): fatalError("benchmark stream rejected: \(error)")
                case .streamOpen, .streamClose: break
                }
            }
            offset += count
        }
    }
    return stanzas
}

/// The ceiling: a namespace-aware Expat parser whose callbacks only count
/// top-level elements.
func runRawExpat(_ bytes: [UInt8], chunk: Int) -> Int {
    struct Counter {
        var depth = 0
        var stanzas = 0
    }
    var counter = Counter()
    let parser = XML_ParserCreateNS("UTF-8", 0x01)!
    defer { XML_ParserFree(parser) }
    return withUnsafeMutablePointer(to: &counter) { pointer in
        XML_SetUserData(parser, pointer)
        XML_SetElementHandler(
            parser,
            { context, _, _ in context!.assumingMemoryBound(to: Counter.self).pointee.depth += 1 },
            { context, _ in
                let counter = context!.assumingMemoryBound(to: Counter.self)
                counter.pointee.depth -= 1
                if counter.pointee.depth == 1 { counter.pointee.stanzas += 1 }
            })
        XML_SetCharacterDataHandler(parser) { _, _, _ in }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = min(chunk, buffer.count - offset)
                let start = buffer.baseAddress!.advanced(by: offset).assumingMemoryBound(to: CChar.self)
                guard XML_Parse(parser, start, Int32(count), 0) == XML_STATUS_OK else {
                    fatalError("Expat rejected the benchmark stream")
                }
                offset += count
            }
        }
        return pointer.pointee.stanzas
    }
}

/// The best time of `runs` runs of `body`, and what the last run returned.
func best(of runs: Int, _ body: () -> Int) -> (seconds: Double, result: Int) {
    let clock = ContinuousClock()
    var fastest = Duration.seconds(1_000_000)
    var result = 0
    for _ in 0..<runs {
        let elapsed = clock.measure { result = body() }
        fastest = min(fastest, elapsed)
    }
    let (seconds, attoseconds) = fastest.components
    return (Double(seconds) + Double(attoseconds) / 1e18, result)
}

func format(_ value: Double) -> String {
    let rounded = (value * 10).rounded() / 10
    return "\(rounded)"
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let bytes = makeClientStream(stanzas: options.stanzas)
let megabytes = Double(bytes.count) / 1_000_000

let parser = best(of: options.runs) { runParser(bytes, chunk: options.chunk) }
let raw = best(of: options.runs) { runRawExpat(bytes, chunk: options.chunk) }
precondition(parser.result == options.stanzas && raw.result == options.stanzas, "stanza counts differ")

print("stream: \(options.stanzas) stanzas, \(format(megabytes)) MB, fed in \(options.chunk)-byte reads; best of \(options.runs) runs")
for (name, run) in [("XMLStreamParser", parser), ("raw Expat (ceiling)", raw)] {
    let throughput = megabytes / run.seconds
    let stanzasPerSecond = Double(options.stanzas) / run.seconds
    print("\(name): \(format(throughput)) MB/s, \(Int(stanzasPerSecond)) stanzas/s")
}
print("XMLStreamParser / raw Expat: \(format(100 * raw.seconds / parser.seconds))% of the ceiling")
