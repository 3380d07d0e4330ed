package import Markup

/// Long-lived, confined worker processes that extract markup from hostile documents, one document
/// per worker at a time, so that a bug in a parser (libxml2, iconv, ours) costs one document, never
/// the gateway, its keys or its store. Documents that queue while a worker is busy are written to it
/// together (one write, one wake-up) and answered one by one; when the worker fails on one of them,
/// the ones it had not reached yet go back to the queue. A document that finds a worker idle is written
/// to it by the task that asks (`PoolCore.submit`), so the slot's thread, already waiting on that
/// worker's answers, is woken once per document, not twice.
///
/// Each worker is started once (posix_spawn, fresh pipes, an empty environment but for
/// `SWIFT_BACKTRACE`), confines itself (`Confinement`) and is reused for many documents, so
/// confinement costs nothing per document. A worker that overruns a deadline, crashes, runs out of
/// memory or answers garbage is killed and replaced; that document gets a `SandboxFailure`, and the
/// others in flight are not affected.
///
/// ```swift
/// let graph = try await withWorkerPool(configuration: .init(workerExecutable: path)) { pool in
///     await pool.extract(bytes, kind: .html, deadline: .seconds(2))
/// }
/// ```
package final class WorkerPool: Sendable {
    private let core: PoolCore

    /// What the workers applied to confine themselves (the first worker's report; all are alike):
    /// log its warnings once.
    package let confinement: Confinement.Report

    /// Starts `configuration.workerCount` workers and waits until each is confined and ready.
    ///
    /// - Throws: `SandboxFailure.unavailable` when a worker cannot start (no executable, a kernel
    ///   without seccomp, a required namespace or Landlock missing); no worker is left running.
    package init(configuration: Configuration) async throws(SandboxFailure) {
        guard configuration.workerCount > 0 else {
            throw SandboxFailure(code: .unavailable, reason: "the worker pool needs at least one worker")
        }
        core = try PoolCore(configuration: configuration)
        var started = 0
        do throws(SandboxFailure) {
            for index in 0..<configuration.workerCount {
                try WorkerSlot.start(core: core, index: index)
                started += 1
            }
        } catch {
            core.close()
            for index in started..<configuration.workerCount { core.slotStopped(slot: index) }
            await core.stopped()
            throw error
        }
        if let failure = await core.startupResult() {
            core.close()
            await core.stopped()
            throw failure
        }
        confinement = core.report ?? Confinement.Report()
    }

    /// The executor a task may prefer (`withTaskExecutorPreference(pool.executor) { … }`) so that, after
    /// each document, its next step runs on the slot thread that got the answer, rather than on a
    /// cooperative thread woken for it (`SlotExecutor`).
    package var executor: SlotExecutor { core.executor }

    /// The CPU slot `index`'s thread and worker are bound to (`Configuration.colocatesWorkers`), or nil.
    package func cpu(ofSlot index: Int) -> Int? {
        core.placements.indices.contains(index) ? core.placements[index] : nil
    }

    deinit {
        core.close()  // slot threads retire their workers on their own
    }

    /// Extracts the markup of one document in a worker.
    ///
    /// - Parameters:
    ///   - document: the bytes as received.
    ///   - kind: what they are.
    ///   - encoding: for HTML, the charset the transport declared (HTTP or MIME), if any.
    ///   - limits: per-document limits for the handler; the configuration's by default.
    ///   - deadline: how long the worker may take once it starts on the document (waiting for a free
    ///     worker, or for the documents ahead of it in its batch, is not counted; it is bounded by the
    ///     queue limit and the deadlines ahead). A document already written to a worker when its task
    ///     is cancelled is cancelled (its worker stopped) when the worker reaches it.
    /// - Returns: the graph, or why there is none. Never throws, never crashes: every failure of
    ///   the worker is a value for this document.
    package func extract(
        _ document: [UInt8], kind: DocumentKind, encoding: String? = nil, limits: ExtractionRequest.Limits? = nil,
        deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure> {
        guard document.count <= core.configuration.maxDocumentBytes else {
            return .failure(
                SandboxFailure(
                    code: .tooLarge,
                    reason: "the \(kind) document has \(document.count) bytes, more than the limit of "
                        + "\(core.configuration.maxDocumentBytes)"))
        }
        guard let id = core.register() else {
            return .failure(SandboxFailure(code: .unavailable, reason: "the worker pool is shut down"))
        }
        let request = ExtractionRequest(
            id: id, kind: kind, encoding: encoding, limits: limits ?? core.configuration.limits, document: document)
        let answer = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                core.submit(PoolCore.Job(request: request, deadline: deadline, continuation: continuation))
            }
        } onCancel: {
            core.cancel(id)
        }
        switch answer {
        case .success(let encoded):
            do {
                return .success(try GraphWire.decode(encoded.bytes))
            } catch {
                core.condemn(slot: encoded.slot, processID: encoded.processID)
                return .failure(
                    SandboxFailure(
                        code: .protocolError,
                        reason: "worker \(encoded.processID) broke the protocol: answered with a graph that does not "
                            + "decode (\(error)); it is replaced before its next document"))
            }
        case .failure(let failure):
            return .failure(failure)
        }
    }

    /// Stops taking documents, fails the queued ones (`sandbox.unavailable`), lets each worker
    /// finish the document in hand, then ends every worker and waits until all are reaped.
    package func shutdown() async {
        core.close()
        await core.stopped()
    }

    /// The slots and their workers, for metrics and tests.
    package var workers: [WorkerStatus] { core.statuses }
}

/// Runs `body` with a started pool and shuts the pool down afterwards, on every path.
package func withWorkerPool<Result>(
    configuration: WorkerPool.Configuration,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (WorkerPool) async throws -> Result
) async throws -> Result {
    let pool = try await WorkerPool(configuration: configuration)
    do {
        let result = try await body(pool)
        await pool.shutdown()
        return result
    } catch {
        await pool.shutdown()
        throw error
    }
}
