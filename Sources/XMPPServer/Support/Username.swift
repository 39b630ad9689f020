import XMPPCore

/// Account names as the server accepts them, from in-band registration and
/// from the admin commands alike.
enum Username {
    /// The normalized form of `raw`: a JID localpart (RFC 7622 §3.3, PRECIS
    /// UsernameCaseMapped), without `,` or `=`.
    ///
    /// COMPAT: XMPPFramework: it puts the username in SCRAM's `n=`
    /// unescaped, so such an account could never log in from it.
    ///
    /// - Throws: `not-acceptable`, with the reason as text.
    static func normalize(_ raw: String, domain: String) throws(StanzaError) -> String {
        guard !raw.contains(","), !raw.contains("=") else {
            throw StanzaError(.notAcceptable, text: "usernames cannot contain ',' or '='")
        }
        let jid: JID
        do {
            jid = try JID(localpart: raw, domainpart: domain)
        } catch {
            throw StanzaError(.notAcceptable, text: "invalid username: \(error)")
        }
        guard let localpart = jid.localpart else {
            throw StanzaError(.notAcceptable, text: "the username is empty")
        }
        return localpart
    }

    /// The normalized username of `account`, given as a username
    /// (`alice`) or as a bare JID of `domain` (`alice@localhost`), as
    /// admins name accounts (the `admins` setting, XEP-0133 forms).
    /// - Throws: `not-acceptable`, with the reason as text.
    static func of(account: String, domain: String) throws(StanzaError) -> String {
        guard account.contains("@") || account.contains("/") else { return try normalize(account, domain: domain) }
        guard let jid = try? JID(account), jid.domainpart == domain, jid.resourcepart == nil,
            let localpart = jid.localpart
        else {
            throw StanzaError(.notAcceptable, text: "'\(account)' is not an account of \(domain)")
        }
        return try normalize(localpart, domain: domain)
    }

    /// Checks that `password` can become SCRAM credentials: not empty, at
    /// most `SASLPlain.maximumPasswordByteCount` bytes (so that it can log in
    /// with PLAIN too, and so that preparing it is cheap), and valid under
    /// PRECIS OpaqueString (RFC 8265 §4.2).
    /// - Throws: `not-acceptable`.
    static func checkPassword(_ password: String) throws(StanzaError) {
        guard password.utf8.count <= SASLPlain.maximumPasswordByteCount else {
            throw StanzaError(
                .notAcceptable, text: "the password is longer than \(SASLPlain.maximumPasswordByteCount) bytes")
        }
        guard !password.isEmpty, (try? PRECIS.opaqueString(password)) != nil else {
            throw StanzaError(.notAcceptable, text: "the password is empty or has characters that are not allowed")
        }
    }
}
