import Foundation
import XMPPClient
import XMPPCore

/// A command to run, with its operands and options checked against its
/// `CommandSpec`; typed accessors read the values.
public struct Invocation: Sendable {
    /// The command.
    public let command: Command
    /// The words after the command, in order.
    public let operands: [String]
    /// The options every command takes.
    public let global: GlobalOptions
    /// The command's own options: name → values, in order (`""` for a flag).
    private let options: [String: [String]]

    /// Checks `operands` and `options` against `command`'s spec.
    /// - Throws: `CommandFailure`.
    init(command: Command, operands: [String], options: [(name: String, value: String)]) throws(CommandFailure) {
        let spec = command.spec
        let name = command.rawValue
        let fixed = spec.isVariadic ? spec.operands.count - 1 : spec.operands.count
        guard spec.isVariadic ? operands.count > fixed : operands.count == fixed else {
            let expected = spec.operands.isEmpty ? "no operands" : spec.operands.joined(separator: " ")
            throw .usage("\(name) takes \(expected); see 'swiftlet help \(name)'")
        }
        var global = GlobalOptions()
        var own: [String: [String]] = [:]
        var seen: Set<String> = []
        for (option, value) in options {
            let globalSpec = GlobalOptions.specs.first { $0.name == option }
            guard let spec = globalSpec ?? spec.options.first(where: { $0.name == option }) else {
                throw .usage("\(name) does not take \(option); see 'swiftlet help \(name)'")
            }
            guard seen.insert(option).inserted || spec.repeatable else {
                throw .usage("\(option) is given twice")
            }
            if globalSpec != nil {
                try global.set(option, value)
            } else {
                own[option, default: []].append(value)
            }
        }
        self.command = command
        self.operands = operands
        self.global = global
        self.options = own
    }

    /// Whether the flag `name` was given.
    public func flag(_ name: String) -> Bool {
        options[name] != nil
    }

    /// The value of the option `name`, if given.
    public func value(_ name: String) -> String? {
        options[name]?.last
    }

    /// Every value of the repeatable option `name`, in order.
    public func values(_ name: String) -> [String] {
        options[name] ?? []
    }

    /// The option `name` as an integer in `range`, if given.
    /// - Throws: `CommandFailure` with `.usage` for anything else.
    public func integer(_ name: String, in range: ClosedRange<Int>) throws(CommandFailure) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw .usage("\(name) wants a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// The option `name` as a date, if given.
    /// - Throws: `CommandFailure` with `.usage` unless it is an ISO 8601
    ///   date or date and time (see `Timestamp.parse`).
    public func date(_ name: String) throws(CommandFailure) -> Date? {
        guard let text = value(name) else { return nil }
        guard let date = Timestamp.parse(text) else {
            throw .usage("\(name) wants an ISO 8601 time such as 2026-05-01T12:00:00Z, not '\(text)'")
        }
        return date
    }

    /// The operand at `index` as a JID: any JID, or with `account` a bare
    /// one with a localpart.
    /// - Throws: `CommandFailure` with `.badData`.
    public func jid(at index: Int, account: Bool = false) throws(CommandFailure) -> JID {
        let text = operands[index]
        if account { return try GlobalOptions.accountJID(text) }
        do {
            return try JID(text)
        } catch {
            throw CommandFailure(.badData, "'\(text)' is not a valid JID: \(error)")
        }
    }
}
