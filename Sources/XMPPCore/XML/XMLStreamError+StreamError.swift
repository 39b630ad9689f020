extension XMLStreamError {
    /// The stream error to send for this parser failure (RFC 6120 §4.9.3),
    /// with the detail as its text.
    public var streamError: StreamError {
        let condition: StreamError.Condition =
            switch kind {
            case .notWellFormed: .notWellFormed
            case .restrictedXML: .restrictedXML
            case .policyViolation: .policyViolation
            case .badNamespacePrefix: .badNamespacePrefix
            case .unsupportedEncoding: .unsupportedEncoding
            case .badFormat: .badFormat
            }
        return StreamError(condition, text: detail)
    }
}
