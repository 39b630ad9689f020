/// `text` as a whole number if it is ASCII digits only, without sign,
/// spaces or separators (config values, HTTP's `Content-Length`, XEP-0363
/// sizes); nil for anything else or a number too big for `Int`.
func wholeNumber(_ text: some StringProtocol) -> Int? {
    guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
    else { return nil }
    return Int(text)
}
