import Foundation
import Store
import Testing

@Suite("Store conformance: job leases run a periodic job once across the cluster, on every backend")
struct JobLeaseTests {
    @Test(arguments: StoreBackend.all) func aDueJobIsGrantedOnceAcrossNodesPerInterval(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            let (a, b) = (stores[0], stores[1])
            let due = { clock.now.addingTimeInterval(-86_400) }
            // Never run: the first to ask runs it; the other node is refused while the lease holds.
            #expect(try await a.acquireLease("recheck", holder: "node-a", for: 60, ifLastStartedBefore: due()))
            #expect(try await !b.acquireLease("recheck", holder: "node-b", for: 60, ifLastStartedBefore: due()))
            try await a.releaseLease("recheck", holder: "node-a")
            // Done, but not due again for a day: nobody runs it, however often they ask.
            clock.advance(by: 3600)
            #expect(try await !b.acquireLease("recheck", holder: "node-b", for: 60, ifLastStartedBefore: due()))
            #expect(try await !a.acquireLease("recheck", holder: "node-a", for: 60, ifLastStartedBefore: due()))
            // A day after its last start it is due again, for one node.
            clock.advance(by: 86_400 - 3600)
            #expect(try await b.acquireLease("recheck", holder: "node-b", for: 60, ifLastStartedBefore: due()))
            #expect(try await !a.acquireLease("recheck", holder: "node-a", for: 60, ifLastStartedBefore: due()))
            let lease = try #require(try await a.leases().first { $0.name == "recheck" })
            #expect(lease.holder == "node-b" && lease.lastStartedAt == clock.now)
            #expect(lease.leasedUntil == clock.now.addingTimeInterval(60))
        }
    }

    @Test(arguments: StoreBackend.all) func aDeadHoldersLeaseExpiresAndTheSingletonMovesOn(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            let (a, b) = (stores[0], stores[1])
            #expect(try await a.acquireLease("dispatcher", holder: "node-a", for: 30, ifLastStartedBefore: nil))
            // The holder renews before the end; the other node keeps being refused.
            clock.advance(by: 20)
            #expect(try await a.acquireLease("dispatcher", holder: "node-a", for: 30, ifLastStartedBefore: nil))
            clock.advance(by: 20)
            #expect(try await !b.acquireLease("dispatcher", holder: "node-b", for: 30, ifLastStartedBefore: nil))
            // Node A dies (stops renewing): after its lease ends, node B takes over.
            clock.advance(by: 11)
            #expect(try await b.acquireLease("dispatcher", holder: "node-b", for: 30, ifLastStartedBefore: nil))
            #expect(try await !a.acquireLease("dispatcher", holder: "node-a", for: 30, ifLastStartedBefore: nil))
            // A release by a node that no longer holds it changes nothing.
            try await a.releaseLease("dispatcher", holder: "node-a")
            #expect(try await !a.acquireLease("dispatcher", holder: "node-a", for: 30, ifLastStartedBefore: nil))
            try await b.releaseLease("dispatcher", holder: "node-b")
            #expect(try await a.acquireLease("dispatcher", holder: "node-a", for: 30, ifLastStartedBefore: nil))
        }
    }

    @Test(arguments: StoreBackend.all) func nodesAskingAtOnceGetOneGrant(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            for round in 0..<10 {
                let job = "job-\(round)"
                let grants = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for (index, store) in stores.enumerated() {
                        for asker in 0..<4 {
                            group.addTask {
                                try await store.acquireLease(
                                    job, holder: "node-\(index)-\(asker)", for: 60, ifLastStartedBefore: clock.now)
                            }
                        }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(grants == 1, "round \(round)")
            }
        }
    }

    @Test(arguments: StoreBackend.all) func leaseRequestsAreChecked(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            for (name, holder, duration) in [("", "node", 60.0), ("job", "", 60), ("job", "node", 0), ("job", "node", 1e9)] {
                await #expect(throws: StoreError.self) {
                    _ = try await store.acquireLease(name, holder: holder, for: duration, ifLastStartedBefore: nil)
                }
            }
            let leases = try await store.leases()
            #expect(leases.isEmpty)
        }
    }
}
