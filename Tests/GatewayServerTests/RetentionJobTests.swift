import Admission
import Foundation
import InMemoryStore
import Logging
import Store
import Synchronization
import Testing

@testable import GatewayServer

/// The retention sweep as `gateway serve` schedules it (issue 16): a cluster job that one node runs per interval,
/// removing what the policy keeps no longer. What `prune` removes is proved on every backend in StoreTests.
@Suite("Retention: the policy's periods, swept once per interval across nodes")
struct RetentionJobTests {
    static func reservation(_ item: String, endedDaysAgo days: Double, now: Date) -> IncomingReservation {
        IncomingReservation(
            key: ReservationKey(owner: OwnerAddress("eva@guest.example.net")!, sourceDomain: "skyways.example", itemReference: item),
            content: ReservationContent(
                containerReference: item, status: .confirmed, kind: "FlightReservation", payload: Data("{}".utf8),
                source: "<\(item)@skyways.example>", endsAt: now.addingTimeInterval(-days * 86_400)))
    }

    @Test func twoNodesSweepOncePerIntervalWhatEndedLongerAgoThanThePolicyKeeps() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_767_225_600))
        let now: @Sendable () -> Date = { clock.withLock { $0 } }
        let store = InMemoryStore(now: now)
        _ = try await store.apply(Self.reservation("OLD1", endedDaysAgo: 31, now: now()))
        _ = try await store.apply(Self.reservation("NEW1", endedDaysAgo: 29, now: now()))
        var retention = Policy().retention
        retention.sweepIntervalSeconds = 3600
        #expect(retention.reservationsAfterEndDays == 30 && retention.decisionLogDays == 30 && retention.spooledMessagesDays == 5)
        func node(_ name: String) -> ClusterJobs {
            let job = RetentionJob.clusterJob(store: store, retention: retention, now: now, logger: Logger(label: "test"))
            return ClusterJobs(jobs: [job], store: store, node: name, tick: .seconds(1), now: now, logger: Logger(label: "test"))
        }
        let (a, b) = (node("a"), node("b"))
        await a.runIfDue(a.jobs[0])
        #expect(try await store.listAll(limit: 100).map(\.itemReference) == ["NEW1"])
        #expect(try await store.leases().first { $0.name == RetentionJob.name }?.holder == "a")

        // Due again only after its interval: within it, no node sweeps; then one does, once.
        _ = try await store.apply(Self.reservation("OLD2", endedDaysAgo: 40, now: now()))
        clock.withLock { $0 += 1800 }
        await b.runIfDue(b.jobs[0])
        await a.runIfDue(a.jobs[0])
        #expect(try await store.listAll(limit: 100).map(\.itemReference) == ["NEW1", "OLD2"])
        clock.withLock { $0 += 1800 }
        await b.runIfDue(b.jobs[0])
        await a.runIfDue(a.jobs[0])
        #expect(try await store.listAll(limit: 100).map(\.itemReference) == ["NEW1"])
        #expect(try await store.leases().first { $0.name == RetentionJob.name }?.holder == "b")
    }

    @Test func aPeriodOfZeroKeepsThatKindForever() {
        var retention = Policy().retention
        retention.reservationsAfterEndDays = 0
        let cutoffs = retention.cutoffs(now: Date(timeIntervalSince1970: 1_767_225_600))
        #expect(cutoffs.reservationsEndedBefore == nil)
        #expect(cutoffs.decisionsBefore == Date(timeIntervalSince1970: 1_767_225_600 - 30 * 86_400))
        #expect(cutoffs.spooledBefore == Date(timeIntervalSince1970: 1_767_225_600 - 5 * 86_400))
    }
}
