import Foundation
import Store
import Testing

/// Two stores over the same data stand for two gateway processes (the LMTP listener and `gateway retry`) or two nodes
/// on one PostgreSQL: each has its own connections, so they contend through the database's locks exactly as processes
/// do.
@Suite("Store conformance: concurrent writers, on every backend")
struct ConcurrentWriterTests {
    @Test(arguments: StoreBackend.all) func sameItemsFromTwoStoresEndAsOneRecordEach(backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let items = (0..<120).map { Sample.flight(item: "B9C8-\($0)") }
            let rounds = 6

            // Every task applies every item one by one, each in its own transaction, in its own order: each item is
            // raced by all tasks at once, so a check-then-insert outside one transaction would fail here.
            let outcomes = try await withThrowingTaskGroup(of: [LifecycleOutcome].self) { group in
                for round in 0..<rounds {
                    let store = stores[round % stores.count]
                    let order = (round / stores.count).isMultiple(of: 2) ? items : items.reversed()
                    group.addTask {
                        var outcomes: [LifecycleOutcome] = []
                        for item in order { outcomes.append(try await store.apply(item)) }
                        return outcomes
                    }
                }
                return try await group.reduce(into: [LifecycleOutcome]()) { $0 += $1 }
            }
            #expect(outcomes.filter { $0 == .created }.count == items.count)
            #expect(outcomes.filter { $0 == .unchanged }.count == items.count * (rounds - 1))

            let records = try await stores[0].list(owner: Sample.owner)
            #expect(records.count == items.count)
            #expect(records.allSatisfy { $0.version == 1 })
        }
    }

    /// No lost update: every write sees the one before it, so versions are exactly 2...n, each once, and the history
    /// holds every one of them.
    @Test(arguments: StoreBackend.all) func concurrentUpdatesKeepVersionsAndHistoryConsistent(backend: StoreBackend)
        async throws
    {
        try await withStores(backend, count: 2) { stores in
            let tasks = 4
            let updatesPerTask = 40
            let outcomes = try await withThrowingTaskGroup(of: [LifecycleOutcome].self) { group in
                for task in 0..<tasks {
                    let store = stores[task % stores.count]
                    group.addTask {
                        var outcomes: [LifecycleOutcome] = []
                        for update in 0..<updatesPerTask {
                            outcomes.append(try await store.apply(Sample.flight(gate: "T\(task)-\(update)")))
                        }
                        return outcomes
                    }
                }
                return try await group.reduce(into: [LifecycleOutcome]()) { $0 += $1 }
            }
            let total = tasks * updatesPerTask
            #expect(outcomes.filter { $0 == .created }.count == 1)
            let versions = outcomes.compactMap { outcome -> Int? in
                if case .updated(let version) = outcome { return version }
                return nil
            }
            #expect(versions.sorted() == Array(2...total))

            let record = try #require(try await stores[1].list(owner: Sample.owner).first)
            #expect(record.version == total)
            #expect(try await stores[0].history(of: record.id).map(\.version) == Array(1...total))
        }
    }

    /// Versions sent at known times, written by several writers at once in a shuffled order: whatever the
    /// interleaving, the record ends at the newest, no older time ever overwrote a newer one, and every version
    /// that was applied is in the history in increasing time.
    @Test(arguments: StoreBackend.all) func anOlderSenderTimeNeverOverwritesANewerOne(backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let versions = (1...60).map { hour in
                Sample.flight(sent: SenderTime(Sample.time(Double(hour)), source: .messageDate), gate: "G\(hour)")
            }
            var generator = SystemRandomNumberGenerator()
            let shuffled = versions.shuffled(using: &generator)
            let writers = 4
            _ = try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let store = stores[writer % stores.count]
                    let share = shuffled.enumerated().filter { $0.offset % writers == writer }.map(\.element)
                    group.addTask { for item in share { _ = try await store.apply(item) } }
                }
                try await group.waitForAll()
            }
            let record = try #require(try await stores[0].list(owner: Sample.owner).first)
            #expect(record.payload == Sample.flight(gate: "G60").content.payload)
            #expect(record.senderTime?.instant == Sample.time(60))
            let history = try await stores[1].history(of: record.id)
            #expect(history.map(\.version) == Array(1...history.count))
            let times = history.compactMap(\.senderTime?.instant)
            #expect(times == times.sorted())
            #expect(Set(times).count == times.count)
        }
    }

    /// Ingestions of the same message delivered to two nodes at once (an MTA retrying elsewhere) store it once.
    @Test(arguments: StoreBackend.all) func theSameIngestionOnTwoStoresAtOnceStoresOneRecord(backend: StoreBackend)
        async throws
    {
        try await withStores(backend, count: 2) { stores in
            let items = (0..<3).map { Sample.flight(item: "B9C8-\($0)") }
            let entries = try await withThrowingTaskGroup(of: DecisionLogEntry.self) { group in
                for attempt in 0..<8 {
                    let store = stores[attempt % 2]
                    group.addTask {
                        try await store.ingest(items, decision: DecisionLogTests.entry(hours: 1, domain: Sample.domain))
                    }
                }
                return try await group.reduce(into: [DecisionLogEntry]()) { $0.append($1) }
            }
            let created = entries.flatMap(\.reservations).filter { $0.outcome == .created }
            #expect(created.count == items.count)
            let records = try await stores[0].list(owner: Sample.owner)
            #expect(records.count == items.count)
            #expect(records.allSatisfy { $0.version == 1 })
        }
    }
}
