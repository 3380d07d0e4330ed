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

    // MARK: - Linger

    /// Runs `body` in `commit.expecting` in a task of its own, and returns once it is inside: the call is counted.
    static func expectedCall<T: Sendable>(
        _ commit: GroupCommit<Int, Int>, _ body: @escaping @Sendable () async throws -> T
    ) async -> Task<T, any Error> {
        let (entered, inside) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await commit.expecting {
                inside.yield()
                return try await body()
            }
        }
        for await _ in entered { break }
        return task
    }

    @Test func aLoneLeaderWaitsForAnExpectedCallAndTheyShareACommit() async throws {
        let commit = GroupCommit<Int, Int>(linger: .seconds(30))
        let writer = Writer()
        let expected = await Self.expectedCall(commit) {
            try await Task.sleep(for: .milliseconds(50))
            return try await commit.run(1, write: writer.write)
        }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try await commit.run(0, write: writer.write) == 0)
        #expect(clock.now - start >= .milliseconds(40))  // it waited for the expected call
        #expect(try await expected.value == 1)
        #expect(writer.batches.withLock { $0 } == [[0, 1]])
        #expect(commit.lingerStatistics.counts == [1, 1, 0, 0])
    }

    /// On several lanes the call a leader lingers for joins it rather than taking a free lane of its own.
    @Test func theExpectedCallJoinsTheLingeringLeaderEvenWithALaneFree() async throws {
        let commit = GroupCommit<Int, Int>(lanes: 2, linger: .seconds(30))
        let writer = Writer()
        let expected = await Self.expectedCall(commit) {
            try await Task.sleep(for: .milliseconds(50))
            return try await commit.run(1, write: writer.write)
        }
        #expect(try await commit.run(0, write: writer.write) == 0)
        #expect(try await expected.value == 1)
        #expect(writer.batches.withLock { $0 } == [[0, 1]])
        #expect(commit.lingerStatistics.counts == [1, 1, 0, 0])
    }

    @Test func anExpectedCallThatLeavesWithoutWritingEndsTheWait() async throws {
        let commit = GroupCommit<Int, Int>(linger: .seconds(30))
        let writer = Writer()
        let expected = await Self.expectedCall(commit) {
            try await Task.sleep(for: .milliseconds(50))
            return 5  // it had nothing to write after all
        }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try await commit.run(0, write: writer.write) == 0)
        #expect(clock.now - start < .seconds(20))  // not the linger's 30 s
        #expect(try await expected.value == 5)
        #expect(writer.batches.withLock { $0 } == [[0]])
        #expect(commit.lingerStatistics.counts == [1, 0, 1, 0])
    }

    @Test func theWaitIsBoundedByTheLinger() async throws {
        let commit = GroupCommit<Int, Int>(linger: .milliseconds(30))
        let writer = Writer()
        let release = AsyncStream.makeStream(of: Void.self)
        let expected = await Self.expectedCall(commit) {
            for await _ in release.stream { break }
            return try await commit.run(1, write: writer.write)
        }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(try await commit.run(0, write: writer.write) == 0)
        #expect(clock.now - start >= .milliseconds(25))
        #expect(commit.lingerStatistics.counts == [1, 0, 0, 1])
        release.continuation.yield()
        // The expected call, once it comes, waits for nobody: nothing else is expected.
        #expect(try await expected.value == 1)
        #expect(writer.batches.withLock { $0 } == [[0], [1]])
        #expect(commit.lingerStatistics.counts == [1, 0, 0, 1])
    }

    @Test func nothingExpectedNoWait() async throws {
        let commit = GroupCommit<Int, Int>(linger: .seconds(30))
        let writer = Writer()
        #expect(try await commit.run(0, write: writer.write) == 0)
        // Expected calls that already arrived are not waited for either.
        #expect(try await commit.expecting { try await commit.run(1, write: writer.write) } == 1)
        #expect(commit.lingerStatistics.counts == [0, 0, 0, 0])
        #expect(writer.batches.withLock { $0 } == [[0], [1]])
    }

    /// Many expected calls at once, on one lane and on several: every one is written once with its own result, and no
    /// leader waits out its linger (30 s), since every expected call comes.
    @Test(arguments: [1, 3]) func manyExpectedCallsAllLandWithoutWaitingOutTheLinger(lanes: Int) async throws {
        let commit = GroupCommit<Int, Int>(lanes: lanes, linger: .seconds(30))
        let writer = Writer()
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<120 {
                group.addTask {
                    try await commit.expecting {
                        try await Task.sleep(for: .milliseconds(index % 7))
                        // Every fifth has nothing to write.
                        return (index, index % 5 == 4 ? index : try await commit.run(index, write: writer.write))
                    }
                }
            }
            for try await (index, result) in group { #expect(result == index) }
        }
        let written = writer.batches.withLock { $0 }.flatMap { $0 }
        #expect(written.sorted() == (0..<120).filter { $0 % 5 != 4 })
        let lingers = commit.lingerStatistics
        #expect(lingers.timedOut == 0 && lingers.began == lingers.ended)
    }

    /// The stores' `expectingIngestion` (what the email path runs past the prefilter) makes a lone ingestion wait for
    /// the one on its way, and the two share a transaction: both land, and the commit waited for nobody after.
    @Test(arguments: [StoreBackend.sqlite, .postgres]) func aLoneIngestionWaitsForAnExpectedOne(backend: StoreBackend)
        async throws
    {
        try await withStore(backend, commitLinger: .seconds(30)) { store in
            let (entered, inside) = AsyncStream.makeStream(of: Void.self)
            let expected = Task {
                try await store.expectingIngestion {
                    inside.yield()
                    try await Task.sleep(for: .milliseconds(50))
                    return try await store.ingest(
                        [Sample.flight(item: "LATE01")], decision: DecisionLogTests.entry(hours: 1, domain: Sample.domain)
                    ).id
                }
            }
            for await _ in entered { break }
            let lone = try await store.ingest(
                [Sample.flight(item: "LONE01")], decision: DecisionLogTests.entry(hours: 0, domain: Sample.domain)
            ).id
            let late = try await expected.value
            #expect(lone != nil && late != nil && lone != late)
            #expect(Set(try await store.list(owner: Sample.owner).map(\.key.itemReference)) == ["LONE01", "LATE01"])
            #expect(store.commitLingers?.counts == [1, 1, 0, 0])
            _ = try await store.ingest(
                [Sample.flight(item: "NEXT01")], decision: DecisionLogTests.entry(hours: 2, domain: Sample.domain))
            #expect(store.commitLingers?.began == 1)
        }
    }
}

extension CommitLingerStatistics {
    /// Lingers begun, and ended by a join, by none left, by time.
    var counts: [Int] { [began, joined, noneLeft, timedOut] }
}
