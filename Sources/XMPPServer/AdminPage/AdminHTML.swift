/// The admin page's HTML: a layout, small building blocks, one style
/// sheet, and the escaping every piece of text goes through. No
/// JavaScript; forms post to the page itself.
///
/// Text is escaped where it is put into markup (`escape`), never earlier,
/// so a name is escaped exactly once whatever its path: account and
/// resource names, client software and room names come from users.
enum AdminHTML {
    /// The fields every HTML answer carries: no framing, no script or
    /// style from anywhere but the page itself (CSP), no caching of
    /// pages that show accounts and sessions, and the referrer kept to
    /// the page itself (with `no-referrer`, browsers would send
    /// `Origin: null` with the forms: the Fetch standard's "append a
    /// request `Origin` header").
    static let securityFields: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    ]

    /// `text` safe inside an element and inside a quoted attribute value.
    static func escape(_ text: some StringProtocol) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A whole page: `title`, the navigation when logged in (with the
    /// logout form, which needs `formToken`), a notice, then `body`
    /// (markup).
    static func page(
        _ title: String, status: HTTPStatus = .ok, formToken: String?, notice: Notice? = nil, body: String,
        fields: [(name: String, value: String)] = []
    ) -> HTTPResponse {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) · Swiftlet admin</title>
            <link rel="stylesheet" href="\(AdminPage.path)/style.css">
            <link rel="icon" href="data:,">
            </head><body>

            """
        if let formToken {
            html += """
                <nav><a href="\(AdminPage.path)">Overview</a> <a href="\(AdminPage.path)/sessions">Sessions</a> \
                <a href="\(AdminPage.path)/accounts">Accounts</a>
                \(form("logout", formToken: formToken, fields: "", button: "Log out", inline: true))</nav>

                """
        }
        html += "<main><h1>\(escape(title))</h1>\n"
        if let notice { html += "<p class=\"\(notice.isError ? "error" : "done")\">\(escape(notice.text))</p>\n" }
        html += body + "</main></body></html>\n"
        return HTTPResponse(
            status, fields: fields + securityFields + [("Content-Type", "text/html; charset=utf-8")],
            body: Array(html.utf8))
    }

    /// One line telling how an action went.
    struct Notice {
        var text: String
        var isError: Bool
    }

    /// A form that posts to `action` (below the page) with the login's
    /// form token, `fields` (markup) and a submit button.
    static func form(_ action: String, formToken: String, fields: String, button: String, inline: Bool = false)
        -> String
    {
        """
        <form method="post" action="\(AdminPage.path)/\(action)"\(inline ? " class=\"inline\"" : "")>\
        <input type="hidden" name="token" value="\(escape(formToken))">\(fields)\
        <button type="submit">\(escape(button))</button></form>
        """
    }

    /// A hidden field.
    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(name)\" value=\"\(escape(value))\">"
    }

    /// A labelled input.
    static func input(_ label: String, name: String, type: String = "text", autocomplete: String) -> String {
        "<label>\(escape(label)) <input type=\"\(type)\" name=\"\(name)\" required "
            + "autocomplete=\"\(autocomplete)\"></label> "
    }

    /// A table of `rows` under `header`; cells are markup, so callers
    /// escape text.
    static func table(_ header: [String], _ rows: [[String]], empty: String) -> String {
        guard !rows.isEmpty else { return "<p>\(escape(empty))</p>\n" }
        var html = "<div class=\"wide\"><table><thead><tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr></thead><tbody>\n"
        for row in rows { html += "<tr>" + row.map { "<td>\($0)</td>" }.joined() + "</tr>\n" }
        return html + "</tbody></table></div>\n"
    }

    /// A two-column table of names and values (markup).
    static func facts(_ rows: [(String, String)]) -> String {
        "<div class=\"wide\"><table class=\"facts\"><tbody>\n"
            + rows.map { "<tr><th>\(escape($0.0))</th><td>\($0.1)</td></tr>\n" }.joined() + "</tbody></table></div>\n"
    }

    /// The one style sheet.
    static let styleSheet = """
        body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
        nav { background: #24324a; padding: .6em 1em; }
        nav a { color: #fff; margin-right: 1.2em; text-decoration: none; }
        nav form { float: right; }
        main { padding: 1em 2em; max-width: 72em; }
        h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
        table { border-collapse: collapse; margin: .5em 0; background: #fff; }
        th, td { border: 1px solid #d8d8dc; padding: .3em .6em; text-align: left; vertical-align: top; }
        table.facts th { font-weight: normal; color: #555; }
        form.inline { display: inline; margin: 0; }
        label { margin-right: .8em; }
        input { font: inherit; padding: .15em .3em; }
        button { font: inherit; cursor: pointer; }
        .error { color: #a40e26; font-weight: bold; }
        .done { color: #1a6b2f; font-weight: bold; }
        .wide { overflow-x: auto; }
        input { max-width: 100%; box-sizing: border-box; }
        @media (max-width: 40em) { main { padding: .6em; } nav a { margin-right: .8em; } }
        pre { background: #fff; border: 1px solid #d8d8dc; padding: .6em; overflow-x: auto; white-space: pre-wrap; }

        """
}
