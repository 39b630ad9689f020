import XMPPCore

/// Takes a transport's stream events one at a time, turning the ways a
/// stream can end into `XMPPClientError`s.
struct StreamReader {
    private var iterator: AsyncThrowingStream<XMLStreamEvent, any Error>.AsyncIterator
    /// How many events were taken from the transport so far.
    private(set) var eventsRead = 0

    init(_ transport: StreamTransport) {
        iterator = transport.events.makeAsyncIterator()
    }

    /// The next event; a `<stream:error>` is thrown as `.streamError`.
    /// - Throws: `XMPPClientError` when the connection ends first.
    mutating func next(isolation: isolated (any Actor)? = #isolation) async throws(XMPPClientError)
        -> XMLStreamEvent
    {
        let event: XMLStreamEvent?
        do {
            event = try await iterator.next(isolation: isolation)
        } catch let error as XMPPClientError {
            throw error
        } catch {
            throw .cannotConnect("\(error)")
        }
        guard let event else { throw .notConnected }
        eventsRead += 1
        if case .element(let element) = event, let streamError = StreamError(element) {
            throw .streamError(streamError.condition, text: streamError.text)
        }
        return event
    }

    /// The next top-level element.
    /// - Throws: `.notConnected` if the server closes the stream instead.
    mutating func nextElement(isolation: isolated (any Actor)? = #isolation) async throws(XMPPClientError)
        -> Element
    {
        switch try await next(isolation: isolation) {
        case .element(let element): return element
        case .streamClose: throw .notConnected
        case .streamOpen: throw .unsupportedServer("a second stream header without a restart")
        case .error(let error): throw .streamError(.notWellFormed, text: "\(error)")
        }
    }
}
