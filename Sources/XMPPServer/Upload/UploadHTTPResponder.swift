import Dispatch
import XMPPNet
import XMPPStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The HTTP side of XEP-0363: the requests the built-in HTTP server
/// answers, all under `/upload/<slot id>/<file name>`.
///
/// | request | answer |
/// |---------|--------|
/// | `PUT` with a valid permit (`?v=`, see `UploadSigner`), `Content-Length` = the slot's size, `Content-Type` = the slot's type (none: `application/octet-stream`) | `201 Created` once the file is on disk (XEP-0363 §6) |
/// | `PUT` with no `Content-Length` | `411` |
/// | `PUT` with a chunked body | `501` (`HTTPConnection`) |
/// | `PUT` larger than the slot or `upload_max_size` / smaller than the slot | `413` / `400` |
/// | `PUT` with a missing, forged or expired permit, or another type | `403` |
/// | `PUT` to a slot already uploaded to, or being uploaded to | `409` |
/// | `GET`, `HEAD` of an uploaded file (no permit needed) | `200` with type, length, `Content-Disposition` (inline for images, audio, video), `nosniff`, `Content-Security-Policy: default-src 'none'`, `ETag`, `Cache-Control` until expiry; `304` for a matching `If-None-Match` |
/// | `GET`, `HEAD` of anything else | `404` |
/// | `OPTIONS` (CORS preflight of web clients) | `204` allowing `PUT` with `Content-Type` from any origin |
/// | any other method | `405` |
///
/// `Range` is not supported: downloads are whole files (`Accept-Ranges: none`).
final class UploadHTTPResponder: HTTPResponder {
    private let server: ServerContext
    private let service: UploadService

    init(server: ServerContext, service: UploadService) {
        self.server = server
        self.service = service
    }

    /// Why a PUT to a completed slot is refused.
    static let alreadyUploaded = "this file was uploaded already"

    /// Sent with every answer: uploads and downloads from web clients.
    private static let cors = [(name: "Access-Control-Allow-Origin", value: "*")]

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        switch request.method {
        case "OPTIONS":
            connection.respond(
                HTTPResponse(
                    .noContent,
                    fields: Self.cors + [
                        ("Access-Control-Allow-Methods", "GET, HEAD, PUT, OPTIONS"),
                        ("Access-Control-Allow-Headers", "Content-Type"), ("Access-Control-Max-Age", "86400"),
                    ]))
        case "GET", "HEAD":
            guard let (slot, filename) = Self.parsePath(request.path) else { return notFound(connection) }
            download(slot, filename, request, on: connection)
        case "PUT":
            guard let (slot, filename) = Self.parsePath(request.path) else { return notFound(connection) }
            upload(slot, filename, request, on: connection)
        default:
            connection.respond(
                .text(
                    .methodNotAllowed, "only GET, HEAD, PUT and OPTIONS are served",
                    fields: Self.cors + [("Allow", "GET, HEAD, PUT, OPTIONS")]))
        }
    }

    /// The slot id and the decoded file name of `/upload/<slot>/<name>`.
    static func parsePath(_ path: Substring) -> (slot: String, filename: String)? {
        guard path.hasPrefix("/upload/") else { return nil }
        let parts = path.dropFirst("/upload/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, UploadSlotID.isValid(parts[0]),
            let name = UploadNaming.percentDecoded(parts[1]).flatMap(UploadNaming.checkedFilename)
        else { return nil }
        return (String(parts[0]), name)
    }

    private func notFound(_ connection: HTTPConnection) {
        connection.respond(.text(.notFound, "no such file", fields: Self.cors))
    }

    private func refuse(_ connection: HTTPConnection, _ status: HTTPStatus, _ text: String) {
        connection.respond(.text(status, text, fields: Self.cors))
    }

    // MARK: - PUT

    private func upload(_ slot: String, _ filename: String, _ request: HTTPRequestHead, on connection: HTTPConnection) {
        let permit = request.query?.split(separator: "&").first { $0.hasPrefix("v=") }?.dropFirst(2)
        guard let permit else { return refuse(connection, .forbidden, "this URL carries no upload permit") }
        guard let length = request.contentLength, request[field: "content-length"] != nil else {
            return refuse(connection, .lengthRequired, "an upload needs Content-Length")
        }
        guard length <= service.settings.maxFileSize else {
            return refuse(connection, .contentTooLarge, "files may have at most \(service.settings.maxFileSize) bytes")
        }
        var contentType = UploadNaming.defaultContentType
        if let given = request[field: "content-type"] {
            guard let checked = UploadNaming.checkedContentType(given) else {
                return refuse(connection, .badRequest, "Content-Type is not a media type")
            }
            contentType = checked
        }
        let verdict = service.signer.verify(
            permit: permit, slot: slot, filename: filename, contentType: contentType, now: WallClock.now())
        switch verdict {
        case .malformed:
            return refuse(connection, .forbidden, "the upload permit is malformed")
        case .forged:
            return refuse(
                connection, .forbidden,
                "this URL does not permit this upload (or Content-Type differs from the slot request's)")
        case .expired:
            return refuse(connection, .forbidden, "this upload URL has expired; ask for a new slot")
        case .valid(let size) where length > size:
            return refuse(connection, .contentTooLarge, "this slot is for \(size) bytes, not \(length)")
        case .valid(let size) where length < size:
            return refuse(connection, .badRequest, "this slot is for \(size) bytes, not \(length)")
        case .valid:
            break
        }
        // The part file first, then the check: an upload that completes
        // in between has published its file by the time the part file can
        // be created again, so the check sees it.
        let files = service.files
        let descriptor: Int32
        do {
            descriptor = try files.createPart(of: slot)
        } catch where error.errno == EEXIST {
            return refuse(connection, .conflict, "an upload to this slot is in progress")
        } catch {
            server.log.error("upload to slot \(slot): \(error)")
            return refuse(connection, .internalServerError, "the file cannot be stored")
        }
        guard !files.isComplete(slot, filename) else {
            files.discardPart(of: slot, descriptor: descriptor)
            return refuse(connection, .conflict, Self.alreadyUploaded)
        }
        connection.receiveBody(
            into: UploadSink(slot: slot, filename: filename, descriptor: descriptor, server: server, files: files))
    }

    // MARK: - GET and HEAD

    private func download(
        _ slot: String, _ filename: String, _ request: HTTPRequestHead, on connection: HTTPConnection
    ) {
        let expiry = Int(service.settings.expiry.components.seconds)
        let files = service.files
        server.storage.run(on: server.loop, { stores in try stores.uploads.upload(slot) }) { [server] result in
            let record: UploadRecord
            switch result {
            case .success(let found?) where found.isUploaded && found.filename == filename:
                record = found
            case .success:
                return connection.respond(.text(.notFound, "no such file", fields: Self.cors))
            case .failure(let error):
                server.log.error("looking up upload \(slot) failed: \(error)")
                return connection.respond(.text(.internalServerError, "try again later", fields: Self.cors))
            }
            let etag = "\"\(slot)\""
            let maxAge = max(0, record.created + expiry - WallClock.now())
            let caching = [("ETag", etag), ("Cache-Control", "public, max-age=\(maxAge), immutable")]
            if let match = request[field: "if-none-match"], match == etag || match == "*" {
                return connection.respond(HTTPResponse(.notModified, fields: Self.cors + caching))
            }
            guard let (descriptor, size) = files.openForReading(slot, filename) else {
                return connection.respond(.text(.notFound, "no such file", fields: Self.cors))
            }
            let disposition = UploadNaming.isInline(record.contentType) ? "inline" : "attachment"
            let fields =
                Self.cors + caching + [
                    ("Content-Type", record.contentType), ("Content-Length", String(size)),
                    ("Content-Disposition", "\(disposition); \(Self.dispositionFilename(filename))"),
                    ("X-Content-Type-Options", "nosniff"),
                    ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
                    ("Accept-Ranges", "none"),
                ]
            connection.sendFile(HTTPResponse(.ok, fields: fields), descriptor: descriptor, length: size)
        }
    }

    /// `filename="<ASCII>"; filename*=UTF-8''<encoded>` (RFC 6266 §4.3):
    /// an ASCII stand-in for old browsers, the real name for the rest.
    static func dispositionFilename(_ name: String) -> String {
        let ascii = String(
            name.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && scalar.value >= 0x20 && scalar != "\"" && scalar != "\\" ? Character(scalar) : "_"
            })
        return "filename=\"\(ascii)\"; filename*=UTF-8''\(UploadNaming.percentEncoded(name))"
    }
}

/// An upload's body on its way to disk: written into the slot's part file
/// as it arrives, then (off the loop, since `fsync` is slow) flushed and
/// linked into place, then recorded as uploaded.
final class UploadSink: HTTPBodySink {
    private let slot: String
    private let filename: String
    private let descriptor: Int32
    private let server: ServerContext
    private let files: UploadFiles
    /// Set once `finish` or `abort` took the descriptor.
    private var isDone = false

    init(slot: String, filename: String, descriptor: Int32, server: ServerContext, files: UploadFiles) {
        self.slot = slot
        self.filename = filename
        self.descriptor = descriptor
        self.server = server
        self.files = files
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try UploadFiles.writeAll(descriptor, bytes)
        server.metrics.uploadBytesReceived &+= UInt64(bytes.count)
    }

    func finish(_ completion: @escaping (HTTPResponse) -> Void) {
        guard !isDone else { return }
        isDone = true
        let (slot, filename, descriptor, files) = (self.slot, self.filename, self.descriptor, self.files)
        let log = server.log
        let waiting = LoopBound((completion, server), on: server.loop)
        DispatchQueue.global().async {
            do throws(UploadFileError) {
                try files.complete(slot, filename, descriptor: descriptor)
            } catch where error.errno == EEXIST {
                return waiting.execute { $0.0(.text(.conflict, UploadHTTPResponder.alreadyUploaded)) }
            } catch {
                log.error("upload to slot \(slot): \(error)")
                files.remove(slot)
                return waiting.execute { $0.0(.text(.internalServerError, "the file cannot be stored")) }
            }
            waiting.execute { completion, server in
                Self.record(slot, files: files, server: server, completion)
            }
        }
    }

    /// Marks the slot's file uploaded, answering 201; a slot whose record
    /// is gone (expired, or its account deleted) loses its file.
    private static func record(
        _ slot: String, files: UploadFiles, server: ServerContext, _ completion: @escaping (HTTPResponse) -> Void
    ) {
        server.storage.run(on: server.loop, { stores in try stores.uploads.markUploaded(slot) }) { result in
            switch result {
            case .success(true):
                server.log.info("upload to slot \(slot) complete")
                completion(HTTPResponse(.created, fields: [("Access-Control-Allow-Origin", "*")]))
            case .success(false):
                files.remove(slot)
                completion(.text(.forbidden, "this slot was withdrawn"))
            case .failure(let error):
                server.log.error("recording upload \(slot) failed: \(error)")
                completion(.text(.internalServerError, "try again later"))
            }
        }
    }

    func abort() {
        guard !isDone else { return }
        isDone = true
        files.discardPart(of: slot, descriptor: descriptor)
    }
}
