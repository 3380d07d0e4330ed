import Dispatch
import Foundation
import Glibc
import Synchronization

/// The `gateway serve` processes the bench starts, and the guarantee that none outlives it: each is spawned in its
/// own process group with a parent-death signal (SIGKILL when the bench dies, even of SIGKILL: util-linux's `setpriv
/// --pdeathsig`), and on every way out — a failed check, an error, Ctrl-C, SIGTERM, SIGHUP, a normal exit — the bench
/// kills the groups it started (the gateway's workers die with the gateway: theirs is set too).
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `status` is guarded by `lock`; the rest never changes.
    let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?

    private init(pid: pid_t) { self.pid = pid }

    /// Spawns `executable` with `arguments` and `environment` (added to this process's), stdin from /dev/null,
    /// stdout and stderr to `logPath`, in a new process group, with SIGKILL as its parent-death signal.
    ///
    /// From a thread of its own that lives as long as the process: the kernel sends the parent-death signal when
    /// the *thread* that spawned the child ends, and the threads that run tasks (the main actor's too) come and go
    /// (a server spawned from one was killed a minute later, when that thread was retired).
    static func spawn(
        executable: String, arguments: [String], environment: [String: String], logPath: String
    ) async throws -> ChildProcess {
        try await withCheckedThrowingContinuation { continuation in
            Spawner.shared.run {
                continuation.resume(
                    with: Result {
                        try spawnHere(executable: executable, arguments: arguments, environment: environment, logPath: logPath)
                    })
            }
        }
    }

    private static func spawnHere(
        executable: String, arguments: [String], environment: [String: String], logPath: String
    ) throws -> ChildProcess {
        let setpriv = "/usr/bin/setpriv"
        let hasSetpriv = FileManager.default.isExecutableFile(atPath: setpriv)
        let argv = (hasSetpriv ? [setpriv, "--pdeathsig", "KILL", "--", executable] : [executable]) + arguments
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        // Registered before it can run, under the lock the cleanup takes: no window where a signal misses it.
        let result = ChildProcesses.registering {
            let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
            return (result, result == 0 ? pid : nil)
        }
        guard result == 0 else {
            throw BenchFailure("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return ChildProcess(pid: pid)
    }

    /// Whether it still runs (reaps it once it has exited).
    var isRunning: Bool {
        lock.withLock {
            guard status == nil else { return false }
            var result: Int32 = 0
            let waited = waitpid(pid, &result, WNOHANG)
            if waited == pid || (waited < 0 && errno == ECHILD) {
                status = result
                ChildProcesses.unregister(pid)
                return false
            }
            return true
        }
    }

    /// The exit status (or 128 + the signal that ended it), once it has exited.
    var terminationStatus: Int32 {
        guard !isRunning, let status = lock.withLock({ status }) else { return -1 }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// The signal that ended it, if one did.
    var terminationSignal: Int32? {
        guard !isRunning, let status = lock.withLock({ status }), status & 0x7F != 0 else { return nil }
        return status & 0x7F
    }

    /// Sends `signal` to its process group (the gateway; its workers are in groups of their own and follow it).
    func signal(_ signal: Int32) {
        if isRunning { kill(-pid, signal) }
    }
}

/// The one thread that spawns children, started at first use and never ended (see ``ChildProcess/spawn``).
final class Spawner: @unchecked Sendable {
    // @unchecked: `work` is guarded by `lock`; the semaphore and the thread are thread-safe.
    static let shared = Spawner()
    private let lock = NSLock()
    private var work: [@Sendable () -> Void] = []
    private let pending = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                pending.wait()
                let next = lock.withLock { work.removeFirst() }
                next()
            }
        }
        thread.name = "gateway-bench-spawner"
        thread.start()
    }

    func run(_ body: @escaping @Sendable () -> Void) {
        lock.withLock { work.append(body) }
        pending.signal()
    }
}

/// The registry `ChildProcess` keeps, and the cleanup that runs on every way out.
enum ChildProcesses {
    private static let running = Mutex<Set<pid_t>>([])

    static func registering(_ spawn: () -> (Int32, pid_t?)) -> Int32 {
        running.withLock { set in
            let (result, pid) = spawn()
            if let pid { set.insert(pid) }
            return result
        }
    }

    static func unregister(_ pid: pid_t) {
        _ = running.withLock { $0.remove(pid) }
    }

    /// Working directories of the suites, removed when a signal stops the bench (a run that ends by itself removes
    /// its own, or keeps it on purpose for a failure's evidence).
    private static let directories = Mutex<Set<String>>([])

    /// Set when a signal stops the bench: from then on the signal handler alone ends the process.
    private static let stopping = Atomic<Bool>(false)

    /// Waits for the signal handler to end the process when a signal is stopping the bench: the suite, seeing its
    /// servers die, fails and would otherwise exit while the handler still removes the suites' directories.
    static func holdIfStopping() {
        while stopping.load(ordering: .acquiring) { sleep(1) }
    }

    static func removeOnSignal(_ path: String) {
        _ = directories.withLock { $0.insert(path) }
    }

    static func keepOnSignal(_ path: String) {
        _ = directories.withLock { $0.remove(path) }
    }

    /// SIGKILL to every process group still registered, then reaps them.
    static func killAll() {
        let pids = running.withLock { set -> Set<pid_t> in
            defer { set.removeAll() }
            return set
        }
        for pid in pids {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
        for pid in pids {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }

    /// Kept for the process's life (a source that is released stops delivering). Written once, by the one call
    /// of `installCleanup` at start.
    nonisolated(unsafe) private static var signalSources: [any DispatchSourceSignal] = []

    /// Kills the children at exit, and on SIGINT, SIGTERM and SIGHUP before exiting with 128 + the signal.
    static func installCleanup() {
        atexit { ChildProcesses.killAll() }
        let queue = DispatchQueue(label: "gateway-bench.signals")
        for number in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                FileHandle.standardError.write(Data("gateway-bench: signal \(number): stopping the servers it started\n".utf8))
                // Which directories go is decided now, before the servers die: a suite that sees its server gone
                // fails and keeps its directory as evidence (`keepOnSignal`), which a stopped bench must not.
                stopping.store(true, ordering: .releasing)
                let doomedDirectories = directories.withLock { $0 }
                killAll()
                // The suite's own threads go on a moment after their servers die (they fail, and may open the store
                // again, which makes its directory anew): remove the directories in rounds until a few in a row find
                // nothing, by when the suite has failed and waits in `holdIfStopping`.
                var quietRounds = 0
                for round in 0..<150 where quietRounds < 5 {
                    if round > 0 { usleep(20_000) }  // never between the last look and the exit
                    var found = false
                    for path in doomedDirectories where FileManager.default.fileExists(atPath: path) {
                        found = true
                        try? FileManager.default.removeItem(atPath: path)
                    }
                    quietRounds = found ? 0 : quietRounds + 1
                }
                // At once: exit(3) would let the suite's own threads go on (and write into what was just removed)
                // while it runs the exit handlers.
                _exit(128 + number)
            }
            source.resume()
            signalSources.append(source)
        }
    }
}
