import Foundation
import Markup
import Sandbox
import Testing

extension WorkerProcessTests {
    /// Real worker processes, inspected from outside (/proc) and made to try what they must not.
    @Suite("Confinement")
    struct ConfinementTests {
        @Test(
            "a worker runs under a seccomp filter with no_new_privs, one thread and its limits",
            arguments: [
                Executables.probe, Executables.worker,
            ])
        func statusShowsConfinement(executable: String) async throws {
            var configuration = WorkerPool.Configuration.probe(workers: 1, addressSpaceBytes: 768 << 20)
            configuration.workerExecutable = executable
            try await withWorkerPool(configuration: configuration) { pool in
                let processID = try #require(pool.workers.first?.processID)
                #expect(procStatus(processID, "Seccomp") == "2")  // SECCOMP_MODE_FILTER
                #expect(procStatus(processID, "NoNewPrivs") == "1")
                #expect(procStatus(processID, "Threads") == "1")  // nothing started before confinement
                #expect(sched_getscheduler(processID) == 3)  // SCHED_BATCH: its wake-ups do not preempt the gateway

                let limits = try String(contentsOfFile: "/proc/\(processID)/limits", encoding: .utf8)
                let limit = { (name: String) -> [Substring] in
                    limits.split(separator: "\n").first { $0.hasPrefix(name) }?.dropFirst(26).split(separator: " ")
                        ?? []
                }
                #expect(limit("Max address space").first == "\(768 << 20)")
                #expect(limit("Max core file size").first == "0")
                #expect(limit("Max file size").first == "0")
                #expect(limit("Max open files").first == "3")
                #expect(limit("Max cpu time").first == "60")

                // What the report claims is what the kernel shows.
                let report = pool.confinement
                #expect(report.noNewPrivileges)
                #expect(report.seccompRules > 10)
                if report.networkNamespace != "none" {
                    let theirs = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(processID)/ns/net")
                    let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
                    #expect(theirs != ours)
                }
                if report.landlockABI == nil || report.networkNamespace == "none" {
                    #expect(!report.warnings.isEmpty)  // a degraded confinement says why
                }
            }
        }

        @Test("opening a file is refused with EACCES and the worker lives on")
        func openIsRefused() async throws {
            try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
                let processID = pool.workers.first?.processID
                let graph = try #require(await pool.probe("open").value)
                #expect(graph.diagnostics.map(\.code.rawValue) == ["probe.errno-13"])  // EACCES from the filter
                #expect(pool.workers.first?.processID == processID)
                #expect(await pool.echoes(2) == 2)
            }
        }

        @Test(
            "a socket, a process, a program or a thread kills the worker with SIGSYS",
            arguments: [
                "socket", "fork", "spawn", "execve", "thread",
            ])
        func forbiddenCallsKill(command: String) async throws {
            try await withWorkerPool(configuration: .probe(workers: 2)) { pool in
                async let others = pool.echoes(6)
                let failure = try #require(await pool.probe(command).failure)
                #expect(failure.code == .crashed)
                #expect(failure.termination == .signaled(SIGSYS))
                #expect(await others == 6)
                #expect(await pool.echoes(2) == 2)  // replaced
            }
        }
    }
}
