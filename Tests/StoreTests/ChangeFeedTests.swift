import Foundation
import Store
import Synchronization
import Testing

/// The outbox of changes read as a feed: every create, update and cancellation recorded with the change, in commit
/// order, at positions a reader resumes after without missing any.
@Suite("Store conformance: the change feed, on every backend")
struct ChangeFeedTests {
    @Test(arguments: StoreBackend.all) func createUpdateAndCancelEachRecordOneChangeAsStored(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            #expect(try await store.latestChangePosition() == 0)
            _ = try await store.ingest(
                [Sample.flight(gate: "A1")], decision: DecisionLogTests.entry(hours: 1, domain: Sample.domain))
            clock.advance(by: 60)
            _ = try await store.apply(Sample.flight(gate: "B2"))
            // The same content again, and an older version, change nothing: no event.
            _ = try await store.apply(Sample.flight(gate: "B2"))
            clock.advance(by: 60)
            _ = try await store.apply(Sample.flight(status: .cancelled, gate: "B2"))

            let changes = try await store.changes(after: 0, scope: .all, limit: 100)
            #expect(changes.map(\.kind) == [.created, .updated, .cancelled])
            #expect(changes.map(\.position) == [1, 2, 3])
            #expect(changes.map(\.reservation.version) == [1, 2, 3])
            #expect(changes.map(\.channel) == [.email, nil, nil])
            #expect(changes.map(\.recordedAt) == [Sample.time(0), Sample.time(0) + 60, Sample.time(0) + 120])
            #expect(try await store.latestChangePosition() == 3)

            // Each event is the record exactly as that change left it: the history's version, with its times.
            let record = try #require(try await store.list(owner: Sample.owner).first)
            let history = try await store.history(of: record.id)
            for (event, version) in zip(changes, history) {
                #expect(event.reservation.id == record.id)
                #expect(event.reservation.key == record.key)
                #expect(event.reservation.content == version.content)
                #expect(event.reservation.updatedAt == version.recordedAt)
                #expect(event.reservation.cancelledAt == version.cancelledAt)
                #expect(event.reservation.createdAt == record.createdAt)
            }
            #expect(changes.last?.reservation == record)
            #expect(try await store.changes(after: 2, scope: .all, limit: 100).map(\.position) == [3])
            #expect(try await store.changes(after: 3, scope: .all, limit: 100).isEmpty)
            #expect(try await store.changes(after: 0, scope: .all, limit: 2).map(\.position) == [1, 2])
        }
    }

    @Test(arguments: StoreBackend.all) func aMinimalCancellationRecordsOneChangePerItemItCancels(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            _ = try await store.apply([Sample.flight(item: "B9C8-1"), Sample.flight(item: "B9C8-2")])
            _ = try await store.apply(Sample.minimalCancellation())
            let changes = try await store.changes(after: 2, scope: .all, limit: 100)
            #expect(changes.map(\.kind) == [.cancelled, .cancelled])
            #expect(Set(changes.map(\.reservation.itemReference)) == ["B9C8-1", "B9C8-2"])
            #expect(changes.allSatisfy { $0.reservation.status == .cancelled && $0.reservation.version == 2 })
        }
    }

    @Test(arguments: StoreBackend.all) func aScopeReadsItsOwnersOrItsDomainsChangesOnly(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            _ = try await store.apply([
                Sample.flight(item: "A"), Sample.flight(item: "B", owner: Sample.bob),
                Sample.flight(item: "C", domain: "mail.airline.example"), Sample.flight(item: "D", domain: "hotel.example"),
                Sample.flight(item: "E", domain: "notairline.example"),
            ])
            func items(_ scope: ChangeScope) async throws -> [String] {
                try await store.changes(after: 0, scope: scope, limit: 100).map(\.reservation.itemReference)
            }
            #expect(try await items(.all) == ["A", "B", "C", "D", "E"])
            #expect(try await items(.owner(Sample.owner)) == ["A", "C", "D", "E"])
            #expect(try await items(.owner(Sample.bob)) == ["B"])
            #expect(try await items(.domain("airline.example")) == ["A", "B", "C"])
            #expect(try await items(.domain("AIRLINE.example.")) == ["A", "B", "C"])
            #expect(try await items(.domain("hotel.example")) == ["D"])
            #expect(try await items(.domain("example")) == ["A", "B", "C", "D", "E"])
        }
    }

    @Test(arguments: StoreBackend.all) func aCommitWakesThisProcesssReaders(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let generation = store.changeSignal.generation
            _ = try await store.apply(Sample.flight(gate: "A1"))
            #expect(store.changeSignal.generation != generation)
            // Nothing recorded, nobody woken.
            let after = store.changeSignal.generation
            _ = try await store.apply(Sample.flight(gate: "A1"))
            #expect(store.changeSignal.generation == after)
            let clock = ContinuousClock()
            let start = clock.now
            await store.changeSignal.wait(after: after, timeout: .milliseconds(200))
            #expect(clock.now - start >= .milliseconds(150))
        }
    }

    /// The cursor's promise: a reader that follows the feed while several writers (two processes on one SQLite file,
    /// two nodes on one PostgreSQL) commit at once sees every change exactly once, as stored, without gaps, each
    /// reservation's changes in version order. Each page it reads starts right after its cursor: a change that
    /// committed late was never skipped.
    @Test(arguments: StoreBackend.all) func aFollowerOfConcurrentWritersMissesNothing(backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let writers = 4
            let ingestionsPerWriter = 40
            let done = WritersDone()
            let follower = Task {
                var seen: [ChangeEvent] = []
                var cursor: Int64 = 0
                var gaps = 0
                while true {
                    let finished = done.count.load(ordering: .acquiring) == writers
                    let page = try await stores[1].changes(after: cursor, scope: .all, limit: 37)
                    for (offset, event) in page.enumerated() where event.position != cursor + Int64(offset) + 1 {
                        gaps += 1
                    }
                    seen += page
                    cursor = page.last?.position ?? cursor
                    if finished && page.isEmpty { return (seen, gaps) }
                    if page.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let store = stores[writer % stores.count]
                    group.addTask {
                        for index in 0..<ingestionsPerWriter {
                            // Writers share some reservations (updated concurrently) and have their own.
                            let shared = Sample.flight(item: "SHARED-\(index % 5)", gate: "W\(writer)-\(index)")
                            let own = Sample.flight(
                                item: "OWN-\(writer)-\(index % 7)", owner: writer.isMultiple(of: 2) ? Sample.owner : Sample.bob,
                                gate: "G\(index)")
                            _ = try await store.ingest(
                                [shared, own], decision: DecisionLogTests.entry(hours: Double(index), domain: Sample.domain))
                        }
                        done.count.add(1, ordering: .releasing)
                    }
                }
                try await group.waitForAll()
            }
            let (seen, gaps) = try await follower.value
            #expect(gaps == 0)
            let stored = try await stores[0].changes(after: 0, scope: .all, limit: 10_000)
            #expect(seen == stored)
            #expect(seen.map(\.position) == Array(1...Int64(seen.count)))
            // Every version of every record, once, in version order per reservation, as the history keeps it.
            var byRecord: [Int64: [ChangeEvent]] = [:]
            for event in seen { byRecord[event.reservation.id, default: []].append(event) }
            for (id, events) in byRecord {
                let history = try await stores[0].history(of: id)
                #expect(events.map(\.reservation.version) == history.map(\.version))
                #expect(events.map(\.reservation.content) == history.map(\.content))
            }
            let records = try await stores[0].list(owner: Sample.owner) + (try await stores[0].list(owner: Sample.bob))
            #expect(seen.count == records.map(\.version).reduce(0, +))
        }
    }
}

/// How many writers have finished, shared with the follower.
final class WritersDone: Sendable {
    let count = Atomic<Int>(0)
}
