import Foundation
import Store
import Testing

/// Several nodes on one store (issue 12 stage B), on every backend: two stores over the same data stand for two nodes
/// on one PostgreSQL database, or two processes on one SQLite file.
@Suite("Store conformance: spool claims and change signals for several nodes, on every backend")
struct ClusterTests {
    static let nodeA = SpoolLease(holder: "node-a", duration: 30)
    static let nodeB = SpoolLease(holder: "node-b", duration: 30)

    static func spool(_ store: any GatewayStore, _ text: String, at: Date, claimedUnder lease: SpoolLease? = nil)
        async throws -> SpooledMessage
    {
        try await store.spool(
            Data(text.utf8), channel: .lmtp, owner: Sample.owner, reasonCode: "lmtp.received", nextAttemptAt: at,
            claimedUnder: lease)
    }

    /// The LMTP path: node A spools a message claimed by itself and decides it; node B's spool worker must leave it
    /// alone while A's claim holds, and takes it once A stops renewing (A died).
    @Test(arguments: StoreBackend.all) func aClaimedMessageStaysWithItsNodeUntilTheLeaseEnds(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            let (a, b) = (stores[0], stores[1])
            let spooled = try await Self.spool(a, "delivered to A", at: clock.now, claimedUnder: Self.nodeA)
            #expect(try await b.claimSpooledMessages(under: Self.nodeB, dueBy: clock.now, limit: 10).isEmpty)
            #expect(try await b.claimSpooledMessages(under: Self.nodeB, dueBy: nil, limit: 10).isEmpty)

            // A renews while it works: still A's past the first 30 s.
            clock.advance(by: 20)
            #expect(try await a.renewSpoolClaims([spooled.id], under: Self.nodeA) == [spooled.id])
            clock.advance(by: 20)
            #expect(try await b.claimSpooledMessages(under: Self.nodeB, dueBy: clock.now, limit: 10).isEmpty)
            #expect(try await b.nextSpoolClaimableAt() == clock.now.addingTimeInterval(10))

            // A dies: 30 s after its last renewal, B takes the message, and A cannot renew it any more.
            clock.advance(by: 10)
            let taken = try await b.claimSpooledMessages(under: Self.nodeB, dueBy: clock.now, limit: 10)
            #expect(taken.map(\.id) == [spooled.id])
            #expect(taken.first?.bytes == Data("delivered to A".utf8))
            #expect(try await a.renewSpoolClaims([spooled.id], under: Self.nodeA).isEmpty)
            #expect(try await b.renewSpoolClaims([spooled.id], under: Self.nodeB) == [spooled.id])
            #expect(try await a.claimSpooledMessages(under: Self.nodeA, dueBy: nil, limit: 10).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all) func dueOnlyClaimsWaitForTheNextAttemptAndAnAttemptEndsTheClaim(
        backend: StoreBackend
    ) async throws {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            let (a, b) = (stores[0], stores[1])
            #expect(try await a.nextSpoolClaimableAt() == nil)
            let deferred = try await Self.spool(a, "deferred", at: clock.now.addingTimeInterval(300))
            let due = try await Self.spool(a, "due", at: clock.now)
            #expect(try await a.nextSpoolClaimableAt() == clock.now)

            // A timer takes only what is due; an operator's retry takes everything nobody holds.
            #expect(try await a.claimSpooledMessages(under: Self.nodeA, dueBy: clock.now, limit: 10).map(\.id) == [due.id])
            #expect(try await a.nextSpoolClaimableAt() == clock.now.addingTimeInterval(30))
            #expect(try await b.claimSpooledMessages(under: Self.nodeB, dueBy: nil, limit: 10).map(\.id) == [deferred.id])

            // Deferred again by B: the claim ends, the next attempt is later; then whoever is due takes it.
            clock.advance(by: 5)
            let attempt = try await b.recordAttempt(
                id: deferred.id, reasonCode: "dns.temperror", nextAttemptAt: clock.now.addingTimeInterval(60))
            #expect(attempt?.attempts == 1)
            #expect(try await a.claimSpooledMessages(under: Self.nodeA, dueBy: clock.now, limit: 10).isEmpty)
            // A minute later: the deferred message is due, and A's own claim on the other one has run out (A never
            // renewed it), so A claims both again, earliest next attempt first.
            clock.advance(by: 60)
            #expect(
                try await a.claimSpooledMessages(under: Self.nodeA, dueBy: clock.now, limit: 10).map(\.id) == [
                    due.id, deferred.id,
                ])
        }
    }

    /// A node restarted after a crash ends the claims of its dead predecessor (a process of its host that no longer
    /// runs) instead of waiting for their lease.
    @Test(arguments: StoreBackend.all) func theClaimsOfADeadProcessCanBeEndedAtOnce(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            let (a, b) = (stores[0], stores[1])
            let dead = SpoolLease(holder: "mx1:4242:9f3a", duration: 30)
            let left = try await Self.spool(a, "left by a crash", at: clock.now, claimedUnder: dead)
            _ = try await Self.spool(a, "another node's", at: clock.now, claimedUnder: Self.nodeA)
            #expect(try await b.spoolClaimHolders() == ["mx1:4242:9f3a", "node-a"])
            #expect(try await b.releaseSpoolClaims(heldBy: dead.holder) == 1)
            #expect(try await b.releaseSpoolClaims(heldBy: dead.holder) == 0)
            #expect(try await b.spoolClaimHolders() == ["node-a"])
            #expect(try await b.claimSpooledMessages(under: Self.nodeB, dueBy: clock.now, limit: 10).map(\.id) == [left.id])
        }
    }

    @Test func holderNamesSayWhichProcessHolds() {
        #expect(SpoolLease.process(of: "mx1.example:4242:9f3a")! == ("mx1.example", 4242))
        #expect(SpoolLease.process(of: "vm:17:retry")! == ("vm", 17))
        for other in ["node-a", "mx1:x:1", ":12:a", "a:b:c:d", "mx1:0:a", "mx1:-3:a"] {
            #expect(SpoolLease.process(of: other) == nil, "\(other)")
        }
    }

    /// Eight claimers on two nodes, each taking three at a time until nothing is left: every message is claimed once.
    @Test(arguments: StoreBackend.all) func concurrentClaimersNeverGetTheSameMessage(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            var spooled: [Int64] = []
            for index in 0..<60 { spooled.append(try await Self.spool(stores[0], "message \(index)", at: clock.now).id) }
            let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for claimer in 0..<8 {
                    let store = stores[claimer % 2]
                    let lease = SpoolLease(holder: "node-\(claimer % 2)-\(claimer)", duration: 60)
                    group.addTask {
                        var mine: [Int64] = []
                        while true {
                            let batch = try await store.claimSpooledMessages(under: lease, dueBy: clock.now, limit: 3)
                            if batch.isEmpty { return mine }
                            mine += batch.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [Int64]()) { $0 += $1 }
            }
            #expect(claimed.count == spooled.count)
            #expect(Set(claimed) == Set(spooled))
        }
    }

    /// A node whose claim ran out while it was still deciding: the other node decided the message first, so the late
    /// decision writes nothing at all (no record, no log entry) and says so.
    @Test(arguments: StoreBackend.all) func aDecisionOfAMessageAnotherNodeDecidedWritesNothing(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            let (a, b) = (stores[0], stores[1])
            let spooled = try await Self.spool(a, "raw", at: clock.now, claimedUnder: Self.nodeA)
            let decided = try await b.ingest(
                [Sample.flight()], decision: DecisionLogTests.entry(hours: 1, domain: Sample.domain),
                removingSpooledMessage: spooled.id)
            #expect(decided.reservations.map(\.outcome) == [.created])
            let late = await storeErrorCode {
                _ = try await a.ingest(
                    [Sample.flight(gate: "B7")], decision: DecisionLogTests.entry(hours: 2, domain: Sample.domain),
                    removingSpooledMessage: spooled.id)
            }
            #expect(late == .spoolEntryGone)
            let records = try await a.list(owner: Sample.owner)
            #expect(records.map(\.version) == [1])
            #expect(records.first?.content.payload == Sample.flight().content.payload)
            #expect(try await a.entries(domain: nil, since: nil, afterID: nil, limit: 10).count == 1)
        }
    }

    /// The same message decided by two nodes at the same moment (a lease ran out under load): one decision is stored,
    /// the other fails with `store.spool-entry-gone`, whichever order the database puts them in.
    @Test(arguments: StoreBackend.all) func simultaneousDecisionsOfOneMessageStoreItOnce(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStores(backend, count: 2, clock: clock) { stores in
            for round in 0..<10 {
                let spooled = try await Self.spool(stores[0], "raw \(round)", at: clock.now)
                let item = Sample.flight(item: "B9C8-\(round)")
                let results = await withTaskGroup(of: StoreError.Code?.self) { group in
                    for store in stores {
                        group.addTask {
                            await storeErrorCode {
                                _ = try await store.ingest(
                                    [item], decision: DecisionLogTests.entry(hours: Double(round), domain: Sample.domain),
                                    removingSpooledMessage: spooled.id)
                            }
                        }
                    }
                    return await group.reduce(into: [StoreError.Code?]()) { $0.append($1) }
                }
                #expect(results.filter { $0 == nil }.count == 1, "round \(round): \(results)")
                #expect(results.filter { $0 == .spoolEntryGone }.count == 1, "round \(round): \(results)")
            }
            #expect(try await stores[1].list(owner: Sample.owner).count == 10)
            #expect(try await stores[1].list(owner: Sample.owner).allSatisfy { $0.version == 1 })
            #expect(try await stores[1].entries(domain: nil, since: nil, afterID: nil, limit: 100).count == 10)
            #expect(try await stores[1].spooledMessageCount() == 0)
        }
    }

    @Test(arguments: StoreBackend.all) func spoolClaimsAreChecked(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            for lease in [SpoolLease(holder: "", duration: 30), SpoolLease(holder: "a", duration: 0)] {
                #expect(await storeErrorCode { _ = try await store.claimSpooledMessages(under: lease, dueBy: nil, limit: 1) } == .invalidArgument)
                #expect(
                    await storeErrorCode { _ = try await Self.spool(store, "x", at: Date(), claimedUnder: lease) }
                        == .invalidArgument)
            }
            let spooled = try await store.spooledMessageCount()
            #expect(spooled == 0)
        }
    }

    /// Every committed change of the registry, the flags or the tokens moves that area's generation, as every node
    /// sees it; reservations and the log move none.
    @Test(arguments: StoreBackend.all) func generationsMoveWithEveryChangeOfTheirAreaOnEveryNode(backend: StoreBackend)
        async throws
    {
        try await withStores(backend, count: 2) { stores in
            let (a, b) = (stores[0], stores[1])
            var last = try await b.changeGenerations()
            #expect(Set(last.keys) == Set(ChangeArea.allCases))
            func moved() async throws -> Set<ChangeArea> {
                let now = try await b.changeGenerations()
                defer { last = now }
                for area in ChangeArea.allCases { #expect(now[area]! >= last[area]!) }
                return Set(ChangeArea.allCases.filter { now[$0]! > last[$0]! })
            }

            _ = try await a.setDomain("airline.example", status: .approved, contact: nil, by: "test")
            #expect(try await moved() == [.registry])
            _ = try await a.setDomain("airline.example", status: .suspended, contact: nil, by: "test")
            #expect(try await moved() == [.registry])
            _ = try await a.setFlag("allow-any-domain", enabled: true, expiresAt: nil, by: "test")
            #expect(try await moved() == [.flags])
            let token = try await a.addToken(
                role: .owner, subject: Sample.owner.address, label: "t", secretHash: String(repeating: "a", count: 64),
                by: "test")
            #expect(try await moved() == [.tokens])
            #expect(try await a.revokeToken(id: token.id))
            #expect(try await moved() == [.tokens])

            _ = try await a.ingest([Sample.flight()], decision: DecisionLogTests.entry(hours: 1, domain: Sample.domain))
            _ = try await Self.spool(a, "raw", at: Date())
            #expect(try await moved() == [])
        }
    }

    /// PostgreSQL pushes a change to every listening node as it commits (LISTEN/NOTIFY); SQLite and memory cannot, and
    /// say so by ending the stream at once (their readers poll).
    @Test(arguments: StoreBackend.all) func aChangeIsAnnouncedToListeningNodesWherePossible(backend: StoreBackend)
        async throws
    {
        try await withStores(backend, count: 2) { stores in
            let (a, b) = (stores[0], stores[1])
            var notifications = b.notifications(channel: ChangeArea.notificationChannel).makeAsyncIterator()
            guard backend == .postgres else {
                #expect(await notifications.next() == nil)
                return
            }
            #expect(await notifications.next() == .listening)
            let start = ContinuousClock.now
            _ = try await a.setFlag("allow-unverified-sources", enabled: true, expiresAt: nil, by: "test")
            #expect(await notifications.next() == .message("flags"))
            _ = try await a.setDomain("airline.example", status: .approved, contact: nil, by: "test")
            #expect(await notifications.next() == .message("registry"))
            #expect(ContinuousClock.now - start < .seconds(1))
        }
    }
}
