import Foundation
import Testing

@testable import Sandbox

extension WorkerProcessTests {
    /// Each slot's thread and its worker share one CPU (`WorkerPool.Configuration.colocatesWorkers`), the slots spread
    /// over the CPUs the gateway may use; off, both keep the gateway's whole mask.
    @Suite("Worker pool: a slot and its worker on one CPU", .timeLimit(.minutes(1)))
    struct CPUPlacementTests {
        /// The kernel's thread id of this process's thread named `name`, from /proc/self/task.
        static func thread(named name: String) -> Int32? {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.first { task in
                let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
                return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
            }.flatMap(Int32.init)
        }

        @Test("each slot its own allowed CPU; nothing is bound when off, with one CPU, or with more slots than CPUs")
        func plan() {
            #expect(CPUPlacement.plan(slots: 3, colocate: true, cpus: [2, 5, 7]) == [2, 5, 7])
            #expect(CPUPlacement.plan(slots: 2, colocate: true, cpus: [0, 1, 2, 3]) == [0, 1])
            #expect(CPUPlacement.plan(slots: 4, colocate: true, cpus: [0, 1]) == [nil, nil, nil, nil])
            #expect(CPUPlacement.plan(slots: 2, colocate: false, cpus: [0, 1]) == [nil, nil])
            #expect(CPUPlacement.plan(slots: 1, colocate: true, cpus: [3]) == [nil])
            #expect(CPUPlacement.plan(slots: 2, colocate: true, cpus: []) == [nil, nil])
        }

        @Test("binding a thread narrows its mask to that CPU, and the whole mask can be given back")
        func bindAndRestore() async throws {
            let allowed = CPUPlacement.allowedCPUs()
            try #require(!allowed.isEmpty)
            // On a thread of its own, so that no task of another test runs under the narrowed mask.
            let masks = try await Self.onThread {
                let bound = CPUPlacement.bind(0, to: allowed[allowed.count - 1])
                let narrowed = CPUPlacement.allowedCPUs()
                let restored = CPUPlacement.bind(0, toAnyOf: allowed)
                return (bound, narrowed, restored, CPUPlacement.allowedCPUs())
            }
            #expect(masks.0 && masks.2)
            #expect(masks.1 == [allowed[allowed.count - 1]])
            #expect(masks.3 == allowed)
            #expect(!CPUPlacement.bind(0, to: -1))
            #expect(!CPUPlacement.bind(0, to: 1 << 20))
        }

        @Test("a real pool: each worker, and the one that replaces it after a crash, runs on its slot thread's CPU")
        func workersShareTheirSlotsCPU() async throws {
            let allowed = CPUPlacement.allowedCPUs()
            let slots = min(2, allowed.count)
            try await withWorkerPool(configuration: .probe(workers: slots)) { pool in
                #expect(await pool.echoes(12) == 12)
                await Self.settle(pool)
                for slot in 0..<slots {
                    let expected = allowed.count > 1 ? [allowed[slot]] : allowed
                    #expect(pool.cpu(ofSlot: slot) == (allowed.count > 1 ? expected[0] : nil))
                    let worker = try #require(pool.workers[slot].processID)
                    #expect(CPUPlacement.allowedCPUs(of: worker) == expected, "slot \(slot)'s worker")
                    let thread = try #require(Self.thread(named: "sandbox-\(slot)"))
                    #expect(CPUPlacement.allowedCPUs(of: thread) == expected, "slot \(slot)'s thread")
                }
                // A crash: the replacement is bound like the first.
                let before = pool.workers.map(\.processID)
                _ = await pool.probe("crash")
                // A slot starts its next worker when it is next given a document.
                let deadline = ContinuousClock.now + .seconds(5)
                repeat {
                    #expect(await pool.echoes(12) == 12)
                    await Self.settle(pool)
                } while pool.workers.contains(where: { $0.processID == nil }) && .now < deadline
                let replaced = try #require(
                    pool.workers.indices.first { slot in
                        pool.workers[slot].processID.map { $0 != before[slot] } ?? false
                    })
                let worker = try #require(pool.workers[replaced].processID)
                let expected = allowed.count > 1 ? [allowed[replaced]] : allowed
                #expect(CPUPlacement.allowedCPUs(of: worker) == expected)
            }
        }

        @Test(
            "colocation off, or more slots than CPUs: workers and slot threads keep the gateway's whole mask",
            arguments: [false, true])
        func unboundPoolsKeepTheMask(colocating: Bool) async throws {
            let allowed = CPUPlacement.allowedCPUs()
            let slots = colocating ? allowed.count + 1 : 2
            var configuration = WorkerPool.Configuration.probe(workers: slots)
            configuration.colocatesWorkers = colocating
            try await withWorkerPool(configuration: configuration) { pool in
                #expect(await pool.echoes(4 * slots) == 4 * slots)
                await Self.settle(pool)
                for slot in 0..<slots {
                    #expect(pool.cpu(ofSlot: slot) == nil)
                    let worker = try #require(pool.workers[slot].processID)
                    #expect(CPUPlacement.allowedCPUs(of: worker) == allowed)
                    let thread = try #require(Self.thread(named: "sandbox-\(slot)"))
                    #expect(CPUPlacement.allowedCPUs(of: thread) == allowed)
                }
            }
        }

        /// Waits (up to 5 s) until every slot is idle with a worker: a slot publishes its status after it answers.
        static func settle(_ pool: WorkerPool) async {
            let deadline = ContinuousClock.now + .seconds(5)
            while pool.workers.contains(where: { $0.processID == nil || $0.isBusy }), .now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }

        /// Runs `body` on a new thread and returns its result.
        static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                do {
                    try DetachedThread.start(name: "placement-test") { continuation.resume(returning: body()) }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
