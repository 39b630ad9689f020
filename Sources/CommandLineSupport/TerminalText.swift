/// Text from the network made safe to print for people: a message or
/// status may carry characters that a terminal takes as commands (C1
/// controls such as U+009B, which some terminals read as the start of an
/// escape sequence; XML 1.0 forbids most C0 ones but allows CR).
public enum TerminalText {
    /// `text` with every control character but tab and newline replaced by
    /// U+FFFD, and each line after the first indented by two spaces, so
    /// that a continuation never looks like the start of another line of
    /// output.
    public static func printable(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\n  "
            case "\t": result.unicodeScalars.append(scalar)
            case _ where scalar.properties.generalCategory == .control: result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
