internal import CSeccomp
internal import FoundationEssentials
internal import Glibc

/// One worker process seen from the gateway: its pid and the gateway's ends of its three pipes
/// (requests in, answers out, stderr). Owned and used by exactly one slot thread; every blocking
/// wait is a `poll` bounded by a deadline and interruptible through the slot's `WakePipe`.
final class WorkerProcess {
    /// How to start a worker.
    struct Launch: Sendable {
        var executable: String
        var arguments: [String]
        /// The worker's whole environment: nothing of the gateway's (keys, passwords) is inherited.
        var environment: [String: String]
        var setup: WorkerSetup
        var startupTimeout: Duration
    }

    /// What a wait on the worker's pipes ended with.
    enum Event {
        /// The wanted pipe is ready (answer bytes to read, or room to write the request).
        case ready
        /// The worker closed its answer pipe: it is dead or dying.
        case closed
        case timedOut
        /// The slot's wake pipe fired and the caller's check said stop.
        case interrupted
    }

    let processID: pid_t
    /// The request pipe's write end (non-blocking), -1 once closed. Tasks write to it only through
    /// `PoolCore`'s hand-off, while the slot has published it and cannot close it.
    private(set) var input: Int32
    /// The answer pipe's read end (non-blocking).
    private let output: Int32
    /// The stderr pipe's read end (non-blocking), -1 once it reached end of file.
    private var diagnostics: Int32
    /// The last bytes the worker wrote to stderr, for the reason of a failure.
    private var diagnosticsTail: [UInt8] = []
    /// The worker said on stderr that an allocation failed (the Swift runtime's "failed to allocate
    /// N bytes", glibc's "Cannot allocate memory"): a death that follows is the memory limit's doing.
    private(set) var reportedAllocationFailure = false
    private var reaped: SandboxFailure.Termination?

    /// Documents answered, and time spent on them: a bound on the CPU time the worker used, which
    /// `RLIMIT_CPU` caps over its life.
    var documentsCompleted = 0
    var busyTime: Duration = .zero

    private static let diagnosticsTailSize = 2048
    /// The size asked for the request and answer pipes.
    static let pipeBytes: Int32 = 1 << 20
    /// SCHED_BATCH (Linux's value; Glibc's module leaves the GNU constant out): the workers' scheduling policy.
    static let schedulingPolicy: Int32 = 3
    private static let allocationFailureMarkers = [
        Array("failed to allocate".utf8), Array("Cannot allocate memory".utf8), Array("out of memory".utf8),
    ]

    /// What the request pipe holds: the slot writes a batch of requests only if it fits, so that the
    /// write never waits for the worker (which may meanwhile be writing answers).
    let requestPipeBytes: Int
    /// The shared memory the worker reads its documents from (nil: the system has none, and documents go through
    /// the request pipe).
    let window: DocumentWindow?

    private init(processID: pid_t, input: Int32, output: Int32, diagnostics: Int32, window: DocumentWindow?) {
        self.processID = processID
        self.input = input
        self.output = output
        self.diagnostics = diagnostics
        self.window = window
        self.requestPipeBytes = Int(max(csandbox_get_pipe_size(input), 0))
    }

    deinit {
        if reaped == nil {
            kill(processID, SIGKILL)
            _ = reap()
        }
        Descriptors.close(input)
        Descriptors.close(output)
        Descriptors.close(diagnostics)
    }

    // MARK: - Starting

    /// Spawns a worker, sends its setup frame and waits for its ready frame.
    ///
    /// - Returns: the running worker and what confinement it applied.
    /// - Throws: `SandboxFailure.unavailable` with the worker's last words when it cannot start.
    static func launch(_ launch: Launch, wake: WakePipe) throws(SandboxFailure) -> (WorkerProcess, Confinement.Report) {
        let worker = try spawn(launch)
        let deadline = ContinuousClock.now + launch.startupTimeout
        var workerSetup = launch.setup
        workerSetup.documentWindowBytes = worker.window?.size ?? 0
        let setup: [UInt8]
        do {
            setup = Frame(kind: .setup, payload: Array(try JSONEncoder().encode(workerSetup))).bytes
        } catch {
            throw SandboxFailure(code: .unavailable, reason: "cannot encode the worker's setup: \(error)")
        }
        switch worker.write([setup[...]], deadline: deadline, wake: wake, interrupted: { false }) {
        case .done: break
        case .closed, .unexpectedAnswer: throw worker.startupFailure("exited before reading its setup", exited: true)
        case .timedOut, .interrupted: throw worker.startupFailure("did not read its setup frame")
        }
        switch worker.readFrame(
            maxPayload: WorkerSetup.maxFrameBytes, deadline: deadline, wake: wake, interrupted: { false })
        {
        case .frame(.ready, let payload):
            guard let report = try? JSONDecoder().decode(Confinement.Report.self, from: Data(payload)) else {
                throw worker.startupFailure("sent an unreadable ready frame")
            }
            return (worker, report)
        case .frame(let kind, _): throw worker.startupFailure("sent a \(kind) frame instead of ready")
        case .invalid(let error): throw worker.startupFailure("broke the protocol: \(error)")
        case .closed: throw worker.startupFailure("exited before confining itself", exited: true)
        case .timedOut: throw worker.startupFailure("was not ready within \(launch.startupTimeout)")
        case .interrupted: throw worker.startupFailure("was interrupted")
        }
    }

    private func startupFailure(_ what: String, exited: Bool = false) -> SandboxFailure {
        let termination = exited ? collect() : stop()
        var reason = "worker \(processID) \(what); it \(termination)"
        if let words = lastWords { reason += "; its stderr: \(words)" }
        return SandboxFailure(code: .unavailable, reason: reason, termination: termination)
    }

    /// posix_spawn with three fresh pipes as fds 0, 1 and 2, its document window's memfd as fd 3 (when the system
    /// makes one), every other fd closed, default signal handling and an empty signal mask, in its own process
    /// group (a terminal's ^C is for the gateway, which then stops its workers), with only the given environment.
    private static func spawn(_ launch: Launch) throws(SandboxFailure) -> WorkerProcess {
        var opened: [(read: Int32, write: Int32)] = []
        for _ in 0..<3 {
            guard let pipe = Descriptors.pipe() else {
                let error = ConfinementError(step: "pipe2")
                for pipe in opened {
                    Descriptors.close(pipe.read)
                    Descriptors.close(pipe.write)
                }
                throw SandboxFailure(code: .unavailable, reason: "cannot create a pipe: \(error)")
            }
            opened.append(pipe)
        }
        let (requests, answers, errors) = (opened[0], opened[1], opened[2])

        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, requests.read, 0)
        posix_spawn_file_actions_adddup2(&actions, answers.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        let window = DocumentWindow.create()
        if let window { posix_spawn_file_actions_adddup2(&actions, window.descriptor, DocumentWindow.workerDescriptor) }
        csandbox_spawn_close_from(&actions, window == nil ? 3 : DocumentWindow.workerDescriptor + 1)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = ([launch.executable] + launch.arguments).map { strdup($0) } + [nil]
        let envp = launch.environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var processID: pid_t = 0
        let result = posix_spawn(&processID, launch.executable, &actions, &attributes, argv, envp)
        window?.closeDescriptor()
        Descriptors.close(requests.read)
        Descriptors.close(answers.write)
        Descriptors.close(errors.write)
        guard result == 0 else {
            Descriptors.close(requests.write)
            Descriptors.close(answers.read)
            Descriptors.close(errors.read)
            let error = ConfinementError(step: "posix_spawn(\(launch.executable))", errorNumber: result)
            throw SandboxFailure(code: .unavailable, reason: "cannot start the worker: \(error)")
        }
        // SCHED_BATCH (sched(7)): a CPU-bound job, whose wake-up by a request does not preempt the gateway thread that
        // wrote it (`gateway-bench extract`: the sandbox's cost at a median of +18% against +24% of CPU over in-process,
        // five alternating runs each). Set from here, before the worker reads its setup (posix_spawn takes only FIFO and
        // RR), so the worker makes no system call for it; best effort: a system that refuses keeps the default policy.
        var parameter = sched_param(sched_priority: 0)
        _ = sched_setscheduler(processID, WorkerProcess.schedulingPolicy, &parameter)
        // Its CPUs are its slot thread's (a child inherits the spawning thread's affinity mask, sched_setaffinity(2)):
        // one CPU when the pool binds that thread (`CPUPlacement`).
        for fd in [requests.write, answers.read, errors.read] {
            _ = csandbox_set_flags(fd, csandbox_get_flags(fd) | O_NONBLOCK)
        }
        // Pipes of 1 MiB (the unprivileged maximum, /proc/sys/fs/pipe-max-size) rather than 64 KiB: most documents
        // and graphs then cross in one write and one read, without a round of poll and a context switch per 64 KiB.
        // A kernel that refuses keeps the default, which works the same, only slower.
        for fd in [requests.write, answers.read] { _ = csandbox_set_pipe_size(fd, Self.pipeBytes) }
        return WorkerProcess(
            processID: processID, input: requests.write, output: answers.read, diagnostics: errors.read, window: window)
    }

    // MARK: - Talking

    enum WriteOutcome {
        case done
        /// The worker closed its end (it died), or wrote to us before reading everything.
        case closed
        case unexpectedAnswer
        case timedOut
        case interrupted
    }

    /// Writes `parts` in order to the request pipe, gathered: the frame's prefix and the document
    /// reach the worker in one write, so it wakes once for a request, not once per part.
    ///
    /// `referencing`: the pipe takes references to the parts' pages (vmsplice) instead of a copy
    /// (writev), which spares the gateway the copy and the pipe's page allocations; the worker's read
    /// is the one copy. The caller must then keep every part alive and unchanged until the worker has
    /// read it (`WorkerSlot.perform` keeps them until the worker answered the last), and count what
    /// the parts take of the pipe by pages (`ExtractionRequest.pipeFootprint`). A kernel without
    /// vmsplice gets the copy.
    func write(
        _ parts: [ArraySlice<UInt8>], referencing: Bool = false, deadline: ContinuousClock.Instant, wake: WakePipe,
        interrupted: () -> Bool
    ) -> WriteOutcome {
        var referencing = referencing
        let total = parts.reduce(0) { $0 + $1.count }
        return WorkerProcess.withBuffers(parts[...], []) { buffers in
            var done = 0
            var vectors: [iovec] = []
            vectors.reserveCapacity(buffers.count)
            while done < total {
                let written = WorkerProcess.writeOnce(
                    buffers, from: done, to: input, referencing: &referencing, vectors: &vectors)
                if written > 0 {
                    done += written
                    continue
                }
                if written < 0 && errno == EINTR { continue }
                if written < 0 && errno == EPIPE {
                    WorkerProcess.discardPendingSIGPIPE()
                    return .closed
                }
                guard written < 0 && errno == EAGAIN else { return .closed }
                switch wait(writing: true, deadline: deadline, wake: wake, interrupted: interrupted) {
                case .ready: continue
                case .closed: return hasPendingAnswerBytes() ? .unexpectedAnswer : .closed
                case .timedOut: return .timedOut
                case .interrupted: return .interrupted
                }
            }
            return .done
        }
    }

    /// Writes as much of `parts` as the pipe `fd` takes now, without waiting, by reference (as `write` with
    /// `referencing`): for a task that hands a request to an idle worker itself (`PoolCore.submit`), on a
    /// thread that does not block SIGPIPE, so it is blocked around the call (and a pending one consumed).
    ///
    /// - Returns: the bytes written (perhaps fewer than all, perhaps none), or nil when the pipe is closed or
    ///   failed (the worker died).
    static func writeNow(_ parts: [ArraySlice<UInt8>], to fd: Int32) -> Int? {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let total = parts.reduce(0) { $0 + $1.count }
        return withBuffers(parts[...], []) { buffers -> Int? in
            var done = 0
            var referencing = true
            var vectors: [iovec] = []
            vectors.reserveCapacity(buffers.count)
            while done < total {
                let written = writeOnce(buffers, from: done, to: fd, referencing: &referencing, vectors: &vectors)
                if written > 0 {
                    done += written
                    continue
                }
                if written < 0 && errno == EINTR { continue }
                if written < 0 && errno == EAGAIN { return done }
                if written < 0 && errno == EPIPE { discardPendingSIGPIPE() }
                return nil
            }
            return done
        }
    }

    /// One `vmsplice` (when `referencing`) or `writev` of `buffers` from byte `done` on to `fd`: its result, with
    /// `errno` set when negative. A kernel without vmsplice (or an `fd` that is not a pipe) turns `referencing` off
    /// and gets the copy. `vectors` is the caller's scratch, kept between calls.
    private static func writeOnce(
        _ buffers: [UnsafeRawBufferPointer], from done: Int, to fd: Int32, referencing: inout Bool,
        vectors: inout [iovec]
    ) -> Int {
        vectors.removeAll(keepingCapacity: true)
        var skip = done
        for buffer in buffers {
            guard skip < buffer.count, let base = buffer.baseAddress else {
                skip -= buffer.count
                continue
            }
            vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base + skip), iov_len: buffer.count - skip))
            skip = 0
        }
        if referencing {
            let written = csandbox_vmsplice(fd, vectors, UInt(vectors.count))
            guard written < 0, errno == ENOSYS || errno == EINVAL else { return written }
            referencing = false  // no vmsplice here (or not a pipe): copy instead
        }
        return writev(fd, vectors, Int32(vectors.count))
    }

    /// Runs `body` with the bytes of every part in hand (nested, so that no pointer outlives its part).
    private static func withBuffers<Result>(
        _ parts: ArraySlice<ArraySlice<UInt8>>, _ collected: [UnsafeRawBufferPointer],
        _ body: ([UnsafeRawBufferPointer]) -> Result
    ) -> Result {
        guard let first = parts.first else { return body(collected) }
        return first.withUnsafeBytes { buffer in withBuffers(parts.dropFirst(), collected + [buffer], body) }
    }

    enum ReadOutcome {
        case frame(Frame.Kind, [UInt8])
        case invalid(FrameError)
        /// End of file before a frame began, or in the middle of one.
        case closed
        case timedOut
        case interrupted
    }

    /// Reads one frame from the answer pipe.
    ///
    /// `waitsFirst`: waits for the pipe before reading, for an answer that cannot be there yet (the request was just
    /// written), which spares a read that would only find the pipe empty.
    func readFrame(
        maxPayload: Int, deadline: ContinuousClock.Instant, wake: WakePipe, waitsFirst: Bool = false,
        interrupted: () -> Bool
    ) -> ReadOutcome {
        var header = [UInt8](repeating: 0, count: Frame.headerSize)
        switch readExactly(
            into: &header, deadline: deadline, wake: wake, waitsFirst: waitsFirst, interrupted: interrupted)
        {
        case .ready: break
        case .closed: return .closed
        case .timedOut: return .timedOut
        case .interrupted: return .interrupted
        }
        let kind: Frame.Kind
        let length: Int
        do {
            (kind, length) = try Frame.parseHeader(header, maxPayload: maxPayload)
        } catch {
            return .invalid(error)
        }
        var payload = [UInt8](repeating: 0, count: length)
        switch readExactly(into: &payload, deadline: deadline, wake: wake, interrupted: interrupted) {
        case .ready: return .frame(kind, payload)
        case .closed: return .invalid(FrameError("the worker closed its pipe inside a \(length)-byte \(kind) frame"))
        case .timedOut: return .timedOut
        case .interrupted: return .interrupted
        }
    }

    /// Fills `buffer` from the answer pipe, waiting whenever it is empty (from the start when `waitsFirst`).
    private func readExactly(
        into buffer: inout [UInt8], deadline: ContinuousClock.Instant, wake: WakePipe, waitsFirst: Bool = false,
        interrupted: () -> Bool
    ) -> Event {
        var filled = 0
        var waits = waitsFirst
        while filled < buffer.count {
            if waits {
                let event = wait(writing: false, deadline: deadline, wake: wake, interrupted: interrupted)
                guard case .ready = event else { return event }
                waits = false
            }
            let count = buffer.count
            let result = buffer.withUnsafeMutableBufferPointer { pointer in
                read(output, pointer.baseAddress! + filled, count - filled)
            }
            if result > 0 {
                filled += result
                continue
            }
            if result == 0 { return .closed }
            if errno == EINTR { continue }
            guard errno == EAGAIN else { return .closed }
            waits = true
        }
        return .ready
    }

    /// True if the worker has closed its answer pipe (it died while idle) or written to it unasked:
    /// either way it must not be given a document.
    var isUnusable: Bool {
        var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// True if the answer pipe has bytes waiting (the worker wrote without being asked).
    func hasPendingAnswerBytes() -> Bool {
        var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLIN) != 0
    }

    /// Waits until the request pipe has room (`writing`) or the answer pipe has bytes, draining
    /// stderr meanwhile. `deadline` nil waits until something happens.
    func wait(
        writing: Bool, deadline: ContinuousClock.Instant?, wake: WakePipe, interrupted: () -> Bool
    ) -> Event {
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let remaining = deadline - .now
                guard remaining > .zero else { return .timedOut }
                let (seconds, attoseconds) = remaining.components
                let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
                timeout = Int32(clamping: milliseconds)
            }
            var descriptors = [
                pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: output, events: Int16(POLLIN), revents: 0),
                pollfd(fd: diagnostics, events: Int16(POLLIN), revents: 0),  // ignored by poll when -1
                pollfd(fd: writing ? input : -1, events: Int16(POLLOUT), revents: 0),
            ]
            let count = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if count < 0 {
                if errno == EINTR { continue }
                return .closed
            }
            if count == 0 { continue }  // re-checks the deadline
            if descriptors[2].revents != 0 { drainDiagnostics() }
            if descriptors[0].revents != 0 {
                wake.drain()
                if interrupted() { return .interrupted }
            }
            let hangup = Int16(POLLHUP | POLLERR | POLLNVAL)
            if writing {
                if descriptors[3].revents & Int16(POLLOUT) != 0 { return .ready }
                if descriptors[3].revents & hangup != 0 { return .closed }
                if descriptors[1].revents != 0 { return .closed }  // it answered or died mid-request
            } else {
                if descriptors[1].revents & Int16(POLLIN) != 0 { return .ready }
                if descriptors[1].revents & hangup != 0 { return .closed }
            }
        }
    }

    /// Keeps the tail of what the worker writes to stderr; closes the pipe at end of file.
    private func drainDiagnostics() {
        guard diagnostics >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(diagnostics, &buffer, buffer.count)
            if count > 0 {
                diagnosticsTail += buffer[..<count]
                if !reportedAllocationFailure {
                    reportedAllocationFailure = WorkerProcess.allocationFailureMarkers.contains { marker in
                        diagnosticsTail.firstRange(of: marker) != nil
                    }
                }
                if diagnosticsTail.count > WorkerProcess.diagnosticsTailSize {
                    diagnosticsTail.removeFirst(diagnosticsTail.count - WorkerProcess.diagnosticsTailSize)
                }
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count == 0 || errno != EAGAIN {
                Descriptors.close(diagnostics)
                diagnostics = -1
            }
            return
        }
    }

    /// The worker's last stderr line(s), printable ASCII only, or nil.
    private var lastWords: String? {
        drainDiagnostics()
        let text = String(
            decoding: diagnosticsTail.map { $0 == 0x0A || ($0 >= 0x20 && $0 < 0x7F) ? $0 : 0x3F }, as: UTF8.self)
        let lines = text.split(separator: "\n").suffix(3)
        return lines.isEmpty ? nil : lines.joined(separator: " | ")
    }

    // MARK: - Ending

    /// Kills the worker (SIGKILL) and reaps it.
    @discardableResult
    func stop() -> SandboxFailure.Termination {
        if let reaped { return reaped }
        kill(processID, SIGKILL)
        return reap()
    }

    /// Closes the request pipe (the worker's signal to finish), gives it `grace` to exit, then kills it.
    @discardableResult
    func retire(grace: Duration) -> SandboxFailure.Termination {
        Descriptors.close(input)
        input = -1
        let deadline = ContinuousClock.now + grace
        while reaped == nil && ContinuousClock.now < deadline {
            if let termination = reapIfExited() { return termination }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 10)
            drainDiagnostics()
        }
        return stop()
    }

    /// After the answer pipe closed: the worker is dead or about to be; waits a moment, then kills.
    func collect() -> SandboxFailure.Termination {
        let termination = retire(grace: .milliseconds(200))
        drainDiagnostics()  // its last words, written before it died
        return termination
    }

    private func reapIfExited() -> SandboxFailure.Termination? {
        if let reaped { return reaped }
        var status: Int32 = 0
        let result = waitpid(processID, &status, WNOHANG)
        if result == 0 { return nil }
        return record(result: result, status: status)
    }

    private func reap() -> SandboxFailure.Termination {
        if let reaped { return reaped }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(processID, &status, 0) } while result < 0 && errno == EINTR
        return record(result: result, status: status)
    }

    private func record(result: pid_t, status: Int32) -> SandboxFailure.Termination {
        let termination: SandboxFailure.Termination
        if result < 0 {
            termination = .exited(-1)  // ECHILD: someone set SIGCHLD to SIG_IGN; the status is gone
        } else if status & 0x7F == 0 {
            termination = .exited((status >> 8) & 0xFF)
        } else {
            termination = .signaled(status & 0x7F)
        }
        reaped = termination
        return termination
    }

    /// A write to a closed pipe left SIGPIPE pending on this thread (which blocks it): consume it.
    private static func discardPendingSIGPIPE() {
        var pending = sigset_t()
        sigemptyset(&pending)
        sigaddset(&pending, SIGPIPE)
        var zero = timespec(tv_sec: 0, tv_nsec: 0)
        _ = sigtimedwait(&pending, nil, &zero)
    }
}
