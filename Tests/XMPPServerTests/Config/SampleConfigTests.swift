import Foundation
import Testing

@testable import XMPPServer

/// Keeps `etc/swiftletd.conf`, the key table and `ServerConfig` in step.
@Suite struct SampleConfigTests {
    /// `etc/swiftletd.conf`, found from this file's path.
    private static let samplePath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("etc/swiftletd.conf").path

    /// A commented-out setting: `#`, at most one space, `key =`.
    private static var keyLine: Regex<(Substring, Substring, Substring)> {
        #/^# ?([A-Za-z][A-Za-z0-9_.-]*)\s*=(.*)$/#
    }

    private struct Sample {
        /// The file with setting lines uncommented and every other line
        /// blank, so errors point at the right line.
        var settings: [String] = []
        /// The keys in order.
        var keys: [String] = []
        /// For each key, the prose comment right above it.
        var documentation: [String: String] = [:]
    }

    private func readSample() throws -> Sample {
        let text = try String(contentsOfFile: Self.samplePath, encoding: .utf8)
        var sample = Sample()
        var prose: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = try Self.keyLine.wholeMatch(in: line) {
                let key = String(match.1)
                sample.keys.append(key)
                sample.settings.append("\(key) =\(match.2)")
                sample.documentation[key] = prose.joined(separator: " ")
                prose = []
                continue
            }
            sample.settings.append("")
            if line.hasPrefix("#") {
                prose.append(String(line.dropFirst()))
            } else {
                prose = []
            }
        }
        return sample
    }

    @Test func sampleMentionsEveryKeyOnceAndNothingElse() throws {
        let sample = try readSample()
        #expect(sample.keys == ServerConfig.keys.map(\.name))
    }

    @Test func sampleValuesAreTheDefaults() throws {
        let sample = try readSample()
        let parsed = try ServerConfig.parse(sample.settings.joined(separator: "\n"), fileName: Self.samplePath)
        #expect(parsed == ServerConfig())
    }

    @Test func everySampleKeyIsDocumentedWithItsDefault() throws {
        let sample = try readSample()
        for key in sample.keys {
            let prose = sample.documentation[key] ?? ""
            #expect(prose.count > 40, "\(key) needs a comment saying what it does")
            #expect(prose.contains("Default:"), "\(key) needs 'Default:' in its comment")
        }
    }

    @Test func everyFieldOfServerConfigHasExactlyOneKey() {
        let fields = ServerConfig.keys.map {
            String(describing: $0.field).replacingOccurrences(of: "\\ServerConfig.", with: "")
        }
        #expect(Set(fields).count == fields.count, "two keys set the same field")
        #expect(Set(fields) == Set(Self.leafFields(of: ServerConfig())))
    }

    /// The stored properties of `value`, descending into the nested setting
    /// groups (`tls.policy`).
    private static func leafFields(of value: Any, prefix: String = "") -> [String] {
        Mirror(reflecting: value).children.flatMap { child -> [String] in
            let path = prefix + (child.label ?? "?")
            let isGroup =
                Mirror(reflecting: child.value).displayStyle == .struct
                && String(reflecting: type(of: child.value)).hasPrefix("XMPPServer.ServerConfig.")
            return isGroup ? leafFields(of: child.value, prefix: path + ".") : [path]
        }
    }

    @Test func leafFieldsSeeNestedGroups() {
        let fields = Self.leafFields(of: ServerConfig())
        #expect(fields.contains("tls.policy"))
        #expect(fields.contains("registration.throttle"))
        #expect(!fields.contains("tls"))
    }
}
