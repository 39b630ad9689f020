import Foundation

/// Stops the process with `message` when `condition` does not hold.
///
/// libFuzzer reports the stop as a crash and saves the input, so a broken
/// round trip or an inconsistency is found like any trap. `fatalError`
/// rather than `precondition`, because release builds (which the fuzzer
/// uses) drop a precondition's message.
public func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError("invariant broken: \(message())", file: file, line: line) }
}

/// The entry point of a harness built without libFuzzer: runs `check` once
/// on each file named in `arguments`, and on each file inside a named
/// directory, so a crash input or a whole corpus replays as a regression
/// test. Exits non-zero when nothing was named or a file cannot be read.
///
/// - Parameters:
///   - arguments: The command line without the program name.
///   - check: The harness body, as `LLVMFuzzerTestOneInput` calls it.
public func replay(_ arguments: some Collection<String>, _ check: ([UInt8]) -> Void) {
    guard !arguments.isEmpty else {
        FileHandle.standardError.write(Data("usage: fuzz-TARGET FILE_OR_DIRECTORY...\n".utf8))
        exit(2)
    }
    var count = 0
    for path in arguments {
        for file in files(at: path) {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                exit(1)
            }
            check(Array(data))
            count += 1
        }
    }
    print("replayed \(count) inputs")
}

/// `path` itself, or the regular files directly inside it when it is a
/// directory, sorted so that runs are repeatable.
private func files(at path: String) -> [String] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
        let names = try? FileManager.default.contentsOfDirectory(atPath: path)
    else { return [path] }
    return names.sorted().map { "\(path)/\($0)" }
}
