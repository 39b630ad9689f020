/// Facts about this build of Swiftlet shared by the server, the client kit
/// and the command-line tools.
public enum Swiftlet {
    /// The release version, reported by `--version` and XEP-0092.
    public static let version = "0.1.0"
}
