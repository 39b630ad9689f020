import Foundation

/// Calls `body` with a new, empty directory under /tmp and removes the
/// directory afterwards, whether `body` throws or not.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = "/tmp/swiftlet-sqlitekit-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// A value shared between test threads, guarded by a lock.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withValue<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// An error a test throws on purpose.
struct PlannedError: Error, Equatable {}
