import Foundation
import Testing

@testable import XMPPServer

/// The form decoder of the admin page, and the log's ring of problems.
@Suite struct FormFieldsTests {
    private func fields(_ text: String) -> [FormFields.Pair]? {
        FormFields(decoding: Array(text.utf8))?.pairs
    }

    @Test func pairsAreSplitAndDecoded() {
        #expect(
            fields("a=1&b=x+y&c=%41%62%2B%26%3D&&d&e=")
                == [
                    .init(name: "a", value: "1"), .init(name: "b", value: "x y"), .init(name: "c", value: "Ab+&="),
                    .init(name: "d", value: ""), .init(name: "e", value: ""),
                ])
        #expect(fields("") == [])
        #expect(fields("k=a=b") == [.init(name: "k", value: "a=b")], "only the first = splits")
    }

    @Test func percentSignsWithoutTwoHexDigitsStayAsTheyAre() {
        #expect(
            fields("a=%&b=%4&c=%zz1&d=100%25") == [
                .init(name: "a", value: "%"), .init(name: "b", value: "%4"), .init(name: "c", value: "%zz1"),
                .init(name: "d", value: "100%"),
            ])
    }

    @Test func utf8IsDecodedAndAnythingElseRefused() {
        #expect(fields("name=J%C3%BCrgen%20%E2%9C%93") == [.init(name: "name", value: "Jürgen ✓")])
        #expect(fields("name=%FF") == nil)
        #expect(fields("name=%C3") == nil, "a truncated sequence")
    }

    @Test func theFirstValueOfANameWins() {
        let form = FormFields(decoding: Array("a=1&a=2".utf8))
        #expect(form?["a"] == "1")
        #expect(form?["b"] == nil)
    }

    @Test func theRingKeepsTheLastLines() {
        let ring = RecentProblems(capacity: 3)
        for index in 1...5 { ring.record("line \(index)", at: Date(timeIntervalSince1970: Double(index))) }
        #expect(ring.lines.map(\.text) == ["line 3", "line 4", "line 5"])
        #expect(ring.lines.map(\.date.timeIntervalSince1970) == [3, 4, 5])
    }

    @Test func theLoggerKeepsWarningsAndErrorsOnly() {
        let log = Logger(level: .debug, label: "x", sink: LogLinesSink())
        let narrower = log.labelled("y")
        log.info("fine")
        narrower.warning("careful")
        log.error("broken\nline")
        #expect(log.recentProblems.lines.map(\.text) == ["warning y: careful", "error x: broken\\u{A}line"])
    }
}

/// Drops lines.
private struct LogLinesSink: LogSink {
    func write(line: String) {}
}
