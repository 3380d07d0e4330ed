internal import CSeccomp
internal import FoundationEssentials
internal import Glibc
internal import Markup

/// The thread behind one place in the pool. It owns one worker process at a time: starts it,
/// hands it documents one by one, enforces each document's deadline, and replaces it when it dies,
/// hangs, misbehaves or has served its time. All blocking (pipes, waitpid) happens here, never on
/// Swift's cooperative threads.
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

        var worker: WorkerProcess? = start()
        var lastStartFailure: ContinuousClock.Instant? = worker == nil ? .now : nil

        while true {
            if worker == nil, !core.isClosed, lastStartFailure.map({ .now - $0 > .seconds(1) }) ?? true {
                worker = start()
                lastStartFailure = worker == nil ? .now : nil
            }
            let (next, condemned) = core.nextJob(slot: index)
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
                    switch current.wait(writing: false, deadline: nil, wake: wake, interrupted: { true }) {
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
            case .job(let job):
                if let current = worker, current.isUnusable {  // died since it went idle: not this document's doing
                    current.stop()
                    worker = nil
                    core.workerStopped(slot: index)
                }
                if worker == nil {
                    worker = start()
                    lastStartFailure = worker == nil ? .now : nil
                }
                guard let current = worker else {
                    core.finish(
                        job, slot: index,
                        answer: .failure(SandboxFailure(code: .unavailable, reason: "no worker could be started")))
                    continue
                }
                let (answer, keep) = perform(job, on: current)
                if !keep {  // already killed and reaped
                    worker = nil
                    core.workerStopped(slot: index)
                }
                core.finish(job, slot: index, answer: answer)
                if keep,
                    current.documentsCompleted >= configuration.maxDocumentsPerWorker
                        || current.busyTime >= configuration.busyTimeBudget
                {
                    current.retire(grace: configuration.retireGrace)  // served its time
                    worker = nil
                    core.workerStopped(slot: index)
                }
            }
        }
    }

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

    /// Runs one document on `worker`.
    ///
    /// - Returns: the answer, and whether the worker may be used again (it answered properly).
    private func perform(
        _ job: PoolCore.Job, on worker: WorkerProcess
    ) -> (PoolCore.Answer, Bool) {
        let startedAt = ContinuousClock.now
        let deadline = startedAt + job.deadline
        let interrupted = { core.isCancelRequested(slot: index) }
        let request = job.request

        switch worker.write(
            [request.framePrefix[...], request.document[...]], deadline: deadline, wake: wake, interrupted: interrupted)
        {
        case .done: break
        case .closed: return (.failure(died(worker, job: job)), false)
        case .unexpectedAnswer: return (.failure(protocolError(worker, "answered before reading its request")), false)
        case .timedOut: return (.failure(timedOut(worker, job: job)), false)
        case .interrupted: return (.failure(cancelled(worker)), false)
        }

        let maxPayload = 8 + max(Int(request.limits.maxResponseBytes), 1 + Frame.maxReasonBytes)
        let kind: Frame.Kind
        let payload: [UInt8]
        switch worker.readFrame(maxPayload: maxPayload, deadline: deadline, wake: wake, interrupted: interrupted) {
        case .frame(let frameKind, let framePayload): (kind, payload) = (frameKind, framePayload)
        case .invalid(let error): return (.failure(protocolError(worker, "\(error)")), false)
        case .closed: return (.failure(died(worker, job: job)), false)
        case .timedOut: return (.failure(timedOut(worker, job: job)), false)
        case .interrupted: return (.failure(cancelled(worker)), false)
        }
        worker.busyTime += .now - startedAt

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
