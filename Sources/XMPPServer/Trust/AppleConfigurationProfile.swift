import Foundation
import XMPPCore

/// An Apple configuration profile (`.mobileconfig`) that installs the local
/// CA's root on an iPhone, iPad or Mac: one `com.apple.security.root`
/// payload with the certificate's DER. Its identifiers come from the
/// root's fingerprint, so installing it again replaces the same profile.
///
/// After installing it (Settings, General, VPN & Device Management), iOS
/// still asks for full trust under General, About, Certificate Trust
/// Settings before TLS accepts the root.
enum AppleConfigurationProfile {
    /// The media type Safari installs profiles from.
    static let mediaType = "application/x-apple-aspen-config"

    /// The profile for `authority`'s root.
    static func rootCertificate(_ authority: LocalCertificateAuthority) throws -> String {
        let der = try authority.certificateDER()
        let hex = Hex.encode(authority.fingerprint.bytes)
        let identifier = "org.swiftlet.local-ca.\(hex.prefix(16))"
        let name = "Swiftlet local CA for \(authority.domain)"
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
              <key>PayloadContent</key>
              <array>
                <dict>
                  <key>PayloadCertificateFileName</key>
                  <string>\(escaped(authority.domain))-ca.cer</string>
                  <key>PayloadContent</key>
                  <data>\(Data(der).base64EncodedString())</data>
                  <key>PayloadDescription</key>
                  <string>The root of the certificate authority of a Swiftlet XMPP server for development.</string>
                  <key>PayloadDisplayName</key>
                  <string>\(escaped(name))</string>
                  <key>PayloadIdentifier</key>
                  <string>\(identifier).root</string>
                  <key>PayloadType</key>
                  <string>com.apple.security.root</string>
                  <key>PayloadUUID</key>
                  <string>\(uuid(hex, offset: 32))</string>
                  <key>PayloadVersion</key>
                  <integer>1</integer>
                </dict>
              </array>
              <key>PayloadDescription</key>
              <string>Trusts the Swiftlet server for \(escaped(authority.domain)) (CA SHA-256 \(authority.fingerprint)).</string>
              <key>PayloadDisplayName</key>
              <string>\(escaped(name))</string>
              <key>PayloadIdentifier</key>
              <string>\(identifier)</string>
              <key>PayloadRemovalDisallowed</key>
              <false/>
              <key>PayloadType</key>
              <string>Configuration</string>
              <key>PayloadUUID</key>
              <string>\(uuid(hex, offset: 0))</string>
              <key>PayloadVersion</key>
              <integer>1</integer>
            </dict>
            </plist>

            """
    }

    /// 32 hex digits of `hex` from `offset` in the 8-4-4-4-12 form of a UUID.
    private static func uuid(_ hex: String, offset: Int) -> String {
        let digits = Array(hex.uppercased().dropFirst(offset).prefix(32))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
    }

    /// `text` safe inside a plist `<string>`.
    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
