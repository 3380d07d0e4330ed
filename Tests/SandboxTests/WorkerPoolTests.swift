import Foundation
import Markup
import Synchronization
import Testing

@testable import Sandbox

extension WorkerProcessTests {
    /// Each way a worker can fail yields its code for that document only; the others in flight
    /// complete, and the pool replaces the worker.
    @Suite("Worker pool")
    struct WorkerPoolTests {
        @Test("documents come back from the worker, in order of their own requests")
        func echoes() async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                #expect(await pool.echoes(40) == 40)
                let graph = try #require(
                    await pool.extract(Array("echo".utf8), kind: .email, deadline: .seconds(5)).value)
                #expect(graph.nodes.first?.values("kind").first?.text == "email")
                #expect(pool.workers.map(\.restarts) == [0, 0])
            }
        }

        @Test("a document built to exhaust memory yields sandbox.memory-limit")
        func memoryBomb() async throws {
            try await withWorkerPool(configuration: .probe(workers: 2, addressSpaceBytes: 384 << 20)) { pool in
                async let others = pool.echoes(8)
                let failure = try #require(await pool.probe("allocate").failure)
                #expect(failure.code == .memoryLimit)
                #expect(failure.termination == .exited(WorkerExitStatus.memoryLimit))
                #expect(await others == 8)
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test("one allocation beyond the address space limit yields sandbox.memory-limit")
        func oneHugeAllocation() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1, addressSpaceBytes: 384 << 20)) { pool in
                let failure = try #require(await pool.probe("allocate-once:\(1 << 32)").failure)
                #expect(failure.code == .memoryLimit)
                #expect(failure.termination == .signaled(SIGABRT))  // the Swift runtime's abort, after saying why
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test("an endless loop yields sandbox.timeout at its deadline")
        func endlessLoop() async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                async let others = pool.echoes(8)
                let start = ContinuousClock.now
                let failure = try #require(await pool.probe("loop", deadline: .milliseconds(300)).failure)
                let elapsed = ContinuousClock.now - start
                #expect(failure.code == .timeout)
                #expect(failure.termination == .signaled(SIGKILL))
                #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(2))
                #expect(await others == 8)
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test("a worker killed with SIGKILL mid-document yields sandbox.crashed and is replaced")
        func killedMidDocument() async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                async let spinning = pool.probe("spin:5000", deadline: .seconds(10))
                let victim = try #require(await pool.busyWorker())
                async let others = pool.echoes(8)
                kill(victim, SIGKILL)
                let failure = try #require(await spinning.failure)
                #expect(failure.code == .crashed)
                #expect(failure.termination == .signaled(SIGKILL))
                #expect(await others == 8)
                #expect(await pool.echoes(2) == 2)
                #expect(!pool.workers.contains { $0.processID == victim })
                #expect(await eventually { pool.workers.map(\.restarts).reduce(0, +) == 1 })
                #expect(await eventually { pool.workers.allSatisfy { $0.processID != nil } })
                #expect(!processExists(victim))  // reaped, not a zombie
            }
        }

        @Test("garbage on the answer pipe yields sandbox.protocol-error")
        func garbageAnswer() async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                async let others = pool.echoes(8)
                #expect(await pool.probe("garbage").failureCode == .protocolError)
                #expect(await others == 8)
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test("a crash or a stack overflow yields sandbox.crashed with SIGSEGV", arguments: ["crash", "recurse"])
        func crash(command: String) async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                async let others = pool.echoes(8)
                let failure = try #require(await pool.probe(command).failure)
                #expect(failure.code == .crashed)
                #expect(failure.termination == .signaled(SIGSEGV))
                #expect(await others == 8)
            }
        }

        @Test("a 50 MB document is refused before any worker sees it, or handled when the limit allows it")
        func fiftyMegabytes() async throws {
            let document = Array("echo".utf8) + [UInt8](repeating: 0x20, count: 50_000_000)
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                #expect(await pool.extract(document, kind: .html, deadline: .seconds(5)).failureCode == .tooLarge)
                #expect(pool.workers.map(\.restarts) == [0, 0])
            }
            try await withWorkerPool(configuration: .probe(workers: 2, maxDocumentBytes: 64 << 20)) { pool in
                async let others = pool.echoes(8)
                let graph = try #require(await pool.extract(document, kind: .html, deadline: .seconds(10)).value)
                #expect(graph.nodes.first?.values("length").first?.text == String(document.count))
                #expect(await others == 8)
            }
        }

        @Test("a graph larger than the answer limit yields sandbox.too-large, and the worker stays")
        func answerTooLarge() async throws {
            var configuration = WorkerPool.Configuration.probe(workers: 1)
            configuration.limits.maxResponseBytes = 64 << 10
            try await withWorkerPool(configuration: configuration) { pool in
                #expect(await pool.probe("big-answer:1000").value != nil)
                #expect(await pool.probe("big-answer:100000").failureCode == .tooLarge)
                #expect(await pool.echoes(2) == 2)
                #expect(pool.workers.first?.restarts == 0)
            }
        }

        @Test("workers are replaced after their quota of documents")
        func recycling() async throws {
            var configuration = WorkerPool.Configuration.probe(workers: 1)
            configuration.maxDocumentsPerWorker = 3
            try await withWorkerPool(configuration: configuration) { pool in
                for index in 0..<7 { #expect(await pool.probe("echo \(index)").value != nil) }
                #expect(pool.workers.first?.restarts == 2)
                #expect(pool.workers.first?.documentsCompleted == 7)
            }
        }

        @Test("a cancelled task gets sandbox.cancelled at once, and its worker is replaced")
        func cancellation() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let task = Task { await pool.probe("loop", deadline: .seconds(30)) }
                _ = try #require(await pool.busyWorker())
                let start = ContinuousClock.now
                task.cancel()
                #expect(await task.value.failureCode == .cancelled)
                #expect(ContinuousClock.now - start < .seconds(1))
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test("documents beyond the queue limit are refused, not held")
        func queueLimit() async throws {
            var configuration = WorkerPool.Configuration.probe(workers: 1)
            configuration.maxQueuedDocuments = 2
            try await withWorkerPool(configuration: configuration) { pool in
                async let busy = pool.probe("spin:500")
                _ = try #require(await pool.busyWorker())
                let codes = await withTaskGroup(of: SandboxFailure.Code?.self) { group in
                    for _ in 0..<5 { group.addTask { await pool.probe("echo").failureCode } }
                    return await group.reduce(into: [SandboxFailure.Code?]()) { $0.append($1) }
                }
                #expect(codes.filter { $0 == nil }.count == 2)
                #expect(codes.filter { $0 == .unavailable }.count == 3)
                #expect(await busy.value != nil)
            }
        }

        @Test("shutdown reaps every worker and refuses further documents")
        func shutdown() async throws {
            let pool = try await WorkerPool(configuration: .probe(workers: 2))
            let processIDs = pool.workers.compactMap(\.processID)
            #expect(processIDs.count == 2)
            #expect(await pool.echoes(4) == 4)
            await pool.shutdown()
            #expect(processIDs.allSatisfy { !processExists($0) })
            #expect(await pool.probe("echo").failureCode == .unavailable)
        }

        @Test("a worker that cannot start makes the pool unavailable, with no process left behind")
        func startupFailure() async throws {
            var configuration = WorkerPool.Configuration.probe(workers: 2)
            configuration.workerExecutable = "/bin/false"
            await #expect(throws: SandboxFailure.self) { _ = try await WorkerPool(configuration: configuration) }
            do {
                _ = try await WorkerPool(configuration: configuration)
            } catch {
                #expect(error.code == .unavailable)
                #expect(error.termination == .exited(1))
            }
            configuration.workerExecutable = Executables.directory + "/no-such-worker"
            do {
                _ = try await WorkerPool(configuration: configuration)
                Issue.record("a pool without an executable started")
            } catch {
                #expect(error.code == .unavailable)
            }
        }
    }

    @Suite("Worker pool: dead workers and resources")
    struct WorkerPoolResourceTests {
        @Test("a worker that died while idle is replaced before the next document, which succeeds")
        func diedWhileIdle() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let victim = try #require(pool.workers.first?.processID)
                kill(victim, SIGKILL)
                #expect(await eventually { procStatus(victim, "State")?.hasPrefix("Z") ?? true })
                #expect(await pool.echoes(3) == 3)
                #expect(await eventually { !processExists(victim) })
            }
        }

        @Test("a worker killed while the gateway writes a large document to it: EPIPE, not SIGPIPE")
        func killedDuringWrite() async throws {
            let document = Array("echo".utf8) + [UInt8](repeating: 0x20, count: 30_000_000)
            try await withWorkerPool(configuration: .probe(workers: 1, maxDocumentBytes: 32 << 20)) { pool in
                var killed = false
                for _ in 0..<5 where !killed {  // the kill must land while the document is in flight
                    let big = Task { await pool.extract(document, kind: .html, deadline: .seconds(10)) }
                    if let victim = await pool.busyWorker() { kill(victim, SIGKILL) }
                    let result = await big.value
                    if let failure = result.failure {
                        #expect(failure.code == .crashed)
                        #expect(failure.termination == .signaled(SIGKILL))
                        killed = true
                    }
                }
                #expect(killed)
                #expect(await pool.echoes(2) == 2)  // and this process is still alive to check
            }
        }

        @Test("replacing workers leaks no file descriptors and leaves no processes")
        func noLeaks() async throws {
            // Every earlier pool has shut down (these suites run one test at a time): nothing is open.
        #expect(await eventually { Descriptors.openCount.load(ordering: .relaxed) == 0 })
        let before = Descriptors.openCount.load(ordering: .relaxed)
            var seen: Set<Int32> = []
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                let held = Descriptors.openCount.load(ordering: .relaxed) - before
                #expect(held == 2 * 2 + 2 * 3)  // two wake pipes, three pipe ends per worker
                for _ in 0..<8 {
                    seen.formUnion(pool.workers.compactMap(\.processID))
                    #expect(await pool.probe("crash").failureCode == .crashed)
                }
                #expect(await pool.echoes(4) == 4)
                #expect(await eventually { pool.workers.map(\.restarts).reduce(0, +) == 8 })
                seen.formUnion(pool.workers.compactMap(\.processID))
            }
            #expect(await eventually { Descriptors.openCount.load(ordering: .relaxed) == before })
            #expect(seen.count >= 2)
            #expect(seen.allSatisfy { !processExists($0) })
        }
    }

    /// A document that finds a worker idle is written to it by the task that asks (no wake-up of the slot's
    /// thread); the slot thread still answers it, with the same deadlines, cancellation and failures.
    @Suite("Worker pool: hand-off to an idle worker")
    struct HandOffTests {
        /// Waits until the pool's only slot has answered a document and is back waiting on its worker, where
        /// a task may hand it the next (at the pool's start the slot may still be on its way there); returns
        /// how many documents were handed off so far.
        static func idle(_ pool: WorkerPool) async throws -> Int {
            _ = try #require(await pool.probe("echo").value)
            #expect(await eventually { pool.workers.first?.isBusy == false })
            return try #require(pool.workers.first?.handedOff)
        }

        @Test("documents asked one at a time go from the task to the idle worker, and come back")
        func handedOneByOne() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let worker = try #require(pool.workers.first?.processID)
                var handed = try await Self.idle(pool)
                for index in 0..<20 {
                    // Once its thread is back waiting on the worker (else the document is queued for it, as usual).
                    #expect(await eventually { pool.workers.first?.isBusy == false })
                    let graph = try #require(await pool.probe("echo \(index)").value)
                    #expect(BatchTests.echoedBy(.success(graph)) == worker)
                    #expect(graph.nodes.first?.values("length").first?.text == String("echo \(index)".utf8.count))
                }
                let status = try #require(pool.workers.first)
                #expect(status.handedOff - handed == 20)
                handed = status.handedOff
                #expect(status.documentsCompleted == 21)
                #expect(status.restarts == 0)
            }
        }

        @Test("a deadline shorter than the slot's tick is not handed off; the slot thread writes it")
        func shortDeadlineQueued() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                var handed = try await Self.idle(pool)
                #expect(await pool.probe("echo", deadline: PoolCore.shortestHandedDeadline / 2).value != nil)
                #expect(pool.workers.first?.handedOff == handed)
                handed = try await Self.idle(pool)
                #expect(await pool.probe("echo", deadline: PoolCore.shortestHandedDeadline).value != nil)
                #expect(pool.workers.first?.handedOff == handed + 1)
            }
        }

        @Test("a handed document that never ends times out at its deadline; its worker is replaced")
        func handedTimeout() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let first = try #require(pool.workers.first?.processID)
                let handed = try await Self.idle(pool)
                let start = ContinuousClock.now
                let failure = try #require(await pool.probe("loop", deadline: .milliseconds(400)).failure)
                let elapsed = ContinuousClock.now - start
                #expect(pool.workers.first?.handedOff == handed + 1)
                #expect(failure.code == .timeout)
                #expect(failure.termination == .signaled(SIGKILL))
                #expect(elapsed >= .milliseconds(400) && elapsed < .milliseconds(400) + .seconds(1))
                #expect(!processExists(first))
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test("a handed document whose worker crashes yields sandbox.crashed; the next is handed to its successor")
        func handedCrash() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let first = try #require(pool.workers.first?.processID)
                let handed = try await Self.idle(pool)
                let crash = try #require(await pool.probe("crash").failure)
                #expect(crash.code == .crashed)
                #expect(crash.reason.contains("worker \(first)"))
                #expect(await eventually { pool.workers.first.map { !$0.isBusy && $0.processID != first } ?? false })
                let graph = try #require(await pool.probe("echo").value)
                let second = try #require(BatchTests.echoedBy(.success(graph)))
                #expect(second != first)
                #expect(pool.workers.first?.handedOff == handed + 2)
            }
        }

        @Test("a handed document cancelled while its worker is on it: sandbox.cancelled at once, worker replaced")
        func handedCancelled() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let handed = try await Self.idle(pool)
                let task = Task { await pool.probe("loop", deadline: .seconds(30)) }
                let victim = try #require(await pool.busyWorker())
                let start = ContinuousClock.now
                task.cancel()
                #expect(await task.value.failureCode == .cancelled)
                #expect(ContinuousClock.now - start < .seconds(2))
                #expect(pool.workers.first?.handedOff == handed + 1)
                #expect(await eventually { !processExists(victim) })
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test("a worker that dies while idle: the next document, handed or queued, goes to its successor")
        func handedToDeadWorker() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let victim = try #require(pool.workers.first?.processID)
                kill(victim, SIGKILL)
                #expect(await eventually { procStatus(victim, "State")?.hasPrefix("Z") ?? true })
                // Either the slot has replaced it already, or the task's write meets a pipe with no reader (EPIPE)
                // and queues the document for the replacement.
                let graph = try #require(await pool.probe("echo").value)
                let successor = try #require(BatchTests.echoedBy(.success(graph)))
                #expect(successor != victim)
                #expect(pool.workers.first?.restarts == 1)
            }
        }
    }

    /// The task's own write (`WorkerProcess.writeNow`), on a thread that does not block SIGPIPE.
    @Suite("Worker pool: a task's write to a worker's pipe")
    struct HandOffWriteTests {
        @Test("a pipe with no reader: nil (EPIPE), no SIGPIPE left pending, the thread's signal mask as it was")
        func noReader() throws {
            let pipe = try #require(Descriptors.pipe(flags: O_NONBLOCK))
            defer { Descriptors.close(pipe.write) }
            Descriptors.close(pipe.read)
            var before = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &before)
            let bytes = [UInt8](repeating: 0x41, count: 10_000)
            #expect(WorkerProcess.writeNow([bytes[...]], to: pipe.write) == nil)  // and this process lives on
            var after = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &after)
            #expect(sigismember(&after, SIGPIPE) == sigismember(&before, SIGPIPE))
            var pending = sigset_t()
            sigpending(&pending)
            #expect(sigismember(&pending, SIGPIPE) == 0)
        }

        @Test("a pipe with less room than the request: the bytes it took, without waiting; the reader gets them in order")
        func partial() throws {
            let pipe = try #require(Descriptors.pipe(flags: O_NONBLOCK))
            defer {
                Descriptors.close(pipe.read)
                Descriptors.close(pipe.write)
            }
            let prefix: [UInt8] = [1, 2, 3]
            let document = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let written = try #require(WorkerProcess.writeNow([prefix[...], document[...]], to: pipe.write))
            #expect(written > 0 && written < prefix.count + document.count)
            var received = [UInt8](repeating: 0, count: written)
            #expect(read(pipe.read, &received, written) == written)
            #expect(received == Array((prefix + document).prefix(written)))
            #expect(WorkerSlot.dropping(written, from: [prefix[...], document[...]]).flatMap { $0 } == Array((prefix + document).dropFirst(written)))
        }
    }

    /// Documents that queue while a worker is busy go to it together, in one write, and are answered one
    /// by one; a failure on one of them costs that document only.
    @Suite("Worker pool: batches")
    struct BatchTests {
        /// Occupies the pool's only worker with a spin, then queues `commands` behind it in this order
        /// (each `deadline`), and returns their answers in the same order.
        static func queuedBehindSpin(
            _ pool: WorkerPool, _ commands: [(String, Duration)]
        ) async throws -> [Result<MarkupGraph, SandboxFailure>] {
            async let spinning = pool.probe("spin:400")
            _ = try #require(await pool.busyWorker())
            var tasks: [Task<Result<MarkupGraph, SandboxFailure>, Never>] = []
            for (command, deadline) in commands {
                tasks.append(Task { await pool.probe(command, deadline: deadline) })
                try await Task.sleep(for: .milliseconds(20))  // queued in this order
            }
            #expect(await spinning.value != nil)
            var results: [Result<MarkupGraph, SandboxFailure>] = []
            for task in tasks { results.append(await task.value) }
            return results
        }

        /// The pid an echo's worker reported.
        static func echoedBy(_ result: Result<MarkupGraph, SandboxFailure>) -> Int32? {
            result.value?.nodes.first?.values("pid").first?.text.flatMap { Int32($0) }
        }

        @Test("a batch where one document crashes its worker: the others are answered or retried, none is lost")
        func crashInBatch() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let first = try #require(pool.workers.first?.processID)
                let results = try await Self.queuedBehindSpin(
                    pool, ["echo 0", "echo 1", "crash", "echo 3", "echo 4"].map { ($0, .seconds(5)) })
                #expect(pool.workers.first?.largestBatch == 5)  // the five went to the worker in one write
                #expect(Self.echoedBy(results[0]) == first)
                #expect(Self.echoedBy(results[1]) == first)
                let crash = try #require(results[2].failure)
                #expect(crash.code == .crashed)
                #expect(crash.termination == .signaled(SIGSEGV))
                #expect(crash.reason.contains("worker \(first)"))
                // Written to the crashed worker too, never reached: retried on its successor.
                let second = try #require(Self.echoedBy(results[3]))
                #expect(second != first)
                #expect(Self.echoedBy(results[4]) == second)
                #expect(pool.workers.first?.restarts == 1)
                #expect(!processExists(first))
            }
        }

        @Test("a document cancelled while it waits in a batch is answered cancelled; its worker lives on")
        func cancelledInBatch() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                async let spinning = pool.probe("spin:400")
                _ = try #require(await pool.busyWorker())
                let ahead = Task { await pool.probe("spin:300") }
                try await Task.sleep(for: .milliseconds(20))
                let cancelled = Task { await pool.probe("echo 1") }
                try await Task.sleep(for: .milliseconds(20))
                let behind = Task { await pool.probe("echo 2") }
                #expect(await spinning.value != nil)
                try await Task.sleep(for: .milliseconds(100))  // the three are written; the worker spins on the first
                cancelled.cancel()
                #expect(await cancelled.value.failureCode == .cancelled)
                #expect(await ahead.value.value != nil)
                #expect(await behind.value.value != nil)
                #expect(pool.workers.first?.largestBatch == 3)
                #expect(pool.workers.first?.restarts == 0)
            }
        }

        @Test("a document of a batch that overruns its deadline is killed with its worker; the rest are retried")
        func timeoutInBatch() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let first = try #require(pool.workers.first?.processID)
                let started = ContinuousClock.now
                let results = try await Self.queuedBehindSpin(
                    pool, [("echo 0", .seconds(5)), ("spin:5000", .milliseconds(500)), ("echo 2", .seconds(5))])
                #expect(ContinuousClock.now - started < .seconds(3))  // the deadline counted from its turn
                #expect(Self.echoedBy(results[0]) == first)
                #expect(results[1].failureCode == .timeout)
                let second = try #require(Self.echoedBy(results[2]))
                #expect(second != first)
                #expect(pool.workers.first?.largestBatch == 3)
            }
        }
    }

    @Suite("Worker pool: answers a compromised worker could give")
    struct HostileAnswerTests {
        /// Extraction nests items at most 64 deep (`maxItemDepth`, `maxJSONDepth`); the gateway's graph
        /// reader (GraphWire) refuses more than 96 levels, so a hostile answer cannot drive its
        /// decoding recursion deep.
        @Test(
            "a graph nested as deep as extraction allows decodes; a deeper one is refused, and the gateway lives",
            arguments: [(64, true), (100, false), (20_000, false)])
        func deepAnswer(levels: Int, accepted: Bool) async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let result = await pool.probe("deep-answer:\(levels)")
                #expect((result.value != nil) == accepted)
                if !accepted { #expect(result.failureCode == .protocolError) }
            }
        }

        /// The task that asked decodes the graph; the slot stops that worker before its next document, so a
        /// worker that answers garbage in a valid frame serves no one else.
        @Test("a graph that does not decode yields sandbox.protocol-error, and that worker gets no other document")
        func undecodableGraph() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let liar = try #require(pool.workers.first?.processID)
                let failure = try #require(await pool.probe("bad-graph").failure)
                #expect(failure.code == .protocolError)
                #expect(failure.reason.contains("worker \(liar)") && failure.reason.contains("does not decode"))
                // The liar spins after its answer: a document given to it would time out.
                #expect(await pool.probe("echo", deadline: .seconds(2)).value != nil)
                #expect(pool.workers.first?.processID != liar)
                #expect(pool.workers.first?.restarts == 1)
                #expect(await eventually { !processExists(liar) })
            }
        }

        @Test("a well-formed answer to another document yields sandbox.protocol-error")
        func wrongID() async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                async let others = pool.echoes(6)
                #expect(await pool.probe("wrong-id").failureCode == .protocolError)
                #expect(await others == 6)
            }
        }
    }
}
