import Foundation
import XMPPClient

/// How `listen` and `presence` print events and when they stop.
public struct ListenOptions: Sendable, Equatable {
    /// Whether to print JSON objects instead of lines for people.
    public var json = false
    /// Stop after printing this many events.
    public var count: Int?
    /// The kinds of event to print (and count).
    public var kinds = Set(EventKind.allCases)

    /// The options behind these settings, for parsing and `--help`.
    static let specs: [OptionSpec] = [
        .json("one JSON object per event"),
        .value("--count", "N", "Stop after N events (of the kinds printed)."),
        .value(
            "--only", "KINDS",
            "Print only these kinds, comma-separated: " + EventKind.allCases.map(\.rawValue).joined(separator: ", ") + "."),
    ]

    /// The defaults: every kind, as lines, until stopped.
    public init() {}

    /// Reads `--json`, `--count` and `--only` from `invocation`.
    /// - Throws: `CommandFailure` with `.usage` for a count below 1 or an
    ///   unknown kind.
    public init(_ invocation: Invocation) throws(CommandFailure) {
        json = invocation.flag("--json")
        count = try invocation.integer("--count", in: 1...Int.max)
        if let only = invocation.value("--only") {
            var kinds: Set<EventKind> = []
            for name in only.split(separator: ",", omittingEmptySubsequences: false) {
                guard let kind = EventKind(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                    throw .usage("--only takes \(EventKind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'")
                }
                kinds.insert(kind)
            }
            self.kinds = kinds
        }
    }

    /// What to print for `event`, or `nil` when its kind is not selected.
    public func output(for event: ClientEvent) -> String? {
        guard kinds.contains(event.kind) else { return nil }
        return json ? event.json.line : event.line
    }
}
