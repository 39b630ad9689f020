/// Punycode decoding (RFC 3492), to turn IDNA A-labels (`xn--...`) into the
/// U-labels a JID domainpart must hold (RFC 7622 §3.2.1).
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 0x80
    /// Larger than any code point, small enough that `digit * w` cannot
    /// overflow a 64-bit `Int`.
    private static let maxInt = Int(UInt32.max)

    /// Decodes the part of an A-label after `xn--`; `nil` if it is malformed
    /// (RFC 3492 §6.2). The result is not checked against IDNA2008; the caller
    /// does that.
    static func decode(_ input: Substring) -> String? {
        let bytes = Array(input.utf8)
        var output: [Unicode.Scalar] = []
        var position = 0
        if let delimiter = bytes.lastIndex(of: UInt8(ascii: "-")), delimiter > 0 {
            for byte in bytes[..<delimiter] {
                guard byte < 0x80 else { return nil }
                output.append(Unicode.Scalar(byte))
            }
            position = delimiter + 1
        }

        var n = initialN
        var i = 0
        var bias = initialBias
        while position < bytes.count {
            let oldI = i
            var w = 1
            var k = base
            while true {
                guard position < bytes.count, let digit = digitValue(bytes[position]) else {
                    return nil
                }
                position += 1
                guard digit <= (maxInt - i) / w else { return nil }
                i += digit * w
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                guard w <= maxInt / (base - t) else { return nil }
                w *= base - t
                k += base
            }
            let length = output.count + 1
            bias = adapt(delta: i - oldI, points: length, first: oldI == 0)
            guard i / length <= maxInt - n else { return nil }
            n += i / length
            i %= length
            guard n >= 0x80, let scalar = Unicode.Scalar(UInt32(n)) else { return nil }
            output.insert(scalar, at: i)
            i += 1
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: output)
        return String(result)
    }

    /// `a`-`z` are 0-25 and `0`-`9` are 26-35 (RFC 3492 §5); decoders accept
    /// uppercase too.
    private static func digitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(byte - UInt8(ascii: "a"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0")) + 26
        default: nil
        }
    }

    /// Bias adaptation (RFC 3492 §6.1).
    private static func adapt(delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
