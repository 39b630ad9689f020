import Foundation
import XMPPCore

/// XEP-0202: Entity Time, of the server: its UTC time and its time zone's
/// offset (XEP-0082 formats: `2024-05-01T12:00:00Z`, `+02:00`). Users'
/// clients answer for themselves at their full JIDs.
public struct EntityTime: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.time)
        hooks.onIQ(.get, NS.time, "time", to: [.host]) { _ in
            .result(Self.time(at: Date(), in: .current))
        }
    }

    /// `<time><tzo/><utc/></time>` for `date` as seen in `zone`.
    static func time(at date: Date, in zone: TimeZone) -> Element {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var time = Element("time", namespace: NS.time)
        time.append(Element("tzo", namespace: NS.time, children: [.text(offset(zone.secondsFromGMT(for: date)))]))
        time.append(Element("utc", namespace: NS.time, children: [.text(formatter.string(from: date))]))
        return time
    }

    /// `+hh:mm` or `-hh:mm` (XEP-0082 §3.4; zero is `+00:00`).
    static func offset(_ seconds: Int) -> String {
        let minutes = abs(seconds) / 60
        let pad = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return (seconds < 0 ? "-" : "+") + pad(minutes / 60) + ":" + pad(minutes % 60)
    }
}
