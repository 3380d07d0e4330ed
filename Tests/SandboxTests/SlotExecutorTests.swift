import Foundation
import Markup
import Testing

@testable import Sandbox

extension WorkerProcessTests {
    /// A task that prefers a pool's executor takes each step after an answer on the slot thread that read the
    /// answer (no cooperative thread woken for it), with the same answers, failures and shutdown as any task;
    /// whatever is enqueued elsewhere runs on Swift's global executor.
    @Suite("Worker pool: the slot executor", .timeLimit(.minutes(1)))
    struct SlotExecutorTests {
        /// The name of the thread the caller runs on (slot threads are "sandbox-N").
        static func threadName() -> String {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        @Test("documents asked one at a time: each step after an answer runs on the slot thread, answers unchanged")
        func stepsOnTheSlotThread() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let worker = try #require(pool.workers.first?.processID)
                let threads = try await withTaskExecutorPreference(pool.executor) {
                    var threads: [String] = []
                    for index in 0..<20 {
                        let graph = try #require(await pool.probe("echo \(index)").value)
                        threads.append(Self.threadName())
                        #expect(BatchTests.echoedBy(.success(graph)) == worker)
                        #expect(graph.nodes.first?.values("length").first?.text == String("echo \(index)".utf8.count))
                    }
                    return threads
                }
                #expect(threads == Array(repeating: "sandbox-0", count: 20))
                #expect(pool.workers.first?.documentsCompleted == 20)
                #expect(pool.workers.first?.restarts == 0)
            }
        }

        @Test("many in flight, in batches on two workers: every task gets its own answer")
        func batches() async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                let echoed = await withTaskExecutorPreference(pool.executor) { await pool.echoes(64) }
                #expect(echoed == 64)
                #expect(pool.workers.reduce(0) { $0 + $1.documentsCompleted } == 64)
            }
        }

        @Test("a task that prefers one pool's executor and extracts through another gets every answer")
        func anotherPool() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { extracting in
                try await withWorkerPool(configuration: .probe(workers: 1)) { preferred in
                    let answered = await withTaskExecutorPreference(preferred.executor) {
                        var answered = 0
                        for index in 0..<20 where await extracting.probe("echo \(index)").value != nil { answered += 1 }
                        return answered
                    }
                    #expect(answered == 20)
                    #expect(preferred.workers.first?.documentsCompleted == 0)
                }
            }
        }

        @Test("a crash and a timeout resume the task on the slot thread as failures; the next document succeeds")
        func failures() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                try await withTaskExecutorPreference(pool.executor) {
                    #expect(await pool.probe("crash").failureCode == .crashed)
                    #expect(await pool.probe("loop", deadline: .milliseconds(300)).failureCode == .timeout)
                    #expect(Self.threadName() == "sandbox-0")
                    _ = try #require(await pool.probe("echo").value)
                }
                #expect(pool.workers.first?.restarts == 2)
            }
        }

        @Test("a task on a slot thread shuts its pool down; it then goes on on Swift's global executor")
        func shutdownFromTheSlotThread() async throws {
            let pool = try await WorkerPool(configuration: .probe(workers: 1))
            let (before, after) = await withTaskExecutorPreference(pool.executor) {
                _ = await pool.probe("echo")
                let before = Self.threadName()
                await pool.shutdown()
                try? await Task.sleep(for: .milliseconds(1))  // a timer's resumption: not a slot thread's
                return (before, Self.threadName())
            }
            #expect(before == "sandbox-0")
            #expect(!after.hasPrefix("sandbox-"))
            #expect(await pool.probe("echo").failureCode == .unavailable)
        }
    }
}
