// swift-tools-version:6.0
import PackageDescription

/// Swiftlet: a small single-domain XMPP server (`swiftletd`), a client kit
/// and a CLI (`swiftlet`) on one shared core (`XMPPCore`).
///
/// The only dependencies are the Swift toolchain and three C libraries from
/// the system: Expat, SQLite3 and OpenSSL (Debian: libexpat1-dev,
/// libsqlite3-dev, libssl-dev).
let package = Package(
    name: "Swiftlet",
    products: [
        .library(name: "XMPPCore", targets: ["XMPPCore"]),
        .library(name: "SQLiteKit", targets: ["SQLiteKit"]),
        .library(name: "XMPPStorage", targets: ["XMPPStorage"]),
        .library(name: "XMPPNet", targets: ["XMPPNet"]),
        .library(name: "XMPPClient", targets: ["XMPPClient"]),
        .executable(name: "swiftletd", targets: ["swiftletd"]),
        .executable(name: "swiftlet", targets: ["swiftlet"]),
    ],
    targets: [
        // System C libraries: a module map plus a shim header each.
        .systemLibrary(
            name: "CExpat", path: "Sources/CExpat", pkgConfig: "expat",
            providers: [.apt(["libexpat1-dev"]), .brew(["expat"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(
            name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // epoll/eventfd/timerfd, which Glibc does not export to Swift.
        .target(name: "CSystem", path: "Sources/CSystem"),

        .target(
            name: "XMPPCore",
            dependencies: ["CExpat", "COpenSSL"],
            path: "Sources/XMPPCore"),
        // A generic SQLite kit: connection, statements, migrations, the WAL
        // checkpointer, and the serial storage thread that owns a connection.
        .target(name: "SQLiteKit", dependencies: ["CSQLite"], path: "Sources/SQLiteKit"),
        // The server's stores (SQLite and in-memory) and its schema.
        .target(
            name: "XMPPStorage",
            dependencies: ["SQLiteKit", "XMPPCore"],
            path: "Sources/XMPPStorage"),
        .target(
            name: "XMPPServer", dependencies: ["XMPPCore", "XMPPNet", "SQLiteKit", "XMPPStorage"],
            path: "Sources/XMPPServer",
            // The web chat's page (`WebChatFiles`), served at /chat.
            resources: [.copy("WebChat/Page")]),
        // The async client kit: connection, roster, presence, messages, a
        // local archive and reconnect.
        .target(
            name: "XMPPClient", dependencies: ["XMPPCore", "XMPPNet", "SQLiteKit"],
            path: "Sources/XMPPClient"),
        // Doubles for server tests: in-memory storage and transport, a test
        // server on a `ManualLoop`, the scripted-conversation runner.
        .target(
            name: "XMPPTestSupport", dependencies: ["XMPPServer", "XMPPNet", "CSystem"], path: "Sources/XMPPTestSupport"),
        // The loop abstraction (`Loop`, `LoopBound`), its epoll
        // implementation with TCP and timers, and the deterministic
        // `ManualLoop`.
        .target(name: "XMPPNet", dependencies: ["CSystem"], path: "Sources/XMPPNet"),
        // What both executables need from the terminal: password input and
        // exit statuses.
        .target(name: "TerminalSupport", path: "Sources/TerminalSupport"),
        // The swiftlet CLI's toolkit, which tests can reach without a
        // network: parsing, the CLI's output formats, error mapping.
        .target(
            name: "CommandLineSupport",
            dependencies: ["XMPPCore", "XMPPClient", "TerminalSupport"],
            path: "Sources/CommandLineSupport"),
        .executableTarget(
            name: "swiftletd",
            dependencies: ["XMPPServer", "XMPPStorage", "SQLiteKit", "TerminalSupport"],
            path: "Sources/swiftletd"),
        .executableTarget(
            name: "swiftlet",
            dependencies: ["CommandLineSupport", "TerminalSupport", "XMPPClient"],
            path: "Sources/swiftlet"),
        .executableTarget(
            name: "parser-benchmark",
            dependencies: ["XMPPCore", "CExpat"],
            path: "tools/parser-benchmark"),

        .testTarget(
            name: "XMPPCoreTests",
            dependencies: ["XMPPCore", "CExpat"],
            path: "Tests/XMPPCoreTests"),
        .testTarget(name: "SQLiteKitTests", dependencies: ["SQLiteKit", "CSQLite"], path: "Tests/SQLiteKitTests"),
        .testTarget(
            name: "XMPPStorageTests",
            dependencies: ["XMPPStorage", "SQLiteKit"],
            path: "Tests/XMPPStorageTests"),
        .testTarget(
            name: "XMPPServerTests", dependencies: ["XMPPServer", "XMPPNet", "XMPPTestSupport"],
            path: "Tests/XMPPServerTests"),
        .testTarget(
            name: "XMPPClientTests", dependencies: ["XMPPClient", "XMPPServer", "XMPPTestSupport"],
            path: "Tests/XMPPClientTests"),
        .testTarget(
            name: "CommandLineSupportTests",
            dependencies: ["CommandLineSupport", "TerminalSupport", "XMPPClient", "XMPPCore"],
            path: "Tests/CommandLineSupportTests"),
        .testTarget(name: "TerminalSupportTests", dependencies: ["TerminalSupport"], path: "Tests/TerminalSupportTests"),
        .testTarget(name: "XMPPNetTests", dependencies: ["XMPPNet"], path: "Tests/XMPPNetTests"),
        .testTarget(
            name: "CSystemTests",
            dependencies: ["CSystem"],
            path: "Tests/CSystemTests"),
    ],
    swiftLanguageModes: [.v6]
)

/// The libFuzzer harnesses (`tools/fuzz/README.md`): one executable per
/// parser, named `fuzz-<target>`, in `tools/fuzz/<target>/`. Built plainly
/// they replay the inputs named on their command line; `tools/fuzz.sh`
/// builds them with `--sanitize fuzzer`.
let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
    ("xml-stream", ["XMPPCore"]),
    ("jid", ["XMPPCore"]),
    ("scram", ["XMPPCore"]),
    ("http", ["XMPPServer"]),
    ("config", ["XMPPServer"]),
    ("stored-stanza", ["XMPPCore", "XMPPServer"]),
    ("websocket", ["XMPPServer"]),
]
package.targets.append(.target(name: "FuzzSupport", path: "tools/fuzz/FuzzSupport"))
package.targets += fuzzTargets.map { target in
    .executableTarget(
        name: "fuzz-\(target.name)", dependencies: ["FuzzSupport"] + target.dependencies,
        path: "tools/fuzz/\(target.name)")
}
