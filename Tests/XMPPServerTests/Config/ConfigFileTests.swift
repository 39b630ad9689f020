import Testing

@testable import XMPPServer

@Suite struct ConfigFileTests {
    private func entries(_ text: String) throws -> [ConfigFile.Entry] {
        try ConfigFile(parsing: text, name: "test.conf").entries
    }

    private func items(_ value: String) throws -> [String] {
        try #require(try entries("key = \(value)").first).items
    }

    @Test func blankLinesAndCommentsAreSkippedAndLinesCounted() throws {
        let text = "# comment\n\n   \t\n  # indented comment\ndomain = ydc.local # trailing\r\nthreads=2\n"
        #expect(
            try entries(text) == [
                ConfigFile.Entry(key: "domain", items: ["ydc.local"], line: 5),
                ConfigFile.Entry(key: "threads", items: ["2"], line: 6),
            ])
    }

    @Test(arguments: [
        ("plain", ["plain"]),
        ("  spaced out  ", ["spaced out"]),
        ("a, b ,c", ["a", "b", "c"]),
        ("value# comment", ["value"]),
        ("", []),
        ("   # only a comment", []),
        ("\"\"", [""]),
        ("\"has # hash\"", ["has # hash"]),
        ("\" padded \"", [" padded "]),
        ("\"a, b\"", ["a, b"]),
        ("\"say \\\"hi\\\"\"", ["say \"hi\""]),
        ("\"back\\\\slash\"", ["back\\slash"]),
        ("\"x\" , y # c", ["x", "y"]),
        ("\"x\"# c", ["x"]),
        ("a = b", ["a = b"]),
    ])
    func valueForms(value: String, expected: [String]) throws {
        #expect(try items(value) == expected)
    }

    @Test(arguments: [
        ("just words", "expected 'key = value'"),
        ("= value", "is not a key"),
        ("two words = x", "is not a key"),
        ("key = \"open", "missing closing '\"'"),
        ("key = \"bad \\n escape\"", "unknown escape '\\n'"),
        ("key = \"x\" y", "unexpected 'y' after a quoted value"),
        ("key = a,, b", "empty item"),
        ("key = , a", "empty item"),
        ("key = a,", "the list ends with ','"),
        ("key = a, # c", "the list ends with ','"),
    ])
    func malformedLinesNameFileAndLine(line: String, expected: String) throws {
        let error = try #require(throws: ConfigError.self) { try entries("# first\n\(line)") }
        #expect(error.location == .line(file: "test.conf", line: 2))
        #expect(error.message.contains(expected), "\(error)")
        #expect(error.description.hasPrefix("test.conf:2: "))
    }

    @Test(arguments: ["plain", "", " lead", "trail ", "a#b", "a,b", "\"q\"", "back\\slash", "in\"side"])
    func formattedItemsReadBackTheSame(item: String) throws {
        #expect(try items(ConfigFile.formatted(item)) == [item])
    }

    @Test func formattedLeavesSimpleValuesBare() {
        #expect(ConfigFile.formatted("/var/lib/swiftlet") == "/var/lib/swiftlet")
        #expect(ConfigFile.formatted("") == "\"\"")
    }
}
