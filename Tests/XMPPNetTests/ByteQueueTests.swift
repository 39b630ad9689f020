import Testing

@testable import XMPPNet

@Suite struct ByteQueueTests {
    @Test func keepsBytesInOrderAcrossGrowthAndSlides() {
        var queue = ByteQueue()
        var model: [UInt8] = []
        var random = SplitMix64(state: 7)
        var next: UInt8 = 0
        for _ in 0..<5000 {
            if Bool.random(using: &random) {
                let chunk = (0..<Int.random(in: 1...3000, using: &random)).map { _ in
                    next &+= 1
                    return next
                }
                chunk.withUnsafeBytes { queue.append($0) }
                model.append(contentsOf: chunk)
            } else if !model.isEmpty {
                let count = Int.random(in: 1...model.count, using: &random)
                queue.consume(count)
                model.removeFirst(count)
            }
            let (count, bytes) = (queue.count, Array(queue.readableBytes))
            #expect(count == model.count)
            #expect(bytes == model)
        }
    }

    @Test func releasesLargeStorageOnceDrained() {
        var queue = ByteQueue()
        let big = [UInt8](repeating: 1, count: ByteQueue.retainedCapacity * 4)
        big.withUnsafeBytes { queue.append($0) }
        queue.consume(big.count)
        let (isEmpty, freed) = (queue.isEmpty, queue.readableBytes.baseAddress == nil)
        #expect(isEmpty)
        #expect(freed, "drained large storage is freed")

        let small = [UInt8](repeating: 2, count: 100)
        small.withUnsafeBytes { queue.append($0) }
        queue.consume(100)
        let kept = queue.readableBytes.baseAddress != nil
        #expect(kept, "small storage is kept for reuse")
    }
}
