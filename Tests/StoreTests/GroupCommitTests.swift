import Foundation
import Store
import Synchronization
import Testing

/// Concurrent calls share write transactions (``GroupCommit``, which both database backends use): every caller still
/// gets its own result, a failure stays with its caller, and a failed transaction fails only the calls it held.
@Suite("Group commit")
struct GroupCommitTests {
    /// A write function that records its batches, answers each request with itself, and fails the requests (or the
    /// whole transaction) the test names.
    final class Writer: Sendable {
        let batches = Mutex<[[Int]]>([])
        let failing: Set<Int>
        let failingTransactions: Set<Int>

        init(failing: Set<Int> = [], failingTransactions: Set<Int> = []) {
            self.failing = failing
            self.failingTransactions = failingTransactions
        }

        func write(_ requests: [Int]) async throws -> [Result<Int, any Error>] {
            let number = batches.withLock { batches in
                batches.append(requests)
                return batches.count - 1
            }
            try await Task.sleep(for: .milliseconds(5))  // a commit takes time: others queue meanwhile
            if failingTransactions.contains(number) { throw StoreError(code: .io, reason: "test: transaction failed") }
            return requests.map { request in
                failing.contains(request) ? .failure(StoreError(code: .invalidArgument, reason: "test")) : .success(request)
            }
        }
    }

    @Test func everyCallerGetsItsOwnResultAndWritesAreShared() async throws {
        let commit = GroupCommit<Int, Int>()
        let writer = Writer()
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<50 {
                group.addTask { (index, try await commit.run(index, write: writer.write)) }
            }
            for try await (index, result) in group { #expect(result == index) }
        }
        let batches = writer.batches.withLock { $0 }
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<50))
        #expect(batches.count < 50)
        #expect(batches.allSatisfy { $0.count <= GroupCommit<Int, Int>.maximumBatch })
    }

    @Test(arguments: [1, 3]) func lanesBoundTheTransactionsUnderWay(lanes: Int) async throws {
        let commit = GroupCommit<Int, Int>(lanes: lanes)
        let writing = Mutex((now: 0, most: 0))
        let write: @Sendable ([Int]) async throws -> [Result<Int, any Error>] = { requests in
            writing.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            try await Task.sleep(for: .milliseconds(10))
            writing.withLock { $0.now -= 1 }
            return requests.map { .success($0) }
        }
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<200 {
                group.addTask { (index, try await commit.run(index, write: write)) }
            }
            for try await (index, result) in group { #expect(result == index) }
        }
        let most = writing.withLock { $0.most }
        #expect(most <= lanes)
        // 200 callers at once keep every lane busy.
        #expect(most == lanes)
        #expect(writing.withLock { $0.now } == 0)
        // Every lane ended: the next caller leads at once.
        #expect(try await commit.run(7, write: write) == 7)
    }

    @Test func aFailedRequestFailsAlone() async throws {
        let commit = GroupCommit<Int, Int>()
        let writer = Writer(failing: [7, 21])
        let failed = try await withThrowingTaskGroup(of: Int?.self) { group in
            for index in 0..<30 {
                group.addTask {
                    let code = await storeErrorCode { _ = try await commit.run(index, write: writer.write) }
                    return code == nil ? nil : index
                }
            }
            var failed: [Int] = []
            for try await index in group { if let index { failed.append(index) } }
            return failed.sorted()
        }
        #expect(failed == [7, 21])
    }

    @Test func aFailedTransactionFailsItsBatchAndTheNextOneRuns() async throws {
        let commit = GroupCommit<Int, Int>()
        let writer = Writer(failingTransactions: [0])
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask { await storeErrorCode { _ = try await commit.run(index, write: writer.write) } == .io }
            }
            var failures = 0
            for try await failed in group where failed { failures += 1 }
            return failures
        }
        let batches = writer.batches.withLock { $0 }
        #expect(failures == batches[0].count)
        #expect(try await commit.run(99, write: writer.write) == 99)
    }

    @Test(arguments: StoreBackend.all) func concurrentIngestionsAllLand(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let ids = try await withThrowingTaskGroup(of: Int64?.self) { group in
                for index in 0..<80 {
                    group.addTask {
                        try await store.ingest(
                            [Sample.flight(item: "B9C8-\(index)")],
                            decision: DecisionLogTests.entry(hours: Double(index), domain: Sample.domain)
                        ).id
                    }
                }
                var ids: [Int64?] = []
                for try await id in group { ids.append(id) }
                return ids
            }
            #expect(Set(ids.compactMap { $0 }).count == 80)
            #expect(try await store.list(owner: Sample.owner).count == 80)
            #expect(try await store.entries(domain: Sample.domain, since: nil, afterID: nil, limit: 100).count == 80)
        }
    }

    /// Batches are written without a savepoint per request first (both SQL backends): a request that fails there must still
    /// fail alone, its rows and change events gone, the others' kept, each answered as if written on its own.
    @Test(arguments: StoreBackend.all) func aFailingIngestionInABatchFailsAlone(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let outcomes = try await withThrowingTaskGroup(of: (Int, StoreError.Code?).self) { group in
                for index in 0..<60 {
                    group.addTask {
                        // Every seventh removes a spooled message that is not there: store.spool-entry-gone.
                        let code = await storeErrorCode {
                            _ = try await store.ingest(
                                [Sample.flight(item: "B9C8-\(index)")],
                                decision: DecisionLogTests.entry(hours: Double(index), domain: Sample.domain),
                                removingSpooledMessage: index % 7 == 3 ? 900_000 + Int64(index) : nil)
                        }
                        return (index, code)
                    }
                }
                var outcomes: [Int: StoreError.Code?] = [:]
                for try await (index, code) in group { outcomes[index] = code }
                return outcomes
            }
            let failed = Set((0..<60).filter { $0 % 7 == 3 })
            for (index, code) in outcomes {
                #expect(code == (failed.contains(index) ? .spoolEntryGone : nil), "ingestion \(index)")
            }
            let stored = Set(try await store.list(owner: Sample.owner).map(\.key.itemReference))
            #expect(stored == Set((0..<60).filter { !failed.contains($0) }.map { "B9C8-\($0)" }))
            let changes = try await store.changes(after: 0, scope: .all, limit: 1000)
            #expect(Set(changes.map(\.reservation.key.itemReference)) == stored)
            #expect(changes.map(\.position) == Array(1...Int64(stored.count)))
            #expect(try await store.entries(domain: Sample.domain, since: nil, afterID: nil, limit: 100).count == stored.count)
        }
    }

    @Test(arguments: StoreBackend.all) func concurrentSpoolsAreEachStoredOnceWithTheirOwnBytes(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            let ids = try await withThrowingTaskGroup(of: (Int, Int64).self) { group in
                for index in 0..<60 {
                    group.addTask {
                        let spooled = try await store.spool(
                            Data("message \(index)".utf8), channel: .lmtp, owner: OwnerAddress("o\(index)@example.org"),
                            reasonCode: "lmtp.received", nextAttemptAt: Date())
                        return (index, spooled.id)
                    }
                }
                var ids: [Int: Int64] = [:]
                for try await (index, id) in group { ids[index] = id }
                return ids
            }
            #expect(Set(ids.values).count == 60)
            #expect(try await store.spooledMessageCount() == 60)
            for (index, id) in ids {
                let stored = try #require(try await store.spooledMessage(id: id))
                #expect(stored.bytes == Data("message \(index)".utf8) && stored.owner?.address == "o\(index)@example.org")
            }
        }
    }
}
