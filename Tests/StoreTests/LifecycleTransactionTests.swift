import Foundation
import GRDB
import SQLiteStore
import Store
import Testing

/// What one write transaction reads once for all its items (SQLite's `LifecycleTransaction`): the owner's decisions
/// per owner, sender domain and name, and the change counter, written back once, with no gap when a request of a
/// batch is rolled back after it took positions.
@Suite("One transaction's lifecycle reads")
struct LifecycleTransactionTests {
    static let airline = Sample.domain

    /// One `apply` of items of two owners, three sender domains, with and without a name: each item is decided on its
    /// own owner's preferences and profile, not on those read for an item before it in the transaction.
    @Test(arguments: StoreBackend.all) func eachItemOfABatchIsDecidedOnItsOwnOwnersDecisions(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            _ = try await store.updateProfile(OwnerProfileUpdate(names: ["Ada Lovelace"]), owner: Sample.owner)
            _ = try await store.apply(Sample.flight(item: "B9C8-1"))
            let first = try #require(try await store.list(owner: Sample.owner).first)
            _ = try await store.decide(.accept, reservation: first.id, owner: Sample.owner)
            guard case .set = try await store.setSenderDecision(.trust, domain: Self.airline, owner: Sample.owner) else {
                Issue.record("trust was refused after an accepted reservation")
                return
            }
            let outcomes = try await store.apply([
                Sample.flight(item: "Q1", container: "Q1"),
                Sample.flight(item: "Q2", container: "Q2", underName: "Bob Smith"),
                Sample.flight(item: "H1", container: "H1", domain: "hotel.example"),
                Sample.flight(item: "Q3", container: "Q3", owner: Sample.bob),
                Sample.flight(item: "Z1", container: "Z1", domain: "eu." + Self.airline),
                Sample.flight(item: "Q4", container: "Q4", underName: "Ada Lovelace"),
                Sample.flight(item: "Q5", container: "Q5"),
            ])
            #expect(outcomes.count == 7)
            let ada = Dictionary(
                uniqueKeysWithValues: try await store.list(owner: Sample.owner).map { ($0.key.itemReference, $0.consent) })
            #expect(ada["Q1"]?.reason == .trustedSender)
            #expect(ada["Q2"]?.state == .suggested && ada["Q2"]?.reason == .nameMismatch)
            #expect(ada["H1"]?.state == .suggested && ada["H1"]?.reason == .new)
            #expect(ada["Z1"]?.reason == .trustedSender)
            #expect(ada["Q4"]?.reason == .trustedSender)
            #expect(ada["Q5"]?.reason == .trustedSender)
            let bob = try #require(try await store.list(owner: Sample.bob).first)
            #expect(bob.consent.state == .suggested && bob.consent.reason == .new)
            // Each new record's event names it, its first version and its consent as created.
            let events = try await store.changes(after: 0, scope: .all, limit: 100)
            #expect(events.map(\.position) == Array(1...Int64(events.count)))
            for event in events.suffix(7) {
                let stored = try #require(try await store.reservation(id: event.reservation.id))
                #expect(event.kind == .created && event.reservation == stored, "\(stored.key.itemReference)")
            }
        }
    }

    /// A request of a batch that fails after it recorded changes (here its log entry is refused by a trigger) is
    /// rolled back with its positions: the feed has no gap, and the next transaction continues after the last one.
    @Test func aRequestRolledBackAfterItsChangesLeavesNoGapInTheFeed() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        try await running([store]) { _ in
            try await DatabaseQueue(path: directory.databasePath).write { db in
                try db.execute(
                    sql: """
                        CREATE TRIGGER refuse_marked BEFORE INSERT ON decision_log WHEN NEW.source LIKE 'refused%'
                        BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
                        """)
            }
            let refused = Set((0..<48).filter { $0 % 5 == 2 })
            let failures = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for index in 0..<48 {
                    group.addTask {
                        var entry = DecisionLogTests.entry(hours: Double(index), domain: Sample.domain)
                        if refused.contains(index) { entry.source = "refused-\(index)" }
                        do {
                            _ = try await store.ingest(
                                [Sample.flight(item: "B9C8-\(index)"), Sample.flight(item: "C7-\(index)", container: "C7-\(index)")],
                                decision: entry)
                            return (index, false)
                        } catch {
                            return (index, true)
                        }
                    }
                }
                var failures: Set<Int> = []
                for try await (index, failed) in group where failed { failures.insert(index) }
                return failures
            }
            #expect(failures == refused)
            let stored = try await store.list(owner: Sample.owner)
            #expect(stored.count == 2 * (48 - refused.count))
            var events = try await store.changes(after: 0, scope: .all, limit: 1000)
            #expect(events.map(\.position) == Array(1...Int64(stored.count)))
            #expect(Set(events.map(\.reservation.id)) == Set(stored.map(\.id)))
            _ = try await store.ingest([Sample.flight(item: "Z9", container: "Z9")], decision: DecisionLogTests.entry(hours: 99, domain: Sample.domain))
            events = try await store.changes(after: Int64(stored.count), scope: .all, limit: 10)
            #expect(events.map(\.position) == [Int64(stored.count) + 1])
            #expect(events.first?.reservation.key.itemReference == "Z9")
        }
    }
}
