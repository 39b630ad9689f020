import Foundation
import XMPPCore

extension XMPPClient {
    /// Shares the file at `file` with `jid` the way today's clients send
    /// images and voice (XEP-0363): asks the server's upload service for a
    /// slot, PUTs the file there, then sends a chat message whose body is
    /// the download URL, also as XEP-0066 out-of-band data. Returns the
    /// message's id; the message is archived like any other.
    /// - Parameter contentType: The MIME type; by default from the file
    ///   name's extension, else `application/octet-stream`.
    /// - Throws: `.invalidRequest` when the file cannot be read or the
    ///   server has no upload service; `.stanzaError` when it refuses the
    ///   slot (too large, over quota); connection errors of the upload.
    @discardableResult
    public func sendFile(_ file: URL, to jid: JID, contentType: String? = nil) async throws(XMPPClientError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw .invalidRequest("cannot read \(file.path): \(error.localizedDescription)")
        }
        let name = file.lastPathComponent
        let type = contentType ?? Self.mediaType(ofFileNamed: name)
        let slot = try await requestUploadSlot(filename: name, size: data.count, contentType: type)
        // The server named the PUT URL's host, so it is trusted as the server is.
        let put = try await HTTPTransfer.run(
            "PUT", slot.put, headers: slot.headers + [("Content-Type", type)], body: Array(data),
            trust: { host throws(XMPPClientError) in try configuration.httpsTLSContext(host: host, namedByServer: true) },
            timeout: configuration.timeout + .seconds(data.count / (1 << 20)))
        guard (200..<300).contains(put.status) else {
            throw .stanzaError(.undefinedCondition, text: "the upload was refused with HTTP status \(put.status)")
        }
        guard connection != nil else { throw .notConnected }
        let id = makeID()
        var message = Message(type: .chat, to: jid, id: id, body: slot.get)
        message.element.append(
            Element(
                "x", namespace: NS.oob,
                children: [.element(Element("url", namespace: NS.oob, children: [.text(slot.get)]))]))
        guard transmit(message.element) else { throw .notConnected }
        await archive(
            ArchivedMessage(
                account: account, contact: jid.bare, body: slot.get, timestamp: Date(), isOutgoing: true, id: id,
                isRead: true))
        return id
    }

    /// Fetches `url` (an attachment's). An `https` URL's certificate must
    /// name its host; the client's TLS policy applies only when that host
    /// is the account's server, any other needs a certificate that chains
    /// to the system roots (see ``ClientTLSPolicy``).
    /// - Throws: `.stanzaError` with the HTTP status when it is not 200,
    ///   `.tls` for a certificate that is not trusted, and connection errors.
    public func download(_ url: String) async throws(XMPPClientError) -> [UInt8] {
        let response = try await HTTPTransfer.run(
            "GET", url,
            trust: { host throws(XMPPClientError) in try configuration.httpsTLSContext(host: host, namedByServer: false) },
            timeout: configuration.timeout + .seconds(60))
        guard response.status == 200 else {
            throw .stanzaError(.itemNotFound, text: "HTTP status \(response.status) for \(url)")
        }
        return response.body
    }

    /// The upload service: the first item of the server's disco#items
    /// whose disco#info lists `urn:xmpp:http:upload:0` (XEP-0363 §2).
    func uploadService() async throws(XMPPClientError) -> JID {
        if let uploadServiceJID { return uploadServiceJID }
        let domain = try? JID(localpart: nil, domainpart: account.domainpart)
        let items = try await request(.get, to: domain, payload: Element("query", namespace: NS.discoItems))
        let candidates = (items.payload?.elements ?? []).compactMap { $0[attribute: "jid"].flatMap { try? JID($0) } }
        for candidate in candidates {
            guard let info = try? await request(.get, to: candidate, payload: Element("query", namespace: NS.discoInfo))
            else { continue }
            let features = info.payload?.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] }
            if features?.contains(NS.httpUpload) == true {
                uploadServiceJID = candidate
                return candidate
            }
        }
        throw .invalidRequest("the server offers no HTTP file upload")
    }

    private func requestUploadSlot(filename: String, size: Int, contentType: String) async throws(XMPPClientError)
        -> (put: String, get: String, headers: [(String, String)])
    {
        let service = try await uploadService()
        let request = Element(
            "request", namespace: NS.httpUpload,
            attributes: ["filename": filename, "size": String(size), "content-type": contentType])
        let reply = try await self.request(.get, to: service, payload: request)
        let slot = reply.payload
        guard let put = slot?.child("put", namespace: NS.httpUpload), let putURL = put[attribute: "url"],
            let getURL = slot?.child("get", namespace: NS.httpUpload)?[attribute: "url"]
        else { throw .unsupportedServer("the upload slot has no PUT or GET URL") }
        // XEP-0363 §5: only these headers may be passed on, and without
        // line breaks.
        let allowed = ["authorization", "cookie", "expires"]
        let headers = put.elements.compactMap { header -> (String, String)? in
            guard header.name == "header", let name = header[attribute: "name"],
                allowed.contains(name.lowercased()), !header.text.contains(where: \.isNewline)
            else { return nil }
            return (name, header.text)
        }
        return (putURL, getURL, headers)
    }

    /// A MIME type for common image, audio and video file names.
    public static func mediaType(ofFileNamed name: String) -> String {
        let types = [
            "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
            "heic": "image/heic", "m4a": "audio/mp4", "mp3": "audio/mpeg", "ogg": "audio/ogg", "opus": "audio/ogg",
            "wav": "audio/wav", "mp4": "video/mp4", "mov": "video/quicktime", "pdf": "application/pdf",
            "txt": "text/plain",
        ]
        let suffix = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return types[suffix] ?? "application/octet-stream"
    }
}
