import XMPPCore

extension Duration {
    /// The duration in seconds for people: whole (`2`) or to one decimal
    /// (`1.5`, `0.5`).
    public var secondsText: String {
        let tenths = Int64((totalSeconds * 10).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(abs(tenths % 10))"
    }

    /// The duration in seconds, as a floating-point number.
    var totalSeconds: Double { seconds }
}
