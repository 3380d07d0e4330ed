internal import CSeccomp
internal import FoundationEssentials
internal import Glibc
internal import Markup

/// The thread behind one place in the pool. It owns one worker process at a time: starts it, hands
/// it documents (those queued together in one write, answered one by one), enforces each
/// document's deadline, and replaces it when it dies, hangs, misbehaves or has served its time. All
/// blocking (pipes, waitpid) happens here, never on Swift's cooperative threads.
struct WorkerSlot: Sendable {
    let core: PoolCore
    let index: Int

    private var configuration: WorkerPool.Configuration { core.configuration }
    private var wake: WakePipe { core.wakes[index] }

    /// Starts the thread. It ends after the pool closes and its worker is retired.
    static func start(core: PoolCore, index: Int) throws(SandboxFailure) {
        let slot = WorkerSlot(core: core, index: index)
        try DetachedThread.start(name: "sandbox-\(index)") { slot.run() }
    }

    private func run() {
        // A write to a dead worker's pipe must fail with EPIPE, not kill the gateway.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        // Steps of tasks that prefer the pool's executor, resumed here, run here (`SlotExecutor`).
        SlotExecutor.adopt()
        defer { SlotExecutor.leave() }
        // Before the first worker starts: each worker this thread spawns inherits its CPU.
        if let cpu = core.placements[index] { CPUPlacement.bind(0, to: cpu) }

        var worker: WorkerProcess? = start()
        var lastStartFailure: ContinuousClock.Instant? = worker == nil ? .now : nil

        while true {
            SlotExecutor.runPending()
            if worker == nil, !core.isClosed, lastStartFailure.map({ .now - $0 > .seconds(1) }) ?? true {
                worker = start()
                lastStartFailure = worker == nil ? .now : nil
            }
            let (next, condemned) = core.nextJobs(
                slot: index, pipeBytes: worker?.requestPipeBytes ?? 0,
                maxBatch: max(
                    1, min(WorkerSlot.maxBatch, configuration.maxDocumentsPerWorker - (worker?.documentsCompleted ?? 0))),
                handOff: worker.map {
                    PoolCore.HandOffTarget(
                        input: $0.input, pipeBytes: $0.requestPipeBytes, processID: $0.processID, window: $0.window)
                })
            if let current = worker, condemned == current.processID {  // its last graph did not decode
                current.stop()
                worker = nil
                core.workerStopped(slot: index)
            }
            switch next {
            case .stop:
                worker?.retire(grace: configuration.retireGrace)
                worker = nil  // its pipes close here, before shutdown() returns
                core.slotStopped(slot: index)
                return
            case .idle:
                if let current = worker {
                    // A task may write a request to the worker meanwhile (`PoolCore.submit`) without waking this
                    // thread: its answer does, or the tick, which bounds how late its deadline starts counting.
                    let event = current.wait(
                        writing: false, deadline: .now + WorkerSlot.handOffTick, wake: wake, interrupted: { true })
                    if let handed = core.claimHanded(slot: index) {
                        // Not to be used again: killed, reaped and recorded, or retired.
                        if !perform([handed.job], on: current, handed: handed) || servedItsTime(current) { worker = nil }
                        continue
                    }
                    switch event {
                    case .interrupted, .timedOut: break
                    case .ready, .closed:
                        // A worker that speaks unasked or dies while idle is replaced; no document is affected.
                        current.stop()
                        worker = nil
                        core.workerStopped(slot: index)
                    }
                } else {
                    var descriptor = pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&descriptor, 1, 1000)
                    wake.drain()
                }
            case .jobs(let jobs):
                if let current = worker, current.isUnusable {  // died since it went idle: not these documents' doing
                    current.stop()
                    worker = nil
                    core.workerStopped(slot: index)
                }
                if worker == nil {
                    worker = start()
                    lastStartFailure = worker == nil ? .now : nil
                }
                guard let current = worker else {
                    for job in jobs {
                        core.finish(
                            job, slot: index,
                            answer: .failure(SandboxFailure(code: .unavailable, reason: "no worker could be started")))
                    }
                    continue
                }
                // Not to be used again: killed, reaped and recorded, or retired.
                if !perform(jobs, on: current) || servedItsTime(current) { worker = nil }
            }
        }
    }

    /// Retires `worker` if it has served its time (documents or busy time); true if it did.
    private func servedItsTime(_ worker: WorkerProcess) -> Bool {
        guard worker.documentsCompleted >= configuration.maxDocumentsPerWorker
            || worker.busyTime >= configuration.busyTimeBudget
        else { return false }
        worker.retire(grace: configuration.retireGrace)
        core.workerStopped(slot: index)
        return true
    }

    /// How often a slot waiting idle on its worker looks for a request a task handed it.
    static let handOffTick: Duration = .milliseconds(50)

    /// Starts a worker, recording the outcome with the pool.
    private func start() -> WorkerProcess? {
        do {
            let (worker, report) = try WorkerProcess.launch(configuration.launch, wake: wake)
            core.workerStarted(slot: index, result: .success((worker.processID, report)))
            return worker
        } catch {
            core.workerStarted(slot: index, result: .failure(error))
            return nil
        }
    }

    /// Most documents written to a worker at once.
    static let maxBatch = 16

    /// Runs a batch on `worker`: every request in one write (a batch fits in the request pipe, so the
    /// write does not wait for the worker), then the answers one by one as the worker gives them, each
    /// document's deadline counted from the answer before it (when the worker starts on it). Each job is
    /// answered here; those the worker never reached because it died, hung or broke the protocol on an
    /// earlier one go back to the head of the queue, for a fresh worker.
    ///
    /// - Returns: whether the worker may be used again (false: it was killed, reaped and recorded).
    /// `handed`: the one job of the batch, which a task already wrote (perhaps in part) to the worker.
    private func perform(_ batch: [PoolCore.Job], on worker: WorkerProcess, handed: PoolCore.Handed? = nil) -> Bool {
        var jobs = batch
        if jobs.count > 1, jobs.reduce(0, { $0 + $1.request.pipeFootprint }) > worker.requestPipeBytes {
            core.requeue(Array(jobs.dropFirst()), slot: index)  // a worker with a smaller pipe than its predecessor's
            jobs = [jobs[0]]
        }
        let startedAt = handed?.at ?? .now
        defer { worker.busyTime += .now - startedAt }
        var parts: [ArraySlice<UInt8>] = handed?.parts ?? []
        if handed == nil {
            parts.reserveCapacity(2 * jobs.count)
            // The worker answered everything it was given before: the whole window is free for this batch.
            var free = 0
            for job in jobs { parts += WorkerSlot.requestParts(job.request, window: worker.window, free: &free) }
        }
        let first = jobs[0]
        let failure: SandboxFailure?
        // The pipe refers to these bytes (no copy) until the worker reads them: `parts` (the prefixes and the
        // documents) lives until the last answer is in, below.
        switch worker.write(
            WorkerSlot.dropping(handed?.written ?? 0, from: parts), referencing: true,
            deadline: startedAt + first.deadline, wake: wake,
            interrupted: { core.isCancelRequested(slot: index, id: first.request.id) })
        {
        case .done: failure = nil
        case .closed: failure = died(worker, job: first)
        case .unexpectedAnswer: failure = protocolError(worker, "answered before reading its request")
        case .timedOut: failure = timedOut(worker, job: first)
        case .interrupted: failure = cancelled(worker)
        }
        if let failure {
            core.workerStopped(slot: index)
            core.finish(first, slot: index, answer: .failure(failure))
            core.requeue(Array(jobs.dropFirst()), slot: index)
            return false
        }
        return withExtendedLifetime(parts) {
            var begun = startedAt
            for (position, job) in jobs.enumerated() {
                let (answer, keep) = receive(
                    job, from: worker, deadline: begun + job.deadline, reached: position == 0,
                    justWritten: position == 0 && handed == nil)
                if !keep { core.workerStopped(slot: index) }  // before the answer: the task may look at the pool
                // The worker read this document whole before it answered, so its task may now free the bytes.
                core.finish(job, slot: index, answer: answer)
                guard keep else {
                    core.requeue(Array(jobs[(position + 1)...]), slot: index)
                    return false  // the task's next step, if it prefers the pool's executor, runs in `run`'s loop
                }
                // Its task's next step, if it prefers the pool's executor, while the worker goes on with the batch;
                // the next document's deadline counts from after it.
                SlotExecutor.runPending()
                begun = .now
            }
            return true
        }
    }

    /// Reads the worker's answer to `job`, the document it works on now.
    ///
    /// - Parameter reached: the worker started on `job` when it was written (the first of its batch, or
    ///   one a task handed): cancelling it stops the worker at once, as for one cancelled from now on.
    /// - Parameter justWritten: this thread wrote the request just now: its answer cannot be there yet.
    /// - Returns: the answer, and whether the worker may be used again (it answered properly).
    private func receive(
        _ job: PoolCore.Job, from worker: WorkerProcess, deadline: ContinuousClock.Instant, reached: Bool,
        justWritten: Bool
    ) -> (PoolCore.Answer, Bool) {
        let request = job.request
        let cancelRequested = core.isCancelRequested(slot: index, id: request.id)
        // Cancelled before this thread took it up (a handed job: the wake-up that said so is spent).
        if reached && cancelRequested { return (.failure(cancelled(worker)), false) }
        // Cancelled while it waited in the batch: the worker has it and answers it; the answer is dropped.
        let cancelledEarlier = !reached && cancelRequested
        let interrupted = { !cancelledEarlier && core.isCancelRequested(slot: index, id: request.id) }
        let (answer, keep) = read(
            job, from: worker, deadline: deadline, waitsFirst: justWritten, interrupted: interrupted)
        guard cancelledEarlier, keep else { return (answer, keep) }
        return (.failure(SandboxFailure(code: .cancelled, reason: "the task was cancelled before the worker reached it")), true)
    }

    private func read(
        _ job: PoolCore.Job, from worker: WorkerProcess, deadline: ContinuousClock.Instant, waitsFirst: Bool,
        interrupted: () -> Bool
    ) -> (PoolCore.Answer, Bool) {
        let request = job.request

        let maxPayload = 8 + max(Int(request.limits.maxResponseBytes), 1 + Frame.maxReasonBytes)
        let kind: Frame.Kind
        let payload: [UInt8]
        switch worker.readFrame(
            maxPayload: maxPayload, deadline: deadline, wake: wake, waitsFirst: waitsFirst, interrupted: interrupted)
        {
        case .frame(let frameKind, let framePayload): (kind, payload) = (frameKind, framePayload)
        case .invalid(let error): return (.failure(protocolError(worker, "\(error)")), false)
        case .closed: return (.failure(died(worker, job: job)), false)
        case .timedOut: return (.failure(timedOut(worker, job: job)), false)
        case .interrupted: return (.failure(cancelled(worker)), false)
        }

        let answer: WorkerAnswer
        do {
            answer = try WorkerAnswer(kind: kind, payload: payload)
        } catch {
            return (.failure(protocolError(worker, "\(error)")), false)
        }
        guard answer.id == request.id else {
            return (.failure(protocolError(worker, "answered document \(answer.id) instead of \(request.id)")), false)
        }
        switch answer {
        case .graph(_, let encoded):
            worker.documentsCompleted += 1
            return (.success(PoolCore.EncodedGraph(bytes: encoded, slot: index, processID: worker.processID)), true)
        case .failure(_, .tooLarge, let reason):
            worker.documentsCompleted += 1
            return (.failure(SandboxFailure(code: .tooLarge, reason: reason)), true)
        case .failure(_, .memoryLimit, let reason):
            worker.documentsCompleted += 1
            return (.failure(SandboxFailure(code: .memoryLimit, reason: reason)), true)
        }
    }

    /// What to write to the request pipe for `request`: its frame alone when its document goes into `window` (copied
    /// there now, from offset `free` on, which moves past it), else the frame's prefix and the document itself (a
    /// document larger than the window's free part, or no window).
    static func requestParts(
        _ request: ExtractionRequest, window: DocumentWindow?, free: inout Int
    ) -> [ArraySlice<UInt8>] {
        guard let window, let offset = window.place(request.document.count, at: &free) else {
            return [request.framePrefix[...], request.document[...]]
        }
        window.copy(request.document, to: offset)
        return [request.windowFrame(offset: offset)[...]]
    }

    /// `parts` without their first `count` bytes.
    static func dropping(_ count: Int, from parts: [ArraySlice<UInt8>]) -> [ArraySlice<UInt8>] {
        guard count > 0 else { return parts }
        var rest = count
        var kept: [ArraySlice<UInt8>] = []
        for part in parts {
            if rest >= part.count {
                rest -= part.count
                continue
            }
            kept.append(part.dropFirst(rest))
            rest = 0
        }
        return kept
    }

    // MARK: - Failures

    private func timedOut(_ worker: WorkerProcess, job: PoolCore.Job) -> SandboxFailure {
        let termination = worker.stop()
        return SandboxFailure(
            code: .timeout,
            reason: "worker \(worker.processID) did not answer \(job.request.kind) document \(job.request.id) within "
                + "its deadline of \(job.deadline) and was killed; raise the deadline if such documents are expected",
            termination: termination)
    }

    private func cancelled(_ worker: WorkerProcess) -> SandboxFailure {
        let termination = worker.stop()
        return SandboxFailure(
            code: .cancelled, reason: "the task was cancelled; worker \(worker.processID) was stopped",
            termination: termination)
    }

    private func protocolError(_ worker: WorkerProcess, _ what: String) -> SandboxFailure {
        let termination = worker.stop()
        return SandboxFailure(
            code: .protocolError, reason: "worker \(worker.processID) broke the protocol: \(what); it was killed",
            termination: termination)
    }

    /// The worker closed its pipe without answering: find out how it ended. Its stderr is not
    /// quoted, since a worker that went wrong may have written document content there.
    private func died(_ worker: WorkerProcess, job: PoolCore.Job) -> SandboxFailure {
        let termination = worker.collect()
        let document = "\(job.request.kind) document \(job.request.id)"
        let who = "worker \(worker.processID)"
        let limit = "\(configuration.confinement.addressSpaceBytes >> 20) MiB"
        switch termination {
        case .exited(WorkerExitStatus.memoryLimit):
            return SandboxFailure(
                code: .memoryLimit, reason: "\(who) exhausted its address space limit of \(limit) on \(document)",
                termination: termination)
        case .signaled where worker.reportedAllocationFailure:
            return SandboxFailure(
                code: .memoryLimit,
                reason: "\(who) failed to allocate memory under its address space limit of \(limit) on \(document)",
                termination: termination)
        case .signaled(SIGSYS):
            return SandboxFailure(
                code: .crashed,
                reason: "\(who) made a system call its seccomp filter forbids (SIGSYS) on \(document): "
                    + "a parser bug or an exploit attempt; the document was not extracted",
                termination: termination)
        case .signaled(SIGXCPU):
            return SandboxFailure(
                code: .timeout, reason: "\(who) reached its lifetime CPU limit on \(document)", termination: termination
            )
        case .signaled(let signal):
            return SandboxFailure(
                code: .crashed,
                reason: "\(who) died of \(SandboxFailure.signalName(signal)) while extracting \(document)",
                termination: termination)
        case .exited(let status):
            return SandboxFailure(
                code: .crashed, reason: "\(who) exited with status \(status) without answering \(document)",
                termination: termination)
        }
    }
}
