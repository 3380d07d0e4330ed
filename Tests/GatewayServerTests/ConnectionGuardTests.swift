import Synchronization
import Testing

@testable import GatewayServer

@Suite("Connection guard: limits in all, per client, and the probes' reserve")
struct ConnectionGuardTests {
    /// Counts the evictions a connection's closure reports.
    final class Evictions: Sendable {
        private let names = Mutex<[String]>([])
        var all: [String] { names.withLock { $0 } }
        func closer(_ name: String) -> @Sendable () -> Void { { self.names.withLock { $0.append(name) } } }
    }

    @Test func aClientGetsItsShareAndTheRestGoesToTheProbesReserve() {
        let guarded = ConnectionGuard(.init(maxConnections: 3, maxPerClient: 2, probeConnections: 1))
        let evictions = Evictions()
        #expect(guarded.admit(client: "a", evict: evictions.closer("a1")) == .served)
        #expect(guarded.admit(client: "a", evict: evictions.closer("a2")) == .served)
        #expect(guarded.admit(client: "a", evict: evictions.closer("a3")) == .refused(.clientAtLimit))
        #expect(guarded.admit(client: "b", evict: evictions.closer("b1")) == .served)
        // Full: the next goes to the reserve; the one after pushes it out while it still waits for its header.
        let first = guarded.admit(client: "b", evict: evictions.closer("b2"))
        guard case .probesOnly = first else { return #expect(Bool(false), "\(first)") }
        let second = guarded.admit(client: "c", evict: evictions.closer("c1"))
        guard case .probesOnly(let slot) = second else { return #expect(Bool(false), "\(second)") }
        #expect(evictions.all == ["b2"])
        // A reserved connection that sent its header stays: the next newcomer is refused.
        guarded.requestHeadArrived(slot: slot)
        #expect(guarded.admit(client: "d", evict: evictions.closer("d1")) == .refused(.serverFull))
        #expect(evictions.all == ["b2"])
        // Closing frees the slots and the clients' shares; the evicted connection's own close counts once.
        guarded.release(client: "b", first)
        guarded.release(client: "c", second)
        guarded.release(client: "a", .served)
        #expect(guarded.load.served == 2)
        #expect(guarded.load.probes == 0)
        #expect(guarded.admit(client: "a", evict: evictions.closer("a4")) == .served)
        #expect(guarded.admit(client: "b", evict: evictions.closer("b3")) == .probesOnly(slot: 3))
    }

    @Test func withoutAReserveAFullServerRefuses() {
        let guarded = ConnectionGuard(.init(maxConnections: 1, maxPerClient: 5, probeConnections: 0))
        #expect(guarded.admit(client: "a", evict: {}) == .served)
        #expect(guarded.admit(client: "b", evict: {}) == .refused(.serverFull))
        guarded.release(client: "a", .served)
        #expect(guarded.load.clients == 0)
        #expect(guarded.admit(client: "b", evict: {}) == .served)
    }
}
