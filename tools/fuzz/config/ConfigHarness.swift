import Foundation
import FuzzSupport
import XMPPServer

/// libFuzzer's entry point: checks one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkConfig(FuzzInput(data, count: size))
    return 0
}

#if !LIBFUZZER
    /// Without libFuzzer: replays the inputs named on the command line.
    @main enum Replay {
        static func main() { replay(CommandLine.arguments.dropFirst()) { checkConfig(FuzzInput($0)) } }
    }
#endif

/// Where inputs are written to be loaded as files; one per process, since
/// libFuzzer may run several.
let configPath = NSTemporaryDirectory() + "/swiftlet-fuzz-\(ProcessInfo.processInfo.processIdentifier).conf"

/// The `swiftletd.conf` reader: `ServerConfig.parse` (syntax, every key's
/// value type, validation) and `ServerConfig.load`, which reads a file.
///
/// Checks:
/// - an error names a line of the text, or none;
/// - a configuration that loads is written by `check-config` as settings
///   that load to the same configuration (its report promises that any of
///   its lines can be pasted into a config file);
/// - loading the text from a file gives what parsing it gives.
func checkConfig(_ input: FuzzInput) {
    var input = input
    let bytes = input.takeRest()
    let text = String(decoding: bytes, as: UTF8.self)
    let parsed = Result { () throws(ConfigError) in try ServerConfig.parse(text, fileName: configPath) }
    switch parsed {
    case .success(let config):
        let report = checkConfigReport(config)
        let settings = report.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
        let reread = Result { () throws(ConfigError) in
            try ServerConfig.parse(settings.joined(separator: "\n"), fileName: "check-config")
        }
        invariant(reread == .success(config), "\(text.debugDescription) loads, but its report gives \(reread)")
    case .failure(let error):
        if case .line(_, let line)? = error.location {
            let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).count
            invariant(line >= 1 && line <= lines, "\(error) for a text of \(lines) lines")
        }
    }
    // The file is read as UTF-8, so only input that is UTF-8 loads alike.
    guard String(validating: bytes, as: UTF8.self) != nil else { return }
    invariant(FileManager.default.createFile(atPath: configPath, contents: Data(bytes)), "cannot write \(configPath)")
    defer { try? FileManager.default.removeItem(atPath: configPath) }
    let loaded = Result { () throws(ConfigError) in try ServerConfig.load(from: configPath) }
    invariant(loaded == parsed, "\(text.debugDescription) parses to \(parsed) but loads as \(loaded)")
}
