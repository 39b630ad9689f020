extension Duration {
    /// The duration in seconds, as a floating-point number: for APIs that
    /// count time that way (`Date`, `TimeInterval`, jitter arithmetic).
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
