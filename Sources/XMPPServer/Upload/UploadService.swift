import XMPPStorage

/// The server's upload service (XEP-0363) as the XMPP side and the HTTP
/// side share it: settings, the URL signer, the files on disk, and the
/// public base URL, which is known only once the HTTP listeners are bound.
///
/// Shared by every loop's context: `baseURL` is written once, on the
/// first loop, before any listener accepts a connection.
public final class UploadService {
    /// The `upload_*` settings.
    let settings: ServerConfig.Upload
    /// The addresses the service answers at, the disco-listed one first.
    let addresses: [String]
    let signer: UploadSigner
    let files: UploadFiles
    /// The base of the URLs handed out, without a trailing slash, such as
    /// `http://localhost:5280`.
    public internal(set) var baseURL: String

    /// Creates the service for `config`; the base URL comes from the
    /// configured ports until `Server` sets the bound ones.
    init(config: ServerConfig, serverSecret: [UInt8]) {
        settings = config.upload
        addresses = config.uploadServiceAddresses
        signer = UploadSigner(serverSecret: serverSecret)
        files = UploadFiles(dataDirectory: config.dataDirectory)
        baseURL = config.effectiveUploadURL()?.url ?? ""
    }

    /// How long a slot's record outlives the slot when no file arrives
    /// (an upload that began in time may still be running).
    static let unusedSlotGrace = 3600

    /// The GET URL of a file: `BASE/upload/<slot>/<name, percent-encoded>`.
    func getURL(slot: String, filename: String) -> String {
        "\(baseURL)/upload/\(slot)/\(UploadNaming.percentEncoded(filename))"
    }

    /// The PUT URL of a slot: the GET URL with its signed permit.
    func putURL(for record: UploadRecord, expiry: Int) -> String {
        let permit = signer.permit(
            slot: record.slotID, filename: record.filename, size: record.size, contentType: record.contentType,
            expiry: expiry)
        return getURL(slot: record.slotID, filename: record.filename) + "?v=" + permit
    }

    /// Deletes expired files and their records, slots never used long after
    /// their expiry, and files whose record is gone (a deleted account, a
    /// crash between the two); on the storage thread, logging the outcome.
    func purge(storage: any StorageJobs, log: Logger, now: Int = WallClock.now()) {
        let files = self.files
        let cutoff = now - Int(settings.expiry.components.seconds)
        let unusedCutoff = now - Int(settings.slotLifetime.components.seconds) - Self.unusedSlotGrace
        storage.submit({ stores -> (expired: Int, orphans: Int) in
            let expired = try stores.uploads.removeExpired(createdBefore: cutoff, unusedCreatedBefore: unusedCutoff)
            for slot in expired { files.remove(slot) }
            let onDisk = files.slotsOnDisk()
            let known = try stores.uploads.existingSlots(onDisk)
            let orphans = onDisk.filter { !known.contains($0) }
            for slot in orphans { files.remove(slot) }
            return (expired.count, orphans.count)
        }) { result in
            switch result {
            case .success(let counts) where counts.expired + counts.orphans > 0:
                log.info("uploads purged: \(counts.expired) expired, \(counts.orphans) without a record")
            case .success:
                break
            case .failure(let error):
                log.error("purging uploads failed: \(error)")
            }
        }
    }
}
