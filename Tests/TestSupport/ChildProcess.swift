internal import Glibc
import Synchronization

/// A child process for server fixtures (dnsmasq, ...), spawned with a clean signal state.
///
/// Threads of a Swift process (dispatch workers, the test runner) block most signals, and a child
/// inherits the spawning thread's mask: a server started through Foundation's `Process` from such a
/// thread ignores SIGTERM. So the child is spawned here with an empty mask and default handlers, its
/// stdout and stderr written to a file, and reaped with `waitpid`.
package final class ChildProcess: Sendable {
    package let processIdentifier: Int32
    /// The wait status once reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`; stdin is /dev/null, stdout and stderr go to `outputPath`.
    package init(executable: String, arguments: [String], outputPath: String) throws(FixtureError) {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw FixtureError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
    }

    deinit { terminate() }

    /// Whether the child still runs (reaps it if it has exited).
    package var isRunning: Bool {
        status.withLock { status in
            guard status == nil else { return false }
            var result: Int32 = 0
            let waited = waitpid(processIdentifier, &result, WNOHANG)
            if waited == processIdentifier || (waited < 0 && errno == ECHILD) {
                status = result
                return false
            }
            return true
        }
    }

    /// The wait status once the child has exited (reaps it), nil while it runs.
    package var exitStatus: Int32? {
        guard !isRunning else { return nil }
        return status.withLock { $0 }
    }

    /// Sends `signal` unless the child has exited.
    package func signal(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }

    /// Sends SIGTERM, waits up to `grace` for the child to exit, then kills it; returns once it is reaped.
    package func terminate(grace: Duration = .seconds(5)) {
        guard isRunning else { return }
        kill(processIdentifier, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while isRunning, ContinuousClock.now < deadline { usleep(5_000) }
        guard isRunning else { return }
        kill(processIdentifier, SIGKILL)
        status.withLock { status in
            var result: Int32 = 0
            while waitpid(processIdentifier, &result, 0) < 0 && errno == EINTR {}
            status = result
        }
    }
}
