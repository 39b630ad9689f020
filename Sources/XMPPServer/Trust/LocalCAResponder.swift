import XMPPCore

/// Serves the local CA's root so that a device can fetch it before it
/// trusts the server: `/ca.mobileconfig`, an Apple configuration profile
/// Safari offers to install (`AppleConfigurationProfile`), and `/ca.pem`,
/// the certificate itself. Both are public by nature; the key never
/// leaves the data directory.
final class LocalCAResponder: HTTPResponder {
    static let profilePath = "/ca.mobileconfig"
    static let certificatePath = "/ca.pem"

    private let profile: [UInt8]
    private let certificate: [UInt8]

    /// Reads the root once, at start.
    init(authority: LocalCertificateAuthority) throws {
        profile = Array(try AppleConfigurationProfile.rootCertificate(authority).utf8)
        certificate = Array(try String(contentsOfFile: authority.certificatePath, encoding: .utf8).utf8)
    }

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        guard request.method == "GET" || request.method == "HEAD" else {
            return connection.respond(.text(.methodNotAllowed, "only GET and HEAD", fields: [("Allow", "GET, HEAD")]))
        }
        let isProfile = request.path == Self.profilePath
        connection.respond(
            HTTPResponse(
                .ok,
                fields: [
                    ("Content-Type", isProfile ? AppleConfigurationProfile.mediaType : "application/x-pem-file"),
                    ("Content-Disposition", "attachment; filename=\"\(isProfile ? "swiftlet-ca.mobileconfig" : "swiftlet-ca.pem")\""),
                    ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-cache"),
                ],
                body: isProfile ? profile : certificate))
    }
}
