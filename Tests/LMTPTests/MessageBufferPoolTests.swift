import Testing

@testable import LMTP

@Suite("Message buffers kept between transactions")
struct MessageBufferPoolTests {
    private func buffer(capacity: Int) -> [UInt8] {
        var buffer: [UInt8] = [1, 2, 3]
        buffer.reserveCapacity(capacity)
        return buffer
    }

    @Test func aRecycledBufferIsTakenAgainEmpty() {
        let pool = MessageBufferPool(retainedBytes: 1 << 20)
        var message = buffer(capacity: 100_000)
        let address = message.withUnsafeBufferPointer { $0.baseAddress }
        pool.recycle(&message)
        #expect(message.isEmpty)
        let taken = pool.take(minimumCapacity: 50_000)
        #expect(taken.isEmpty)
        #expect(taken.capacity >= 100_000)
        #expect(taken.withUnsafeBufferPointer { $0.baseAddress } == address)
        #expect(pool.take(minimumCapacity: 0).capacity == 0, "the only buffer was taken")
    }

    @Test func takesTheSmallestThatFitsOrNone() {
        let pool = MessageBufferPool(retainedBytes: 1 << 20)
        for capacity in [10_000, 200_000, 50_000] {
            var message = buffer(capacity: capacity)
            pool.recycle(&message)
        }
        #expect(pool.take(minimumCapacity: 300_000).capacity == 0)
        #expect((50_000..<200_000).contains(pool.take(minimumCapacity: 40_000).capacity))
        #expect(pool.take(minimumCapacity: 0).capacity >= 200_000, "size unknown: the largest")
        #expect((10_000..<50_000).contains(pool.take(minimumCapacity: 1).capacity))
    }

    @Test func keepsNoBufferSomethingElseRefersTo() {
        let pool = MessageBufferPool(retainedBytes: 1 << 20)
        var message = buffer(capacity: 100_000)
        let kept = message  // as a delivery handler that spools the message would
        pool.recycle(&message)
        #expect(pool.take(minimumCapacity: 0).capacity == 0)
        #expect(kept == [1, 2, 3])
    }

    @Test func neverKeepsMoreThanItsBound() {
        let pool = MessageBufferPool(retainedBytes: 300_000)
        var large = buffer(capacity: 400_000)
        pool.recycle(&large)
        #expect(pool.take(minimumCapacity: 0).capacity == 0, "larger than the bound")
        for _ in 0..<5 {
            var message = buffer(capacity: 100_000)
            pool.recycle(&message)
        }
        var total = 0
        while case let taken = pool.take(minimumCapacity: 0), taken.capacity > 0 { total += taken.capacity }
        #expect(total > 0)
        #expect(total <= 300_000)
    }

    @Test func aLargerBufferReplacesSmallerOnes() {
        let pool = MessageBufferPool(retainedBytes: 300_000)
        for _ in 0..<2 {
            var small = buffer(capacity: 100_000)
            pool.recycle(&small)
        }
        var large = buffer(capacity: 250_000)
        pool.recycle(&large)
        #expect(pool.take(minimumCapacity: 200_000).capacity >= 250_000)
        #expect(pool.take(minimumCapacity: 0).capacity == 0, "both small ones made room")
    }
}
