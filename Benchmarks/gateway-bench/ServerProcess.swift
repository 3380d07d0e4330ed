import Foundation
import Glibc

/// A `gateway serve` child process: started with ports 0 (through ``ChildProcess``, so it dies with the bench), its
/// bound ports read from what it prints, its memory and CPU read from /proc (its own and its gateway-worker
/// children's), stopped with SIGTERM or killed with SIGKILL.
final class ServerProcess {
    let process: ChildProcess
    let httpPort: Int
    let lmtpPort: Int
    let logPath: String

    var pid: pid_t { process.pid }

    private init(process: ChildProcess, httpPort: Int, lmtpPort: Int, logPath: String) {
        self.process = process
        self.httpPort = httpPort
        self.lmtpPort = lmtpPort
        self.logPath = logPath
    }

    /// Starts the server and waits until both listeners are bound (at most `timeout`).
    /// - Parameter logPath: receives its standard output and error.
    static func start(
        executable: String, arguments: [String], environment: [String: String], logPath: String,
        timeout: Duration = .seconds(60)
    ) async throws -> ServerProcess {
        let process = try await ChildProcess.spawn(
            executable: executable, arguments: arguments, environment: environment, logPath: logPath)

        let clock = ContinuousClock()
        let give = clock.now + timeout
        while clock.now < give {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            // A Unix socket's listener is announced as unix:PATH, with no port (0 here).
            if let http = port(in: text, after: "gateway: HTTP API on http://"),
                let lmtp = port(in: text, after: "gateway: LMTP on ")
                    ?? (text.contains("gateway: LMTP on unix:") ? 0 : nil)
            {
                return ServerProcess(process: process, httpPort: http, lmtpPort: lmtp, logPath: logPath)
            }
            guard process.isRunning else {
                throw BenchFailure("gateway serve exited with status \(process.terminationStatus); see \(logPath)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.signal(SIGKILL)
        throw BenchFailure("gateway serve did not announce its listeners within \(timeout); see \(logPath)")
    }

    /// The port in "`prefix`HOST:PORT ..." on one of the lines of `text`.
    private static func port(in text: String, after prefix: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            let address = line.dropFirst(prefix.count).prefix { $0 != " " }
            if let colon = address.lastIndex(of: ":") { return Int(address[address.index(after: colon)...]) }
        }
        return nil
    }

    /// The gateway-worker processes the server runs now.
    var workerIDs: [pid_t] { Self.children(of: pid) }

    /// Resident memory of the server `pid` and its workers.
    var memory: Memory { Self.memory(of: pid) }

    /// The child processes of `pid` (all its threads' children).
    static func children(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var children: [pid_t] = []
        for task in tasks {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            children += text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return children
    }

    /// Resident memory in bytes: the server's peak (VmHWM) and current (VmRSS), and its workers' current sum.
    struct Memory {
        var serverPeak: Int
        var serverNow: Int
        var workersNow: Int
        var workersPeakSum: Int
        var workerCount: Int
        var totalNow: Int { serverNow + workersNow }
    }

    static func memory(of pid: pid_t) -> Memory {
        let server = Self.status(pid)
        var workersNow = 0
        var workersPeak = 0
        let workers = children(of: pid)
        for worker in workers {
            let status = Self.status(worker)
            workersNow += status["VmRSS"] ?? 0
            workersPeak += status["VmHWM"] ?? 0
        }
        return Memory(
            serverPeak: server["VmHWM"] ?? 0, serverNow: server["VmRSS"] ?? 0, workersNow: workersNow,
            workersPeakSum: workersPeak, workerCount: workers.count)
    }

    /// CPU seconds so far: the server's own, and its workers' (those running and those it reaped).
    var cpuSeconds: (server: Double, workers: Double) {
        guard let server = Self.stat(pid) else { return (0, 0) }
        var workers = server.children
        for worker in workerIDs { workers += Self.stat(worker)?.own ?? 0 }
        return (server.own, workers)
    }

    /// `kill -9`: the server and its workers at once (the workers also die with it: PR_SET_PDEATHSIG).
    func killHard() async {
        let workers = workerIDs
        process.signal(SIGKILL)
        for worker in workers { kill(worker, SIGKILL) }
        await waitForExit(within: .seconds(10))
    }

    /// SIGTERM, then the exit status once it stopped (SIGKILL after `timeout`).
    @discardableResult
    func stop(timeout: Duration = .seconds(60)) async -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.signal(SIGTERM)
        if await !waitForExit(within: timeout) {
            await killHard()
        }
        return process.terminationStatus
    }

    @discardableResult
    func waitForExit(within timeout: Duration) async -> Bool {
        let clock = ContinuousClock()
        let give = clock.now + timeout
        while process.isRunning && clock.now < give { try? await Task.sleep(for: .milliseconds(20)) }
        return !process.isRunning
    }

    /// VmHWM, VmRSS, ... of /proc/PID/status, in bytes.
    private static func status(_ pid: pid_t) -> [String: Int] {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return [:] }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("Vm") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kilobytes = Int(parts[1]) { values[String(parts[0])] = kilobytes * 1024 }
        }
        return values
    }

    /// utime + stime (own) and cutime + cstime (reaped children) of /proc/PID/stat, in seconds.
    private static func stat(_ pid: pid_t) -> (own: Double, children: Double)? {
        // After "pid (comm)": state is field 3; utime, stime, cutime, cstime are fields 14 to 17.
        guard let fields = CPUTime.statFields(String(pid)), fields.count > 14, let user = Double(fields[11]),
            let system = Double(fields[12]), let childUser = Double(fields[13]), let childSystem = Double(fields[14])
        else { return nil }
        let ticks = CPUTime.ticksPerSecond
        return ((user + system) / ticks, (childUser + childSystem) / ticks)
    }
}
