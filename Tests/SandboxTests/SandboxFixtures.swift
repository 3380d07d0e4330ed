import Foundation
import Markup
import Sandbox

/// Where the worker executables are: next to the test bundle, in the same build directory.
enum Executables {
    static let directory: String = {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (path as NSString).deletingLastPathComponent
    }()

    /// The test-only worker that misbehaves on command.
    static var probe: String { directory + "/gateway-worker-probe" }
    /// The production worker.
    static var worker: String { directory + "/gateway-worker" }
}

extension WorkerPool.Configuration {
    /// A small pool of probe workers.
    static func probe(
        workers: Int = 2, addressSpaceBytes: UInt64 = 512 << 20, maxDocumentBytes: Int = 32 << 20
    ) -> WorkerPool.Configuration {
        WorkerPool.Configuration(
            workerExecutable: Executables.probe, workerCount: workers,
            confinement: Confinement.Configuration(addressSpaceBytes: addressSpaceBytes, lifetimeCPUSeconds: 60),
            maxDocumentBytes: maxDocumentBytes, retireGrace: .milliseconds(500))
    }
}

extension WorkerPool {
    /// Sends a probe command.
    func probe(_ command: String, deadline: Duration = .seconds(5)) async -> Result<MarkupGraph, SandboxFailure> {
        await extract(Array(command.utf8), kind: .html, deadline: deadline)
    }

    /// Runs `count` echo documents concurrently; returns how many came back as the echo they were.
    func echoes(_ count: Int) async -> Int {
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<count {
                group.addTask {
                    let command = "echo \(index)"
                    guard case .success(let graph) = await self.probe(command) else { return false }
                    return graph.nodes.first?.values("length").first?.text == String(command.utf8.count)
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
    }

    /// Waits until a worker is busy and returns its pid.
    func busyWorker(timeout: Duration = .seconds(3)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let busy = workers.first(where: \.isBusy), let processID = busy.processID { return processID }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }
}

extension Result where Failure == SandboxFailure {
    /// The failure's code, or nil on success.
    var failureCode: SandboxFailure.Code? {
        if case .failure(let failure) = self { return failure.code }
        return nil
    }

    var failure: SandboxFailure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }

    var value: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// Waits up to `timeout` for `condition`; returns whether it came true.
func eventually(timeout: Duration = .seconds(3), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A field of /proc/PID/status ("Seccomp", "NoNewPrivs", "Threads").
func procStatus(_ processID: Int32, _ field: String) -> String? {
    guard let text = try? String(contentsOfFile: "/proc/\(processID)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces)
    }
    return nil
}

/// True while a process with this pid exists (zombies included).
func processExists(_ processID: Int32) -> Bool {
    kill(processID, 0) == 0 || errno == EPERM
}
