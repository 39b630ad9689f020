import Foundation

/// How many event loops the tests' real servers run:
/// `SWIFTLET_TEST_THREADS` (1 to 64), or 1. CI runs the whole suite once
/// more with four; `LiveMultiLoopTests` always runs four.
public enum TestThreads {
    public static let count: Int = {
        guard let text = ProcessInfo.processInfo.environment["SWIFTLET_TEST_THREADS"], let count = Int(text),
            (1...64).contains(count)
        else { return 1 }
        return count
    }()
}
