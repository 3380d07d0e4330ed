import GatewayServer
import Synchronization
import Testing

/// Holds a slot until released.
final class Holder: Sendable {
    let stream: AsyncStream<Void>
    let continuation: AsyncStream<Void>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream() }
    func wait() async { for await _ in stream { return } }
}

/// Shared state the tasks of a test write.
final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
    func withLock<R: Sendable>(_ body: (inout sending Value) -> sending R) -> R { value.withLock(body) }
}

@Suite("Ingestion gate (back-pressure)")
struct IngestionGateTests {
    @Test func slotsBeyondTheLimitWaitInOrderAndBeyondTheQueueAreRefused() async throws {
        let gate = IngestionGate(maxRunning: 1, maxWaiting: 2)
        let order = Shared<[Int]>([])
        let holder = Holder()
        let first = Task { await gate.withSlot { await holder.wait(); order.withLock { $0.append(0) } } }
        while gate.load.running < 1 { await Task.yield() }
        let second = Task { await gate.withSlot { order.withLock { $0.append(1) } } }
        while gate.load.waiting < 1 { await Task.yield() }
        let third = Task { await gate.withSlot { order.withLock { $0.append(2) } } }
        while gate.load.waiting < 2 { await Task.yield() }
        #expect(gate.isFull)
        // Queue full: refused at once, without running.
        #expect(await gate.withSlot { order.withLock { $0.append(9) } } == nil)

        holder.continuation.yield()
        let results = (await first.value, await second.value, await third.value)
        #expect(results.0 != nil && results.1 != nil && results.2 != nil)
        #expect(order.withLock { $0 } == [0, 1, 2])
        #expect(gate.load.running == 0 && gate.load.waiting == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueueAndRunsNothing() async throws {
        let gate = IngestionGate(maxRunning: 1, maxWaiting: 4)
        let holder = Holder()
        let ran = Shared(false)
        let first = Task { await gate.withSlot { await holder.wait() } }
        while gate.load.running < 1 { await Task.yield() }
        let waiter = Task { await gate.withSlot { ran.withLock { $0 = true } } }
        while gate.load.waiting < 1 { await Task.yield() }
        waiter.cancel()
        #expect(await waiter.value == nil)
        #expect(gate.load.waiting == 0)
        holder.continuation.yield()
        _ = await first.value
        #expect(!ran.withLock { $0 })
        #expect(gate.load.running == 0)
    }

    @Test func closingRefusesNewCallersAndWakesWaiters() async throws {
        let gate = IngestionGate(maxRunning: 1, maxWaiting: 4)
        let holder = Holder()
        let first = Task { await gate.withSlot { await holder.wait(); return 1 } }
        while gate.load.running < 1 { await Task.yield() }
        let waiter = Task { await gate.withSlot { 2 } }
        while gate.load.waiting < 1 { await Task.yield() }
        gate.close()
        #expect(await waiter.value == nil)
        #expect(await gate.withSlot { 3 } == nil)
        holder.continuation.yield()
        // What was running finishes.
        #expect(await first.value == 1)
    }

    @Test func manyConcurrentCallersNeverExceedTheLimit() async throws {
        let gate = IngestionGate(maxRunning: 3, maxWaiting: 1000)
        let running = Shared((now: 0, peak: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    _ = await gate.withSlot {
                        running.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                        await Task.yield()
                        running.withLock { $0.now -= 1 }
                    }
                }
            }
        }
        #expect(running.withLock { $0.peak } <= 3)
        #expect(running.withLock { $0.peak } >= 1)
        #expect(gate.load.running == 0)
    }
}
