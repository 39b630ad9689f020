import Foundation
import Synchronization

/// The last warning and error lines a logger wrote, with the time of each,
/// for the admin page: a ring of at most `capacity` lines in memory, so a
/// burst of errors costs a fixed amount however long it lasts. Shared by a
/// logger and every copy `Logger.labelled` makes of it.
public final class RecentProblems: Sendable {
    /// One line as it was written, and when.
    public struct Line: Sendable, Equatable {
        public var date: Date
        public var text: String
    }

    /// How many lines are kept by default.
    public static let defaultCapacity = 50

    /// The most lines kept; older ones are dropped.
    public let capacity: Int
    /// The ring and where its next line goes.
    private let ring: Mutex<(lines: [Line], next: Int)>

    /// An empty ring of `capacity` lines (at least one).
    public init(capacity: Int = RecentProblems.defaultCapacity) {
        precondition(capacity > 0, "a ring of no lines")
        self.capacity = capacity
        ring = Mutex(([], 0))
    }

    /// Keeps `text`, dropping the oldest line when the ring is full.
    func record(_ text: String, at date: Date = Date()) {
        let line = Line(date: date, text: text)
        ring.withLock { ring in
            if ring.lines.count < capacity { ring.lines.append(line) } else { ring.lines[ring.next] = line }
            ring.next = (ring.next + 1) % capacity
        }
    }

    /// The kept lines, oldest first.
    public var lines: [Line] {
        ring.withLock { ring in
            ring.lines.count < capacity ? ring.lines : Array(ring.lines[ring.next...] + ring.lines[..<ring.next])
        }
    }
}
