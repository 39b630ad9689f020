import Foundation
import Testing
@testable import CommandLineSupport

@Suite struct TimestampTests {
    let instant = Date(timeIntervalSince1970: 1_777_636_800.123)  // 2026-05-01T12:00:00.123Z

    @Test func formats() {
        #expect(Timestamp.seconds(instant) == "2026-05-01T12:00:00Z")
        #expect(Timestamp.milliseconds(instant) == "2026-05-01T12:00:00.123Z")
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: 1_777_636_800.999_6)) == "2026-05-01T12:00:01.000Z")
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test func parsesWhatItPrintsAndOtherISO8601Forms() throws {
        #expect(Timestamp.parse("2026-05-01T12:00:00.123Z").map(Timestamp.milliseconds) == "2026-05-01T12:00:00.123Z")
        #expect(Timestamp.parse("2026-05-01T12:00:00Z") == Date(timeIntervalSince1970: 1_777_636_800))
        #expect(Timestamp.parse("2026-05-01T14:00:00+02:00") == Date(timeIntervalSince1970: 1_777_636_800))
        #expect(Timestamp.parse("2026-05-01") == Date(timeIntervalSince1970: 1_777_593_600))
        for bad in ["", "yesterday", "2026-05-01T12:00:00", "2026-13-01", "05/01/2026"] {
            #expect(Timestamp.parse(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct DurationTextTests {
    @Test func wholeOrOneDecimal() {
        #expect(Duration.seconds(2).secondsText == "2")
        #expect(Duration.milliseconds(1500).secondsText == "1.5")
        #expect(Duration.milliseconds(500).secondsText == "0.5")
        #expect(Duration.milliseconds(1960).secondsText == "2")
        #expect(Duration.milliseconds(250).totalSeconds == 0.25)
    }
}
