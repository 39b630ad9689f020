/// One fuzzer input read as a few control values followed by a payload, so
/// that the same bytes decide both what is parsed and how it is fed (where
/// it is split, which mechanism runs, which limits apply).
///
/// Reading past the end yields zeros rather than failing: every input,
/// however short, is a valid test case.
public struct FuzzInput {
    private var bytes: ArraySlice<UInt8>

    /// Wraps the bytes libFuzzer (or a replayed file) supplied.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    /// Wraps the buffer libFuzzer passes to `LLVMFuzzerTestOneInput`.
    public init(_ data: UnsafePointer<UInt8>?, count: Int) {
        self.init(data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
    }

    /// The next byte, or 0 once the input is used up.
    public mutating func takeByte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    /// The next two bytes as a little-endian number.
    public mutating func takeUInt16() -> Int {
        Int(takeByte()) | Int(takeByte()) << 8
    }

    /// Up to `maximum` offsets at which to cut the payload that follows:
    /// one byte says how many, two bytes each say where (see `pieces(cutAt:)`).
    public mutating func takeCutOffsets(maximum: Int) -> [Int] {
        (0..<(Int(takeByte()) % (maximum + 1))).map { _ in takeUInt16() }
    }

    /// Everything not taken yet; the input is used up afterwards.
    public mutating func takeRest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }
}

extension Array where Element == UInt8 {
    /// The pieces between the cuts at `offsets` (each taken modulo
    /// `count + 1`, so any value is a valid cut), covering every byte once.
    /// Repeated offsets give empty pieces, which a parser must accept too.
    public func pieces(cutAt offsets: [Int]) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        for cut in offsets.map({ $0 % (count + 1) }).sorted() + [count] {
            pieces.append(self[start..<cut])
            start = cut
        }
        return pieces
    }

    /// The bytes repeated (the last copy cut short) to `length`, or
    /// themselves when empty: a short input the fuzzer found, at a size
    /// where work that grows faster than the input takes seconds.
    public func repeated(toLength length: Int) -> [UInt8] {
        guard !isEmpty else { return self }
        return (0..<length).map { self[$0 % count] }
    }

    /// The parts between occurrences of `separator`, empty ones included.
    public func parts(separatedBy separator: UInt8) -> [[UInt8]] {
        split(separator: separator, omittingEmptySubsequences: false).map(Array.init)
    }
}
