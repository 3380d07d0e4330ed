internal import Markup
internal import Synchronization

/// The state a `WorkerPool` shares between the tasks that submit documents and the slot threads
/// that run them, under one lock. Every job's continuation is resumed exactly once: by whoever
/// takes the job out of the queue or off its slot, outside the lock.
final class PoolCore: Sendable {
    typealias Answer = Result<EncodedGraph, SandboxFailure>

    /// A worker's graph as it came off the pipe. The task that asked for it decodes it
    /// (`WorkerPool.extract`), so that the graph is built on the thread that goes on to use it (and
    /// free it), not on the slot's.
    struct EncodedGraph: Sendable {
        var bytes: ArraySlice<UInt8>
        /// Where it came from: a graph that does not decode condemns that worker.
        var slot: Int
        var processID: Int32
    }

    struct Job: Sendable {
        var request: ExtractionRequest
        var deadline: Duration
        var continuation: CheckedContinuation<Answer, Never>
    }

    /// An idle slot's worker, whose request pipe is empty: a task that finds it may write its request
    /// there itself (`submit`), so that the slot thread, already waiting on the worker's answers, is not
    /// woken to do it (one sleep and wake-up fewer per document). Published by the slot thread while it
    /// waits (`nextJobs`), withdrawn under the lock before it touches the worker again (`claimHanded`), so
    /// a task never writes to a pipe the slot has closed.
    struct HandOffTarget: Sendable {
        var input: Int32
        var pipeBytes: Int
        var processID: Int32
        /// The worker's document window: idle, it has answered everything, so the whole window is free.
        var window: DocumentWindow?
    }

    /// A request a task wrote to an idle slot's worker itself: the slot thread answers it.
    struct Handed: Sendable {
        var job: Job
        /// What was written, by reference: kept until the worker has answered.
        var parts: [ArraySlice<UInt8>]
        /// How much of `parts` the pipe took (the slot thread writes the rest).
        var written: Int
        /// When it was written: its deadline counts from here.
        var at: ContinuousClock.Instant
    }

    /// The shortest deadline a task may hand off its request with: the slot thread, waiting on the worker,
    /// looks for a handed request at least once a `WorkerSlot.handOffTick`, and counts its deadline from
    /// then on; shorter deadlines wake it at once instead.
    static let shortestHandedDeadline: Duration = .milliseconds(100)

    /// Where a document is.
    private enum Phase {
        /// Has an id; not yet submitted.
        case registered
        /// Cancelled before it was submitted.
        case cancelled
        case queued
        case running(slot: Int)
    }

    private struct Slot {
        var isIdle = false
        var isBusy = false
        /// Documents of the slot's batch whose tasks were cancelled.
        var cancelled: Set<UInt64> = []
        var processID: Int32?
        var documentsCompleted = 0
        var restarts = 0
        var started = false
        /// A worker whose graph did not decode: the slot stops it before its next document.
        var condemned: Int32?
        var largestBatch = 0
        /// Published while the slot waits idle with a worker that can take a document.
        var handOff: HandOffTarget?
        /// A request a task wrote to the worker itself, for the slot thread to answer.
        var handed: Handed?
        var handedOff = 0
    }

    private struct State {
        var queue: [Job] = []
        var phases: [UInt64: Phase] = [:]
        var slots: [Slot]
        var closed = false
        var nextID: UInt64 = 1
        var report: Confinement.Report?
        var startupFailure: SandboxFailure?
        var startupReports = 0
        var startupWaiter: CheckedContinuation<SandboxFailure?, Never>?
        var stoppedSlots = 0
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let configuration: WorkerPool.Configuration
    let wakes: [WakePipe]
    /// The CPU each slot's thread and worker are bound to, if any (`CPUPlacement`).
    let placements: [Int?]
    /// Runs the steps of tasks that prefer it on the slot thread that resumed them.
    let executor = SlotExecutor()
    private let state: Mutex<State>

    init(configuration: WorkerPool.Configuration) throws(SandboxFailure) {
        self.configuration = configuration
        var wakes: [WakePipe] = []
        for _ in 0..<configuration.workerCount { wakes.append(try WakePipe()) }
        self.wakes = wakes
        self.placements = CPUPlacement.plan(slots: configuration.workerCount, colocate: configuration.colocatesWorkers)
        self.state = Mutex(State(slots: Array(repeating: Slot(), count: configuration.workerCount)))
    }

    // MARK: - Submitting (tasks)

    /// A fresh document id, or nil when the pool is closed.
    func register() -> UInt64? {
        state.withLock { state in
            guard !state.closed else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.phases[id] = .registered
            return id
        }
    }

    /// Queues a registered job and wakes an idle slot; or answers it at once when it was cancelled,
    /// the pool closed, or the queue is full.
    func submit(_ job: Job) {
        let id = job.request.id
        enum Decision { case queued(wake: Int?), handed(wake: Int?), refused(SandboxFailure) }
        let decision = state.withLock { state -> Decision in
            if case .cancelled = state.phases[id] {
                state.phases[id] = nil
                return .refused(
                    SandboxFailure(code: .cancelled, reason: "the task was cancelled before extraction began"))
            }
            if state.closed {
                state.phases[id] = nil
                return .refused(SandboxFailure(code: .unavailable, reason: "the worker pool is shut down"))
            }
            guard state.queue.count < configuration.maxQueuedDocuments else {
                state.phases[id] = nil
                return .refused(
                    SandboxFailure(
                        code: .unavailable,
                        reason: "\(state.queue.count) documents already wait for a worker; try again later"))
            }
            if state.queue.isEmpty, let handed = handOff(job, state: &state) { return .handed(wake: handed) }
            state.queue.append(job)
            state.phases[id] = .queued
            guard let slot = state.slots.firstIndex(where: \.isIdle) else { return .queued(wake: nil) }
            state.slots[slot].isIdle = false
            return .queued(wake: slot)
        }
        switch decision {
        case .queued(let slot), .handed(let slot): if let slot { wakes[slot].signal() }
        case .refused(let failure): job.continuation.resume(returning: .failure(failure))
        }
    }

    /// Writes `job`'s request to an idle slot's worker (one that published a `HandOffTarget`) and leaves it
    /// to that slot, under the lock, so the slot cannot close the pipe meanwhile. The write does not wait:
    /// the pipe is empty and the request's footprint fits it; should the pipe take only part, the slot
    /// thread (woken) writes the rest.
    ///
    /// - Returns: nil when no slot can take it so (the job is then queued as usual: none idle with a
    ///   worker, a deadline too short to hand off, a request larger than the pipe, or the worker's pipe
    ///   closed because it died); else the slot to wake, if the write was partial.
    private func handOff(_ job: Job, state: inout State) -> Int?? {
        guard job.deadline >= PoolCore.shortestHandedDeadline,
            let slot = state.slots.firstIndex(where: { $0.isIdle && $0.handOff != nil }),
            let target = state.slots[slot].handOff, job.request.pipeFootprint <= target.pipeBytes
        else { return nil }
        var free = 0
        let parts = WorkerSlot.requestParts(job.request, window: target.window, free: &free)
        guard let written = WorkerProcess.writeNow(parts, to: target.input) else {
            state.slots[slot].handOff = nil  // it died: the slot finds out and replaces it
            return nil
        }
        state.slots[slot].isIdle = false
        state.slots[slot].isBusy = true
        state.slots[slot].handOff = nil
        state.slots[slot].cancelled = []
        state.slots[slot].largestBatch = max(state.slots[slot].largestBatch, 1)
        state.slots[slot].handedOff += 1
        state.slots[slot].handed = Handed(job: job, parts: parts, written: written, at: .now)
        state.phases[job.request.id] = .running(slot: slot)
        return .some(written < parts.reduce(0) { $0 + $1.count } ? slot : nil)
    }

    /// Called by a slot thread whenever its idle wait ends, before it touches its worker: withdraws its
    /// `HandOffTarget` (no task writes to that worker from now on) and takes the request a task handed
    /// it, if any.
    func claimHanded(slot: Int) -> Handed? {
        state.withLock { state in
            state.slots[slot].isIdle = false
            state.slots[slot].handOff = nil
            defer { state.slots[slot].handed = nil }
            return state.slots[slot].handed
        }
    }

    /// Cancels a document wherever it is: before submission, in the queue, or on a slot (whose
    /// thread then kills the worker).
    func cancel(_ id: UInt64) {
        enum Decision { case nothing, answer(Job), wake(Int) }
        let decision = state.withLock { state -> Decision in
            switch state.phases[id] {
            case .registered:
                state.phases[id] = .cancelled
                return .nothing
            case .queued:
                state.phases[id] = nil
                guard let index = state.queue.firstIndex(where: { $0.request.id == id }) else { return .nothing }
                return .answer(state.queue.remove(at: index))
            case .running(let slot):
                state.slots[slot].cancelled.insert(id)
                return .wake(slot)
            case .cancelled, nil:
                return .nothing
            }
        }
        switch decision {
        case .nothing: break
        case .answer(let job):
            job.continuation.resume(
                returning: .failure(SandboxFailure(code: .cancelled, reason: "the task was cancelled while queued")))
        case .wake(let slot): wakes[slot].signal()
        }
    }

    /// Closes the pool: no new documents; queued ones get `sandbox.unavailable`; slots finish the
    /// document in hand, retire their worker and stop.
    func close() {
        let abandoned = state.withLock { state -> [Job] in
            guard !state.closed else { return [] }
            state.closed = true
            for slot in state.slots.indices { state.slots[slot].handOff = nil }
            let jobs = state.queue
            state.queue = []
            for job in jobs { state.phases[job.request.id] = nil }
            return jobs
        }
        for job in abandoned {
            job.continuation.resume(
                returning: .failure(SandboxFailure(code: .unavailable, reason: "the worker pool shut down")))
        }
        for wake in wakes { wake.signal() }
    }

    // MARK: - Slots (threads)

    enum Next {
        /// The oldest queued job and those queued behind it that go to the worker in the same write.
        case jobs([Job])
        /// Nothing to do: wait on the wake pipe (the slot is now marked idle).
        case idle
        /// The pool is closed and the queue is empty.
        case stop
    }

    /// The next jobs for `slot`, oldest first: the oldest, and behind it as many of the queued ones as
    /// fit together in `pipeBytes` (the request pipe, empty between batches, then takes them in one
    /// write without waiting for the worker; each counted by its `pipeFootprint`), at most `maxBatch`.
    /// Also the worker the slot must stop first, if any. When the slot goes idle, `handOff` (its worker,
    /// if it can take another document) is published for tasks to write to directly, unless condemned.
    func nextJobs(
        slot: Int, pipeBytes: Int, maxBatch: Int, handOff: HandOffTarget? = nil
    ) -> (next: Next, condemned: Int32?) {
        state.withLock { state in
            let condemned = state.slots[slot].condemned
            state.slots[slot].condemned = nil
            state.slots[slot].handOff = nil
            guard !state.queue.isEmpty else {
                if state.closed { return (.stop, condemned) }
                state.slots[slot].isIdle = true
                state.slots[slot].isBusy = false
                if let handOff, handOff.processID != condemned { state.slots[slot].handOff = handOff }
                return (.idle, condemned)
            }
            var count = 1
            var bytes = state.queue[0].request.pipeFootprint
            while count < min(maxBatch, state.queue.count),
                bytes + state.queue[count].request.pipeFootprint <= pipeBytes
            {
                bytes += state.queue[count].request.pipeFootprint
                count += 1
            }
            let jobs = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            for job in jobs { state.phases[job.request.id] = .running(slot: slot) }
            state.slots[slot].isIdle = false
            state.slots[slot].isBusy = true
            state.slots[slot].cancelled = []
            state.slots[slot].largestBatch = max(state.slots[slot].largestBatch, count)
            return (.jobs(jobs), condemned)
        }
    }

    /// Puts jobs of a batch that the worker never answered (it died, hung or was stopped on an
    /// earlier one) back at the head of the queue, in their order, for this or another slot. None is
    /// lost: when the pool has closed meanwhile they get `sandbox.unavailable`; cancelled ones get
    /// `sandbox.cancelled`.
    func requeue(_ jobs: [Job], slot: Int) {
        guard !jobs.isEmpty else { return }
        var refused: [(Job, SandboxFailure)] = []
        let wake = state.withLock { state -> Int? in
            var kept: [Job] = []
            for job in jobs {
                if state.slots[slot].cancelled.contains(job.request.id) {
                    state.phases[job.request.id] = nil
                    refused.append(
                        (job, SandboxFailure(code: .cancelled, reason: "the task was cancelled while queued")))
                } else if state.closed {
                    state.phases[job.request.id] = nil
                    refused.append((job, SandboxFailure(code: .unavailable, reason: "the worker pool shut down")))
                } else {
                    state.phases[job.request.id] = .queued
                    kept.append(job)
                }
            }
            state.queue.insert(contentsOf: kept, at: 0)
            guard !kept.isEmpty, let idle = state.slots.firstIndex(where: \.isIdle) else { return nil }
            state.slots[idle].isIdle = false
            return idle
        }
        for (job, failure) in refused { job.continuation.resume(returning: .failure(failure)) }
        if let wake { wakes[wake].signal() }
    }

    /// The worker `processID` on `slot` answered a graph that does not decode: the slot stops it
    /// (if it still runs there) before giving it another document.
    func condemn(slot: Int, processID: Int32) {
        state.withLock { state in
            state.slots[slot].condemned = processID
            if state.slots[slot].handOff?.processID == processID { state.slots[slot].handOff = nil }
        }
        wakes[slot].signal()
    }

    /// True when the job `id` on `slot` was cancelled.
    func isCancelRequested(slot: Int, id: UInt64) -> Bool {
        state.withLock { $0.slots[slot].cancelled.contains(id) }
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// Answers the job `slot` ran.
    func finish(_ job: Job, slot: Int, answer: Answer) {
        state.withLock { state in
            state.phases[job.request.id] = nil
            if case .success = answer { state.slots[slot].documentsCompleted += 1 }
        }
        job.continuation.resume(returning: answer)
    }

    /// Records a worker start (or failure to start) on `slot`. The first start of each slot
    /// counts towards the pool's startup.
    func workerStarted(slot: Int, result: Result<(Int32, Confinement.Report), SandboxFailure>) {
        let waiter = state.withLock { state -> (CheckedContinuation<SandboxFailure?, Never>, SandboxFailure?)? in
            switch result {
            case .success(let (processID, report)):
                state.slots[slot].processID = processID
                state.report = state.report ?? report
            case .failure(let failure):
                state.slots[slot].processID = nil
                if !state.slots[slot].started { state.startupFailure = state.startupFailure ?? failure }
            }
            if state.slots[slot].started {
                state.slots[slot].restarts += 1
                return nil
            }
            state.slots[slot].started = true
            state.startupReports += 1
            guard state.startupReports == state.slots.count, let waiter = state.startupWaiter else { return nil }
            state.startupWaiter = nil
            return (waiter, state.startupFailure)
        }
        if let (continuation, failure) = waiter { continuation.resume(returning: failure) }
    }

    /// The worker on `slot` is gone (and not yet replaced).
    func workerStopped(slot: Int) {
        state.withLock { $0.slots[slot].processID = nil }
    }

    /// Waits until every slot has started its first worker; returns the first failure, if any.
    func startupResult() async -> SandboxFailure? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> SandboxFailure?? in
                guard state.startupReports == state.slots.count else {
                    state.startupWaiter = continuation
                    return .none
                }
                return .some(state.startupFailure)
            }
            if case .some(let failure) = ready { continuation.resume(returning: failure) }
        }
    }

    func slotStopped(slot: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.slots[slot].processID = nil
            state.slots[slot].isIdle = false
            state.stoppedSlots += 1
            guard state.stoppedSlots == state.slots.count else { return [] }
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until every slot thread has retired its worker and stopped.
    func stopped() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.stoppedSlots == state.slots.count { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: - Status

    var report: Confinement.Report? { state.withLock { $0.report } }

    var statuses: [WorkerPool.WorkerStatus] {
        state.withLock { state in
            state.slots.map {
                WorkerPool.WorkerStatus(
                    processID: $0.processID, isBusy: $0.isBusy, documentsCompleted: $0.documentsCompleted,
                    largestBatch: $0.largestBatch, handedOff: $0.handedOff,
                    restarts: $0.restarts)
            }
        }
    }
}
