import Foundation
import Store
import Testing

/// Two stores on one file stand for two gateway processes (the LMTP listener and `gateway retry`): each has its own
/// connections, so they contend through SQLite's file locks exactly as processes do.
@Suite("Concurrent writers on one file")
struct ConcurrentWriterTests {
    @Test func sameItemsFromTwoStoresEndAsOneRecordEach() async throws {
        let directory = try TemporaryDirectory()
        let stores = try (0..<2).map { _ in
            try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        }
        let items = (0..<200).map { Sample.flight(item: "B9C8-\($0)") }
        let rounds = 8

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
        for store in stores { try store.close() }
    }

    @Test func concurrentUpdatesKeepVersionsAndHistoryConsistent() async throws {
        let directory = try TemporaryDirectory()
        let stores = try (0..<2).map { _ in
            try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        }
        let tasks = 4
        let updatesPerTask = 50

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
        // Every write saw the one before it: the new versions are exactly 2...total, each once.
        #expect(versions.sorted() == Array(2...total))

        let record = try #require(try await stores[1].list(owner: Sample.owner).first)
        #expect(record.version == total)
        #expect(try await stores[0].history(of: record.id).map(\.version) == Array(1...total))
        for store in stores { try store.close() }
    }
}
