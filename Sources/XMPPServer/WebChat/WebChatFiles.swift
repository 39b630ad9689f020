import Foundation

/// What the web chat at `/chat` serves, read once at start: its own page
/// (HTML, CSS, JavaScript, shipped as SwiftPM resources of this target)
/// and Strophe.js, the XMPP library it runs on, from Debian's
/// `libjs-strophe`.
///
/// Every file is known by a fixed name; a request path is looked up among
/// them and never joined to a filesystem path.
struct WebChatFiles: Sendable {
    /// A file as it is served.
    struct File: Sendable, Equatable {
        let contentType: String
        let body: [UInt8]
    }

    /// Where `libjs-strophe` installs Strophe.js.
    static let strophePath = "/usr/share/javascript/strophe/strophe.js"
    /// What to do when Strophe.js is missing, for the log and for `/chat`.
    static let stropheMissing = "install libjs-strophe for the web chat at /chat"
    /// The page's files: name under `/chat/` and media type.
    static let pageFiles = [
        ("index.html", "text/html; charset=utf-8"),
        ("chat.css", "text/css; charset=utf-8"),
        ("client.js", "text/javascript; charset=utf-8"),
        ("chat.js", "text/javascript; charset=utf-8"),
    ]

    /// The files by name under `/chat/` (`strophe.js` among them).
    let files: [String: File]
    /// Why the chat cannot be served, when a file is missing.
    let unavailable: String?

    /// Reads the page from `pageDirectory` and Strophe.js from
    /// `strophePath`; a missing file makes the chat unavailable, with the
    /// reason in `unavailable`.
    static func load(
        pageDirectory: String? = resourceDirectory(), strophePath: String = strophePath
    ) -> WebChatFiles {
        var files: [String: File] = [:]
        for (name, type) in pageFiles {
            guard let pageDirectory, let data = FileManager.default.contents(atPath: "\(pageDirectory)/\(name)") else {
                return WebChatFiles(
                    files: [:],
                    unavailable: "the web chat's files are missing (\(resourceBundle) next to swiftletd)")
            }
            files[name] = File(contentType: type, body: Array(data))
        }
        guard let strophe = FileManager.default.contents(atPath: strophePath) else {
            return WebChatFiles(files: [:], unavailable: stropheMissing)
        }
        files["strophe.js"] = File(contentType: "text/javascript; charset=utf-8", body: Array(strophe))
        return WebChatFiles(files: files, unavailable: nil)
    }

    /// The resource bundle SwiftPM builds for this target, next to the
    /// executable (`swift build`, `swift run`, `swift test` alike).
    #if os(Linux)
        static let resourceBundle = "Swiftlet_XMPPServer.resources"
    #else
        static let resourceBundle = "Swiftlet_XMPPServer.bundle"
    #endif

    /// The page's directory in the resource bundle, when it is there.
    ///
    /// Not `Bundle.module`: its accessor stops the process when the bundle
    /// is missing (a `swiftletd` copied without it), and a server should
    /// rather serve everything else and answer `/chat` with `503`.
    static func resourceDirectory() -> String? {
        Bundle(url: Bundle.main.bundleURL.appendingPathComponent(resourceBundle))?
            .url(forResource: "Page", withExtension: nil)?.path
    }
}
