import Foundation
import XMPPCore
import XMPPStorage

/// XEP-0363: HTTP File Upload, the XMPP side: the upload service at
/// `upload.<domain>` (and `httpfileupload.<domain>`, where Openfire's
/// plugin answers unchanged XMPPFramework apps) hands out slots, a PUT URL
/// and a GET URL each, that the built-in HTTP server honours
/// (`UploadHTTPResponder`).
///
/// | request to the service                     | answer                                         |
/// |--------------------------------------------|------------------------------------------------|
/// | disco#info                                 | identity store/file, both namespaces, `max-file-size` forms (§3) |
/// | `<request filename size content-type/>` in `urn:xmpp:http:upload:0` (§4) | `<slot><put url/><get url/></slot>` |
/// | `<request><filename/><size/><content-type/></request>` in `urn:xmpp:http:upload` (XEP-0363 0.2, XMPPFramework) | the same in that namespace, URLs in `url=` (XMPPFRAMEWORK.md §12) |
/// | a file over `upload_max_size`              | `not-acceptable` with `<file-too-large><max-file-size/>` (§5) |
/// | a file over what is left of `upload_quota` (each slot counts at least 4 KiB) | `resource-constraint` (wait) |
/// | a bad file name, size or content type      | `bad-request`                                  |
/// | before authentication                      | `forbidden`                                    |
/// | `upload = no`                              | `service-unavailable` (the address stays local) |
///
/// The server's disco#items lists the service (§3: "A user's server SHOULD
/// include any known entities that provide such services").
///
/// Empty files (size 0) get a slot like any other: they are rare but
/// legitimate (an empty note, a placeholder), and a client that shares
/// whatever file its user picks would otherwise fail on them. What made
/// them a risk was that they cost no quota while each takes a directory
/// and a file on disk; every slot, empty or small, now counts at least
/// one filesystem block toward `upload_quota`
/// (`UploadRecord.minimumQuotaCharge`), which bounds the files a user can
/// make.
public struct HTTPUpload: ServerFeature {
    /// The name in disco.
    static let name = "HTTP File Upload"

    private let addresses: [String]
    private let enabled: Bool

    /// The feature as `config` sets it up.
    public init(config: ServerConfig) {
        addresses = config.uploadServiceAddresses
        enabled = config.upload.enabled
    }

    public func install(_ hooks: Hooks) {
        for address in addresses { hooks.addServiceDomain(address) }
        guard enabled else { return }
        let services = addresses.map(IQTarget.service)
        hooks.advertiseItem(DiscoItem(jid: addresses[0], name: Self.name))
        // A deleted account's files go with it.
        hooks.on(AccountDeleted.self) { deletion in
            for slot in deletion.deleted.uploadSlots { deletion.server.upload?.files.remove(slot) }
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: services, Self.discoInfo)
        hooks.onIQ(.get, NS.discoItems, "query", to: services) { request in
            .result(try DiscoAnswer.query(request))
        }
        for namespace in [NS.httpUpload, NS.httpUploadLegacy] {
            hooks.onIQ(.get, namespace, "request", to: services, Self.requestSlot)
            hooks.onIQ(.get, namespace, "request", to: [.unauthenticated]) { _ in
                throw StanzaError(.forbidden, text: "log in to upload files")
            }
        }
    }

    // MARK: - Discovery

    @Sendable private static func discoInfo(_ request: IQRequest) throws -> IQAnswer {
        guard let service = request.server.upload else { throw StanzaError(.serviceUnavailable) }
        var query = try DiscoAnswer.query(request)
        query.append(DiscoAnswer.identity(category: "store", type: "file", name: name))
        query = DiscoAnswer.adding([NS.discoInfo, NS.discoItems, NS.httpUpload, NS.httpUploadLegacy], to: query)
        for namespace in [NS.httpUpload, NS.httpUploadLegacy] {
            query.append(limitsForm(namespace, maxFileSize: service.settings.maxFileSize))
        }
        return .result(query)
    }

    /// The XEP-0128 form announcing `max-file-size` (§3) under `namespace`.
    static func limitsForm(_ namespace: String, maxFileSize: Int) -> Element {
        func field(_ name: String, _ value: String, hidden: Bool = false) -> Element {
            var field = Element("field", namespace: NS.dataForms, attributes: ["var": name])
            if hidden { field[attribute: "type"] = "hidden" }
            var element = Element("value", namespace: NS.dataForms)
            element.append(text: value)
            field.append(element)
            return field
        }
        var form = Element("x", namespace: NS.dataForms, attributes: ["type": "result"])
        form.append(field("FORM_TYPE", namespace, hidden: true))
        form.append(field("max-file-size", String(maxFileSize)))
        return form
    }

    // MARK: - Slots

    /// What a slot request asked for, from either namespace.
    struct SlotRequest: Equatable {
        var filename: String?
        var size: String?
        var contentType: String?

        /// Reads attributes (`urn:xmpp:http:upload:0`) or child elements
        /// (`urn:xmpp:http:upload`).
        init(_ payload: Element) {
            if payload.namespace == NS.httpUpload {
                filename = payload[attribute: "filename"]
                size = payload[attribute: "size"]
                contentType = payload[attribute: "content-type"]
            } else {
                filename = payload.childText("filename")
                size = payload.childText("size")
                contentType = payload.childText("content-type")
            }
        }
    }

    @Sendable private static func requestSlot(_ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        guard let service = session.server.upload else { throw StanzaError(.serviceUnavailable) }
        guard let username = session.username else { throw StanzaError(.forbidden) }
        let record = try checkedRecord(request.iq.payload!, service: service, owner: username).get()
        let quota = service.settings.quota
        return .afterStorage({ stores in try stores.uploads.reserve(record, quota: quota) }) { used in
            if let used {
                session.log.notice("upload quota of \(username) reached")
                session.server.metrics.limitsHit.increment(.uploadQuota)
                throw StanzaError(
                    .resourceConstraint, type: .wait,
                    text: "upload quota reached: \(used) of \(quota) bytes in use, \(record.quotaCharge) more needed")
            }
            session.log.info("upload slot \(record.slotID) for \(record.size) bytes")
            let expiry = record.created + Int(service.settings.slotLifetime.components.seconds)
            return .result(
                slot(
                    request.iq.payload!.namespace, put: service.putURL(for: record, expiry: expiry),
                    get: service.getURL(slot: record.slotID, filename: record.filename)))
        }
    }

    /// The record for a slot request, or the error that refuses it.
    static func checkedRecord(
        _ payload: Element, service: UploadService, owner: String, now: Int = WallClock.now()
    ) -> Result<UploadRecord, StanzaError> {
        let asked = SlotRequest(payload)
        guard let filename = asked.filename.flatMap(UploadNaming.checkedFilename) else {
            return .failure(
                StanzaError(
                    .badRequest, text: "a file name needs 1 to 255 bytes, without '/', '\\' or control characters"))
        }
        guard let size = asked.size.flatMap({ wholeNumber($0.trimmingCharacters(in: .whitespaces)) }) else {
            return .failure(StanzaError(.badRequest, text: "the size must be a whole number of bytes"))
        }
        let limit = service.settings.maxFileSize
        guard size <= limit else {
            var tooLarge = Element("file-too-large", namespace: payload.namespace)
            var maximum = Element("max-file-size", namespace: payload.namespace)
            maximum.append(text: String(limit))
            tooLarge.append(maximum)
            return .failure(
                StanzaError(
                    .notAcceptable, type: .modify, text: "file too large: the maximum file size is \(limit) bytes",
                    applicationCondition: tooLarge))
        }
        var contentType = UploadNaming.defaultContentType
        if let given = asked.contentType, !given.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let checked = UploadNaming.checkedContentType(given) else {
                return .failure(StanzaError(.badRequest, text: "the content type is not a media type"))
            }
            contentType = checked
        }
        return .success(
            UploadRecord(
                slotID: UploadSlotID.make(), owner: owner, filename: filename, size: size, contentType: contentType,
                created: now))
    }

    /// `<slot><put url/><get url/></slot>` in `namespace`. No `<header/>`:
    /// the PUT URL carries its permit.
    ///
    /// COMPAT: XMPPFramework: URLs in `url=` in the old namespace too, and
    /// no headers, whose text it would take into the URL (XMPPFRAMEWORK.md §12).
    static func slot(_ namespace: String, put: String, get: String) -> Element {
        var slot = Element("slot", namespace: namespace)
        slot.append(Element("put", namespace: namespace, attributes: ["url": put]))
        slot.append(Element("get", namespace: namespace, attributes: ["url": get]))
        return slot
    }
}
