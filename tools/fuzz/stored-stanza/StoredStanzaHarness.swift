import FuzzSupport
import XMPPCore
import XMPPServer

/// libFuzzer's entry point: checks one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkStoredStanza(FuzzInput(data, count: size))
    return 0
}

#if !LIBFUZZER
    /// Without libFuzzer: replays the inputs named on the command line.
    @main enum Replay {
        static func main() { replay(CommandLine.arguments.dropFirst()) { checkStoredStanza(FuzzInput($0)) } }
    }
#endif

/// A client stream's opening, as a client sends it.
let clientStreamOpening =
    "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='example.com' version='1.0'>"

/// The `from` the router stamps on a stanza, with characters that grow
/// when escaped in an attribute.
let stampedFrom = "juliet@example.com/it's \"the\" <balcony> & more"

/// Stanzas kept in storage as text (`StoredStanza`): offline messages,
/// archived messages, pending subscription requests, vCards, PEP items.
///
/// The input is read twice: as stored text, and as the bytes a client
/// sends after its stream header.
///
/// Checks:
/// - an element read from stored text is written back as text that reads
///   back equal, and writing it again gives the same text;
/// - every element a client stream accepts (under the stream's default
///   limits), stamped with `from` as the router does, can be stored and
///   reads back equal: otherwise an accepted message would be lost (or, in
///   the offline store, kept undeliverable).
func checkStoredStanza(_ input: FuzzInput) {
    var input = input
    let bytes = input.takeRest()
    if let element = StoredStanza.parse(String(decoding: bytes, as: UTF8.self)) {
        checkStorable(element)
    }
    let parser = XMLStreamParser()
    let events = parser.feed(clientStreamOpening) + parser.feed(bytes)
    for case .element(var element) in events {
        element[attribute: "from"] = stampedFrom
        checkStorable(element)
    }
}

/// Stores `element` and reads it back.
func checkStorable(_ element: Element) {
    guard let text = StoredStanza.serialize(element) else {
        return invariant(false, "cannot store \(element)")
    }
    let readBack = StoredStanza.parse(text)
    invariant(readBack == element, "\(element)\nstored as \(text.debugDescription)\nreads back as \(String(describing: readBack))")
    invariant(readBack.flatMap(StoredStanza.serialize) == text, "storing \(text.debugDescription) again differs")
}
