internal import FoundationEssentials

extension WorkerPool {
    /// How many workers, which executable, how confined, and the limits on what they are given.
    package struct Configuration: Sendable {
        /// Path of the worker executable (`gateway-worker`, next to `gateway`).
        package var workerExecutable: String
        /// Extra arguments for it (the worker takes its settings from the setup frame; these are
        /// for the executable's own use).
        package var workerArguments: [String]
        /// The worker's entire environment. Nothing of the gateway's is inherited. Keep
        /// `SWIFT_BACKTRACE=enable=no`: a crashing Swift process otherwise tries to start the
        /// backtracer, which the filter forbids.
        package var workerEnvironment: [String: String]
        /// Workers, and threads that drive them; two per active core by default. Between documents a worker
        /// waits while its thread reads the answer and writes the next document, so with one per core the cores
        /// idle in those gaps (measured with `gateway-bench ingest` on 2 cores: 4 workers ingest 30–50% more
        /// emails per second than 2, at the same CPU per email).
        package var workerCount: Int
        /// How each worker confines itself.
        package var confinement: Confinement.Configuration
        /// Each slot's thread and its worker bound to one CPU together, each slot to another of the CPUs the gateway
        /// may use (`CPUPlacement`), when there are no more slots than CPUs; off, or with more slots (as by default),
        /// the scheduler places them. Bound, a document's hand-offs (request, answer) stay on one CPU and its cache
        /// instead of waking an idle one (`gateway-bench extract`, one worker, one document in flight on 2 cores: the
        /// sandbox's cost +17% to +21% of CPU over in-process against +52% to +58% unplaced).
        package var colocatesWorkers: Bool
        /// Larger documents get `sandbox.too-large` without reaching a worker.
        package var maxDocumentBytes: Int
        /// Per-document limits passed to the worker's handler.
        package var limits: ExtractionRequest.Limits
        /// A worker is replaced after this many documents (its CPU limit is cumulative; and a
        /// long-lived parser is a place for state to build up). Starting one costs 40–56 ms (the
        /// charsets preloaded, a warm-up document of each kind): at 10,000 documents that is about
        /// 5 µs a document, where 1,000 made it a few percent of extraction's cost.
        package var maxDocumentsPerWorker: Int
        /// Documents waiting for a worker beyond this get `sandbox.unavailable`.
        package var maxQueuedDocuments: Int
        /// How long a new worker may take to confine itself and say it is ready.
        package var startupTimeout: Duration
        /// How long a retiring worker may take to exit after its request pipe closes.
        package var retireGrace: Duration

        package init(
            workerExecutable: String,
            workerArguments: [String] = [],
            workerEnvironment: [String: String] = ["SWIFT_BACKTRACE": "enable=no"],
            workerCount: Int = 2 * ProcessInfo.processInfo.activeProcessorCount,
            confinement: Confinement.Configuration = Confinement.Configuration(),
            colocatesWorkers: Bool = true,
            maxDocumentBytes: Int = 32 << 20,
            limits: ExtractionRequest.Limits = ExtractionRequest.Limits(),
            maxDocumentsPerWorker: Int = 10_000,
            maxQueuedDocuments: Int = 1024,
            startupTimeout: Duration = .seconds(10),
            retireGrace: Duration = .seconds(1)
        ) {
            self.workerExecutable = workerExecutable
            self.workerArguments = workerArguments
            self.workerEnvironment = workerEnvironment
            self.workerCount = workerCount
            self.confinement = confinement
            self.colocatesWorkers = colocatesWorkers
            self.maxDocumentBytes = maxDocumentBytes
            self.limits = limits
            self.maxDocumentsPerWorker = maxDocumentsPerWorker
            self.maxQueuedDocuments = maxQueuedDocuments
            self.startupTimeout = startupTimeout
            self.retireGrace = retireGrace
        }

        var launch: WorkerProcess.Launch {
            WorkerProcess.Launch(
                executable: workerExecutable, arguments: workerArguments, environment: workerEnvironment,
                setup: WorkerSetup(confinement: confinement, maxDocumentBytes: maxDocumentBytes),
                startupTimeout: startupTimeout)
        }

        /// Busy time after which a worker is replaced: half its lifetime CPU limit, since busy
        /// (wall) time bounds the CPU time it used.
        var busyTimeBudget: Duration { .seconds(Int64(clamping: confinement.lifetimeCPUSeconds) / 2) }
    }

    /// One worker slot, for metrics and tests.
    package struct WorkerStatus: Sendable, Hashable {
        /// The current worker's pid, or nil between workers.
        package var processID: Int32?
        /// Extracting a document right now.
        package var isBusy: Bool
        /// Documents answered by this slot's workers since the pool started.
        package var documentsCompleted: Int
        /// The most documents this slot has written to a worker at once (one write, answered one by one).
        package var largestBatch: Int
        /// Documents a task wrote to this slot's idle worker itself, without waking the slot's thread
        /// (`PoolCore.submit`'s hand-off).
        package var handedOff: Int
        /// Worker starts in this slot after the first (after a crash, a timeout, recycling), whether
        /// or not they succeeded.
        package var restarts: Int
    }
}
