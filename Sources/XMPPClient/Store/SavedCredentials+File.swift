import Foundation
import XMPPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The credentials file: JSON, private to its owner.
///
/// ```json
/// {
///   "clientKey" : "<base64>", "format" : 1, "host" : "xmpp.example.com",
///   "iterations" : 4096, "jid" : "juliet@example.com",
///   "mechanism" : "SCRAM-SHA-256", "port" : 5222, "salt" : "<base64>",
///   "serverKey" : "<base64>", "tls" : "require",
///   "userAgent" : "<UUID>",
///   "fastToken" : { "token" : "…", "mechanism" : "HT-SHA-256-EXPR",
///                   "expiry" : "2026-12-23T10:00:00Z" }
/// }
/// ```
///
/// `host`, `port`, `userAgent` and `fastToken` are left out when `nil`
/// (files from before SASL2 have neither of the last two, and still read);
/// `tls` is `ClientTLSPolicy`'s text form; the hash function is the
/// mechanism's; `expiry` is an XEP-0082 DateTime.
extension SavedCredentials {
    /// The file's JSON object. `Data` encodes as base64.
    private struct File: Codable {
        /// The only `format` this version reads and writes.
        static let currentFormat = 1

        var format: Int
        var jid: String
        var mechanism: String
        var salt: Data
        var iterations: Int
        var clientKey: Data
        var serverKey: Data
        var host: String?
        var port: Int?
        var tls: String
        var userAgent: String?
        var fastToken: Token?

        /// A FAST token's fields.
        struct Token: Codable {
            var token: String
            var mechanism: String
            var expiry: String
        }

        /// The file form of `credentials`.
        init(_ credentials: SavedCredentials) {
            format = Self.currentFormat
            jid = credentials.jid.description
            mechanism = credentials.mechanism.rawValue
            salt = Data(credentials.keys.salt)
            iterations = credentials.keys.iterations
            clientKey = Data(credentials.keys.clientKey)
            serverKey = Data(credentials.keys.serverKey)
            host = credentials.host
            port = credentials.port
            tls = credentials.tls.description
            userAgent = credentials.userAgentID?.uuidString.lowercased()
            fastToken = credentials.fastToken.map {
                Token(token: $0.token, mechanism: $0.mechanism.rawValue, expiry: $0.expiryText)
            }
        }
    }

    /// The largest file `read(from:)` accepts, in bytes; a real one is
    /// under 1 KiB.
    static let maximumFileSize = 64 * 1024

    /// Writes the credentials to `path`, readable and writable by the owner
    /// only (mode 0600), replacing any file there in one step.
    ///
    /// The JSON goes to a new temporary file in the same directory, created
    /// with mode 0600 before any byte is written and synced to disk, which
    /// is then renamed over `path`: a reader sees the old file or the new
    /// one, never a part. A missing directory is created with mode 0700.
    ///
    /// - Throws: `SavedCredentialsError.cannotWrite`.
    ///
    /// The corresponding C functions are `open` with `O_EXCL`, `fchmod`,
    /// `write`, `fsync` and `rename`.
    public func write(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        let temporaryPath =
            directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)").path
        func failure(_ what: String) -> SavedCredentialsError {
            .cannotWrite(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
        }
        let contents: Data
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            contents = try encoder.encode(File(self))
        } catch {
            throw SavedCredentialsError.cannotWrite(path: path, reason: error.localizedDescription)
        }
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(temporaryPath)") }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            // The umask can only clear bits, but be exact about a secret's mode.
            guard fchmod(descriptor, 0o600) == 0 else { throw failure("cannot set the file mode") }
            try file.write(contentsOf: contents)
            try file.synchronize()
            try file.close()
            guard rename(temporaryPath, path) == 0 else { throw failure("cannot rename") }
        } catch {
            unlink(temporaryPath)
            throw error as? SavedCredentialsError
                ?? .cannotWrite(path: path, reason: error.localizedDescription)
        }
    }

    /// Reads credentials that `write(to:)` saved.
    ///
    /// - Throws: `SavedCredentialsError`: `.notFound` when there is no file,
    ///   `.insecureFile` when group or others may access it (as `ssh`
    ///   refuses such a key), `.malformed` for anything but what `write(to:)`
    ///   writes, `.cannotRead` otherwise.
    ///
    /// The corresponding C functions are `open`, `fstat` and `read`.
    public static func read(from path: String) throws -> SavedCredentials {
        // O_NONBLOCK: opening a FIFO placed at the path must not hang; it has
        // no effect on a regular file.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            throw code == ENOENT
                ? SavedCredentialsError.notFound(path: path)
                : .cannotRead(path: path, reason: String(cString: strerror(code)))
        }
        // The checks look at the opened file itself, so a file swapped in
        // between a check and the read cannot slip through.
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw SavedCredentialsError.cannotRead(
                path: path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SavedCredentialsError.cannotRead(path: path, reason: "not a regular file")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw SavedCredentialsError.insecureFile(
                path: path, mode: UInt32(status.st_mode & 0o7777))
        }
        guard status.st_size <= maximumFileSize else {
            throw SavedCredentialsError.malformed(path: path, reason: "the file is too large")
        }
        let contents: Data
        do {
            contents = try file.readToEnd() ?? Data()
        } catch {
            throw SavedCredentialsError.cannotRead(path: path, reason: error.localizedDescription)
        }
        return try decode(contents, path: path)
    }

    /// Parses and checks the file's contents.
    private static func decode(_ contents: Data, path: String) throws -> SavedCredentials {
        func malformed(_ reason: String) -> SavedCredentialsError {
            .malformed(path: path, reason: reason)
        }
        // The decoder's own message is not passed on: it may quote the file.
        guard let file = try? JSONDecoder().decode(File.self, from: contents) else {
            throw malformed("not a JSON object with the expected fields")
        }
        guard file.format == File.currentFormat else {
            throw malformed("format \(file.format) is not known to this version")
        }
        guard let jid = try? JID(file.jid), jid.isBare else {
            throw malformed("\"jid\" is not a bare JID")
        }
        guard let mechanism = SASLMechanism(rawValue: file.mechanism),
            let hashFunction = mechanism.scramHashFunction
        else { throw malformed("\"mechanism\" is not a SCRAM mechanism") }
        guard
            let keys = SCRAMClientKeys(
                hashFunction: hashFunction, salt: Array(file.salt), iterations: file.iterations,
                clientKey: Array(file.clientKey), serverKey: Array(file.serverKey))
        else { throw malformed("the keys do not fit \(mechanism.rawValue)") }
        guard file.port.map(portRange.contains) ?? true else {
            throw malformed("\"port\" is not a TCP port")
        }
        guard let tls = ClientTLSPolicy(file.tls) else {
            throw malformed("\"tls\" is not require, insecure or pin:<SHA-256 fingerprint>")
        }
        let userAgentID = try file.userAgent.map { text in
            guard let id = UUID(uuidString: text) else { throw malformed("\"userAgent\" is not a UUID") }
            return id
        }
        let fastToken = try file.fastToken.map { token in
            guard let mechanism = FASTMechanism(rawValue: token.mechanism),
                let expiry = FASTToken.date(from: token.expiry), !token.token.isEmpty
            else { throw malformed("\"fastToken\" is not a token, a FAST mechanism and an expiry") }
            return FASTToken(token: token.token, mechanism: mechanism, expiry: expiry)
        }
        return SavedCredentials(
            jid: jid, mechanism: mechanism, keys: keys, host: file.host, port: file.port, tls: tls,
            fastToken: fastToken, userAgentID: userAgentID)
    }
}
