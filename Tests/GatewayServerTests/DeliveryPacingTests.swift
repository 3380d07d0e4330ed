import EventLoopSupport
import Foundation
import Glibc
import InMemoryStore
import Logging
import NIOCore
import Publishing
import Store
import Synchronization
import Testing

@testable import GatewayServer

/// Deliveries yield a busy machine: the pacing's budget (its rule, on given load and CPU readings), the dispatcher
/// waiting for it, and the real readings it is made from (`/proc/stat`, the loop threads' CPU clocks).
@Suite("Webhook delivery pacing")
struct DeliveryPacingTests {
    /// Load and CPU readings a test sets.
    final class Readings: Sendable {
        let values = Mutex<(own: Duration, load: Double)>((.zero, 0))
        var own: Duration {
            get { values.withLock { $0.own } }
            set { values.withLock { $0.own = newValue } }
        }
        var load: Double {
            get { values.withLock { $0.load } }
            set { values.withLock { $0.load = newValue } }
        }
    }

    static func pacing(_ readings: Readings, share: Double = 0.1, cores: Int = 2) -> DeliveryPacing {
        DeliveryPacing(
            share: share, enterAbove: 0.95, leaveBelow: 0.85, window: .milliseconds(100), cores: cores,
            ownCPU: { readings.own },
            load: { readings.load })
    }

    @Test func anIdleMachineNeverMakesDeliveriesWait() {
        let readings = Readings()
        let pacing = Self.pacing(readings)
        let start = ContinuousClock.now
        readings.load = 0.5
        for step in 0..<20 {
            readings.own += .milliseconds(50)
            #expect(pacing.delay(at: start + .milliseconds(100 * step)) == .zero)
        }
        #expect(!pacing.isBusy)
    }

    @Test func onABusyMachineDeliveriesWaitUntilTheyAreBackUnderTheirShare() {
        let readings = Readings()
        let pacing = Self.pacing(readings, share: 0.1, cores: 4)
        let start = ContinuousClock.now
        readings.load = 0.99
        #expect(pacing.delay(at: start) == .zero)
        // The first sample after a window finds the machine busy: the budget starts with a window's share (10 ms).
        #expect(pacing.delay(at: start + .milliseconds(100)) == .zero)
        #expect(pacing.isBusy)
        // 18 ms of delivery CPU: 8 ms over the budget, which the share earns back in 80 ms.
        readings.own += .milliseconds(18)
        #expect(pacing.delay(at: start + .milliseconds(100)) == .milliseconds(80))
        // 40 ms later half of it is earned back.
        #expect(pacing.delay(at: start + .milliseconds(140)) == .milliseconds(40))
        // A long debt waits at most a window at a time, and the load is looked at again after it.
        readings.own += .seconds(1)
        #expect(pacing.delay(at: start + .milliseconds(150)) == .milliseconds(100))
        // Once the load falls, nothing waits, and the debt is forgotten.
        readings.load = 0.3
        #expect(pacing.delay(at: start + .milliseconds(300)) == .zero)
        #expect(!pacing.isBusy)
        readings.load = 0.99
        #expect(pacing.delay(at: start + .milliseconds(400)) == .zero)
        #expect(pacing.isBusy)
    }

    /// Saturated from 95% of the cores; not any more once the rest, without the deliveries, use less than 85%.
    @Test func busyIsEnteredWhenSaturatedAndLeftWhenTheRestFallsClearlyBelow() {
        let readings = Readings()
        let pacing = Self.pacing(readings, cores: 2)
        let start = ContinuousClock.now
        #expect(pacing.delay(at: start) == .zero)
        // 90% busy is a load the machine carries: not paced.
        readings.load = 0.9
        #expect(pacing.delay(at: start + .milliseconds(100)) == .zero)
        #expect(!pacing.isBusy)
        readings.load = 0.97
        #expect(pacing.delay(at: start + .milliseconds(200)) == .zero)
        #expect(pacing.isBusy)
        // Paced, the deliveries take little and the rest still use 90%: still saturated.
        readings.load = 0.9
        readings.own += .milliseconds(5)
        _ = pacing.delay(at: start + .milliseconds(300))
        #expect(pacing.isBusy)
        // The rest fall to 80%: the deliveries run freely again.
        readings.load = 0.8
        #expect(pacing.delay(at: start + .milliseconds(400)) == .zero)
        #expect(!pacing.isBusy)
    }

    @Test func aMachineBusyOnlyWithTheDeliveriesIsNotBusy() {
        let readings = Readings()
        let pacing = Self.pacing(readings, cores: 2)
        let start = ContinuousClock.now
        #expect(pacing.delay(at: start) == .zero)
        // 95% of two cores, of which the deliveries' threads used 1.8 cores: the rest use 5%.
        readings.load = 0.95
        readings.own += .milliseconds(180)
        #expect(pacing.delay(at: start + .milliseconds(100)) == .zero)
        #expect(!pacing.isBusy)
    }

    @Test func theDispatcherWaitsForItsShareBeforeEachAttemptAndStillDeliversEverything() async throws {
        let store = InMemoryStore()
        let hook = try await store.addWebhook(
            url: "https://hooks.example/in", owner: nil, domain: nil, types: [], secret: WebhookSecret.generate().description,
            by: "test")
        let readings = Readings()
        readings.load = 0.95
        // Each attempt costs 40 ms of delivery CPU; at a share of 0.4 that is 100 ms of waiting after it.
        let receiver = WebhookDispatcherTests.ScriptedReceiver { _, _ in
            readings.own += .milliseconds(40)
            return 204
        }
        // Many cores, so that the deliveries' own CPU is no share of the load worth subtracting.
        let pacing = DeliveryPacing(
            share: 0.4, enterAbove: 0.95, leaveBelow: 0.85, window: .milliseconds(10), cores: 1000,
            ownCPU: { readings.own },
            load: { readings.load })
        // Sampled once the window has passed: busy from then on.
        #expect(pacing.delay() == .zero)
        try await Task.sleep(for: .milliseconds(20))
        #expect(pacing.delay() == .zero)
        #expect(pacing.isBusy)
        var configuration = WebhookDispatcherTests.configuration()
        configuration.concurrency = 1
        let dispatcher = WebhookDispatcher(
            store: store, transport: receiver, configuration: configuration, node: "node-a", pacing: pacing,
            logger: Logger(label: "test"))
        for item in ["A", "B", "C", "D", "E"] { _ = try await store.apply([Sample.flight(item: item, gate: "1")]) }
        let started = ContinuousClock.now
        try await WebhookDispatcherTests.run([dispatcher]) {
            try await store.deliveries(webhookID: hook.id, state: .delivered, limit: 100).count == 5
        }
        let elapsed = ContinuousClock.now - started
        #expect(receiver.all.count == 5)
        #expect(try await store.deliveries(webhookID: hook.id, state: .delivered, limit: 100).count == 5)
        // Five attempts, the last four after a wait of about (40 ms - what was earned meanwhile) / 0.4 each.
        #expect(elapsed >= .milliseconds(300))
        #expect(pacing.isBusy)
    }

    /// The readings from the machine itself.
    @Test func theLoadAndTheLoopsCPUTimeAreReadFromTheMachine() async throws {
        let parsed = CoreLoad.Counters(procStat: "cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 50 2 25 400 20 1 1 0 0 0\n")
        #expect(parsed == CoreLoad.Counters(busy: 160, total: 1000))
        #expect(CoreLoad.Counters(procStat: "intr 1 2 3\n") == nil)

        let load = CoreLoad()
        #expect(load.sample() == nil)
        let loops = BackgroundEventLoops(threads: 1, priority: .nice(0))
        let before = try #require(loops.cpuTime())
        // 200 ms of CPU on the loop's thread (by its own clock; however long a busy machine makes that take): the
        // loops' CPU time and the machine's load both see it.
        let spun = try await loops.executors[0].loop.submit { () -> Duration in
            func threadCPU() -> Duration {
                var now = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
                return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
            }
            let start = threadCPU()
            let deadline = ContinuousClock.now + .seconds(10)
            while threadCPU() - start < .milliseconds(200) && ContinuousClock.now < deadline {}
            return threadCPU() - start
        }.get()
        let after = try #require(loops.cpuTime())
        let busy = try #require(load.sample())
        await loops.shutdown()
        #expect(spun >= .milliseconds(200))
        #expect(after - before >= spun)
        #expect(busy > 0 && busy <= 1)
    }
}
