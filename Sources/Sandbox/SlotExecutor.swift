internal import Glibc

/// A task executor that runs a task's next step on the pool's slot thread that resumed it, right
/// after the slot hands it its graph, instead of waking one of Swift's cooperative threads for it.
///
/// With one document in flight a document costs three wake-ups on the default executor: the asking
/// task's write wakes the worker, the worker's answer wakes the slot thread, and the slot thread's
/// resumption wakes a cooperative thread, which decodes and resolves the graph and submits the next
/// document. Under this executor the third is gone: the slot thread runs that step itself, between
/// reading one answer and waiting for the next, and writes the next document to its worker.
///
/// A task opts in with `withTaskExecutorPreference(pool.executor) { … }`. A job enqueued from any
/// other thread (the task's first step, a resumption by another pool, a timer) goes to Swift's
/// global concurrent executor as usual, so nothing ever waits for a slot thread to be free: the
/// executor only saves a hand-off when one would happen on a slot thread anyway. What runs on a slot
/// thread delays that slot's next read of its worker's answer by as long as the step takes (the
/// worker meanwhile goes on with its next document, if it has one): steps that block belong
/// elsewhere, as on any executor of Swift's.
package final class SlotExecutor: TaskExecutor {
    /// Jobs a slot thread enqueued for itself, each with the executor it was enqueued on, run by that
    /// thread before it waits again (`runPending`).
    private final class PendingJobs {
        var jobs: [(job: UnownedJob, executor: UnownedTaskExecutor)] = []
    }

    package init() {}

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if let pending = SlotExecutor.pendingOfCurrentThread {
            pending.jobs.append((job, asUnownedTaskExecutor()))
        } else {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Makes the calling thread a slot thread: what it enqueues on any `SlotExecutor`, it runs itself
    /// (`runPending`), until it calls `leave`.
    static func adopt() {
        pthread_setspecific(threadKey, Unmanaged.passRetained(PendingJobs()).toOpaque())
    }

    /// Runs what is left, and makes the calling thread an ordinary one again.
    static func leave() {
        runPending()
        guard let pending = pthread_getspecific(threadKey) else { return }
        pthread_setspecific(threadKey, nil)
        Unmanaged<PendingJobs>.fromOpaque(pending).release()
    }

    /// Runs what the calling slot thread enqueued, and what those jobs enqueue in turn, until none is
    /// left; on another thread, nothing.
    static func runPending() {
        guard let pending = pendingOfCurrentThread else { return }
        while !pending.jobs.isEmpty {
            let jobs = pending.jobs
            pending.jobs.removeAll(keepingCapacity: true)
            for (job, executor) in jobs { job.runSynchronously(on: executor) }
        }
    }

    private static var pendingOfCurrentThread: PendingJobs? {
        pthread_getspecific(threadKey).map { Unmanaged<PendingJobs>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The thread-specific slot of each slot thread's `PendingJobs` (nil on every other thread).
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}
