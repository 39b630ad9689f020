import Testing

import TerminalSupport

/// The exit status table that `swiftlet --help` prints.
@Suite struct ExitStatusTests {
    @Test func theTableListsEveryStatusOnce() {
        let codes = TerminalSupport.ExitStatus.table.split(separator: "\n").compactMap { Int32($0.split(separator: " ").first ?? "") }
        #expect(codes == TerminalSupport.ExitStatus.allCases.map(\.rawValue))
        #expect(Set(codes).count == codes.count)
    }
}
