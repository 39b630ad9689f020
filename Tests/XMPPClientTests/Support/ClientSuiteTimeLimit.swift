import Testing

extension TimeLimitTrait.Duration {
    /// The time limit of a client kit suite that talks to a server over
    /// loopback. Such a test needs a thread of Swift's cooperative pool
    /// for each step, and in a full run the synchronous live tests of the
    /// server's suites hold those threads (as many as the machine has
    /// cores) while they wait on their sockets: on a 2-core machine a test
    /// that takes a second alone has taken 55 s. The limit is there to end
    /// a hang, not to time the client.
    static let clientSuite = Self.minutes(3)
}
