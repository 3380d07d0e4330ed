package import Foundation
package import Logging
package import Publishing
import ServiceLifecycle
package import Store
package import WebFetch
import Synchronization

/// Sends a webhook delivery: WebFetch's POST in production, with its address guard, trust store and limits.
package protocol WebhookTransport: Sendable {
    func post(_ url: URL, body: [UInt8], headers: [(String, String)]) async throws(FetchError) -> PageFetcher.PostResponse
    /// Closes what the transport keeps open between deliveries; called once, when the dispatcher stops.
    func closeConnections() async
}

extension WebhookTransport {
    package func closeConnections() async {}
}

extension PageFetcher: WebhookTransport {}

/// The cluster's one webhook dispatcher (DESIGN.md, "Publishing changes"): on the node that holds the
/// `webhook-dispatcher` lease (``JobLeaseStore``, renewed while it runs), it queues the outbox's new changes for each
/// subscription that covers them, sends the due deliveries, and records what each attempt came to.
///
/// - Reliable: the queue is read from the outbox, which is written with the change, and a delivery is marked done
///   only after the receiver's 2xx; a node killed meanwhile leaves its lease to expire and another node (or itself,
///   restarted) sends what is pending again. Receivers drop duplicates by `webhook-id`.
/// - In order per reservation: the store hands out only the oldest pending delivery of each reservation for each
///   subscription; the next one waits until it is delivered or dead.
/// - Retries with exponential backoff and jitter (``RetrySchedule``), for 24 hours by default, then dead.
/// - A slow receiver holds one of ``Configuration/concurrency`` slots for at most the attempt's time limit and never
///   a store writer: ingestion does not wait for deliveries.
/// - Few store writes: while deliveries are under way, what they came to is recorded and the outbox's new changes are
///   queued together, in one transaction at most every ``Configuration/batchInterval`` (sooner when
///   ``Configuration/recordBatch`` attempts wait); a slot is free again as soon as its attempt is back, and the due
///   deliveries are read ``Configuration/dueBatch`` at a time. A delivery is not handed out again while its attempt
///   is unrecorded, and a reservation's next change is due only once the previous one is recorded.
///
/// Woken at once by changes committed on this node (``ChangeSignal``); changes committed on other nodes are picked
/// up by a short poll (``Configuration/pollInterval``, one second).
///
/// Where the work runs: given `executors` (`gateway serve` gives it the loops of a ``BackgroundEventLoops`` group,
/// `webhook-threads` of them at `webhook-priority`), the loop and its senders run there, and so do the transport's
/// connections when it is made on the same group: making each change's event, signing it, TLS and HTTP. On a busy
/// machine ingestion then gets the CPU first and deliveries wait for what it leaves; on an idle one they run at once.
package struct WebhookDispatcher: Service {
    package struct Configuration: Sendable {
        package var schedule = RetrySchedule()
        /// Attempts in flight at once.
        package var concurrency = 16
        /// How often the store is asked anyway (changes of other nodes, retries falling due).
        package var pollInterval: Duration = .seconds(1)
        /// How long the lease lasts; it is renewed at a third of that.
        package var lease: TimeInterval = 30
        /// Changes queued per store transaction at most.
        package var fanOutBatch = 1000
        /// While there is something to record or queue, the store is written at most this often: one transaction
        /// for everything that came back and everything committed meanwhile. It bounds the delay a change waits to
        /// be queued.
        package var batchInterval: Duration = .milliseconds(50)
        /// Attempts that are written at once, without waiting for the batch interval.
        package var recordBatch = 500
        /// Due deliveries read at once.
        package var dueBatch = 256

        package init() {}
    }

    /// The lease's name, the same on every node.
    package static let leaseName = "webhook-dispatcher"

    let store: any GatewayStore
    let transport: any WebhookTransport
    let configuration: Configuration
    /// This node's name in the leases.
    let node: String
    let now: @Sendable () -> Date
    let metrics: GatewayMetrics?
    let logger: Logger
    /// Where the dispatcher and its senders run (the senders take them in turn); empty: wherever Swift runs tasks.
    let executors: [any TaskExecutor]
    /// While the machine is busy, senders wait for it before each attempt; nil: never.
    let pacing: DeliveryPacing?

    package init(
        store: any GatewayStore, transport: any WebhookTransport, configuration: Configuration, node: String,
        now: @escaping @Sendable () -> Date = { Date() }, metrics: GatewayMetrics? = nil,
        executors: [any TaskExecutor] = [], pacing: DeliveryPacing? = nil, logger: Logger
    ) {
        self.store = store
        self.transport = transport
        self.configuration = configuration
        self.node = node
        self.now = now
        self.metrics = metrics
        self.executors = executors
        self.pacing = pacing
        self.logger = logger
    }

    package func run() async throws {
        try await withTaskExecutorPreference(executors.first) { try await lead() }
    }

    /// The lease loop: dispatches while this node holds the lease.
    private func lead() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let held: Bool
            do {
                held = try await store.acquireLease(
                    Self.leaseName, holder: node, for: configuration.lease, ifLastStartedBefore: nil)
            } catch {
                logger.warning("cannot ask for the webhook dispatcher's lease", metadata: ["error": "\(error)"])
                held = false
            }
            if held {
                await dispatch()
            } else {
                // Another node dispatches; ask again in a while (its lease expires if it dies).
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(self.configuration.lease / 6)) }
            }
        }
        try? await store.releaseLease(Self.leaseName, holder: node)
        await transport.closeConnections()
    }

    /// Dispatches while this node holds the lease, renewing it; returns when it is lost, or at shutdown once the
    /// attempts in flight have finished and been recorded.
    ///
    /// The loop writes and reads the store once per batch and hands the due deliveries to up to
    /// ``Configuration/concurrency`` senders, which take one after another until none is left: an attempt that comes
    /// back does not wake the loop (only a full batch of them, or senders that ran out of work, do).
    func dispatch() async {
        let state = DispatchState(recordBatch: configuration.recordBatch)
        let renewEvery = configuration.lease / 3
        var renewed = now()
        var lastWrite = ContinuousClock.now - configuration.pollInterval
        var lastRead = lastWrite
        var queuedGeneration = store.changeSignal.generation &- 1
        var readNeeded = true
        var senders = 0
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let localGeneration = state.wake.generation
                let storeGeneration = store.changeSignal.generation
                if now().timeIntervalSince(renewed) >= renewEvery {
                    let kept = (try? await store.acquireLease(
                        Self.leaseName, holder: node, for: configuration.lease, ifLastStartedBefore: nil)) ?? false
                    guard kept else {
                        logger.warning("the webhook dispatcher's lease was lost; another node takes over")
                        break
                    }
                    renewed = now()
                }
                let sinceWrite = ContinuousClock.now - lastWrite
                let unrecorded = state.completedCount
                if sinceWrite >= configuration.pollInterval || unrecorded >= configuration.recordBatch
                    || ((unrecorded > 0 || storeGeneration != queuedGeneration)
                        && sinceWrite >= configuration.batchInterval)
                {
                    if await write(state) { queuedGeneration = storeGeneration }
                    lastWrite = .now
                    readNeeded = true
                }
                if state.queuedCount < configuration.concurrency
                    && (readNeeded || ContinuousClock.now - lastRead >= configuration.pollInterval)
                {
                    do {
                        // What was read before and not started is read again with what is due now, in order.
                        state.offer(try await store.dueDeliveries(at: now(), limit: configuration.dueBatch))
                    } catch {
                        logger.warning("cannot read due webhook deliveries", metadata: ["error": "\(error)"])
                    }
                    lastRead = .now
                    readNeeded = false
                }
                for _ in 0..<state.addSenders(upTo: configuration.concurrency) {
                    senders &+= 1
                    let executor = executors.isEmpty ? nil : executors[senders % executors.count]
                    group.addTask(executorPreference: executor) {
                        while await self.paced(state), let delivery = state.next() {
                            state.complete(await self.attempt(delivery, state: state))
                        }
                    }
                }
                // Wait for a full batch of attempts or senders out of work, a commit (unless one is waiting to be
                // queued already), or the time of the next write.
                var signals = [(state.wake, localGeneration)]
                if storeGeneration == queuedGeneration { signals.append((store.changeSignal, storeGeneration)) }
                let pending = state.completedCount > 0 || storeGeneration != queuedGeneration
                let interval = pending ? configuration.batchInterval : configuration.pollInterval
                let untilWrite = interval - (ContinuousClock.now - lastWrite)
                await Self.waitForAny(signals, timeout: max(untilWrite, .milliseconds(1)))
            }
            // The senders finish the attempts under way (each bounded by its time limit) and start no more.
            state.stop()
        }
        // What is not recorded by now is sent again by the next dispatcher (at least once).
        for _ in 0..<3 where state.completedCount > 0 {
            if await write(state, queueing: false) { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Waits while ``pacing`` says the machine is busy and the deliveries have used their share of it.
    /// - Returns: false when the dispatcher stopped or the task was cancelled meanwhile.
    func paced(_ state: DispatchState) async -> Bool {
        guard let pacing else { return true }
        while !state.isStopped {
            let wait = pacing.delay()
            guard wait > .zero else { return true }
            metrics?.recordDeliveryPause(wait)
            do { try await Task.sleep(for: wait) } catch { return false }
        }
        return false
    }

    /// Records the attempts that came back and queues the outbox's new changes, in one transaction (and more for a
    /// backlog of changes larger than ``Configuration/fanOutBatch``). On a store failure the attempts stay
    /// unrecorded (not handed out again) until a later write succeeds.
    /// - Returns: whether it was written.
    func write(_ state: DispatchState, queueing: Bool = true) async -> Bool {
        let attempts = state.takeCompleted()
        let batch = queueing ? configuration.fanOutBatch : 0
        do {
            var read = try await store.recordDeliveryAttempts(attempts, queueingChanges: batch)
            state.release(attempts)
            while queueing && read >= batch { read = try await store.queueDeliveries(limit: batch) }
            return true
        } catch {
            if state.isUnreleased(attempts) { state.putBack(attempts) }
            logger.warning("cannot record or queue webhook deliveries", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// One attempt: the change as a CloudEvent, signed, POSTed; a 2xx is delivered, anything else is retried later
    /// or, past the retry period, dead.
    func attempt(_ due: DueDelivery, state: DispatchState? = nil) async -> DeliveryAttempt {
        let started = now()
        let failure: (status: Int?, error: String)
        do {
            guard let url = URL(string: due.url) else {
                throw FetchError(code: .invalidURL, reason: "the subscription's URL cannot be read")
            }
            guard let secret = WebhookSecret(due.secret) else {
                throw FetchError(code: .invalidURL, reason: "the subscription's secret cannot be read")
            }
            // The same change goes to every subscription that covers it: made once.
            let (id, body) = try state?.message(for: due.event) ?? DispatchState.encode(due.event)
            let headers =
                [("Content-Type", ChangeMessage.mediaType)]
                + WebhookSignature.headers(
                    id: id, timestamp: Int64(started.timeIntervalSince1970), body: body, secret: secret)
            let response = try await transport.post(url, body: body, headers: headers)
            if response.isSuccess {
                let answered = now()
                metrics?.recordDelivery(
                    result: "delivered",
                    sinceChange: .milliseconds(Int64(answered.timeIntervalSince(due.event.recordedAt) * 1000)))
                return DeliveryAttempt(
                    deliveryID: due.delivery.id, state: .delivered, status: response.statusCode, at: answered)
            }
            failure = (
                response.statusCode,
                "webhook.http-status: \(url.host() ?? "the receiver") answered \(response.statusCode); only a 2xx counts"
            )
        } catch let error as FetchError {
            failure = (nil, "\(error.code): \(error.reason)")
        } catch {
            failure = (nil, "webhook.encoding-failed: the change could not be encoded (\(type(of: error)))")
        }
        let at = now()
        let next = configuration.schedule.nextAttempt(
            afterFailures: due.delivery.attempts + 1, firstAttempt: due.delivery.firstAttemptAt ?? started, now: at,
            random: Double.random(in: 0..<1))
        metrics?.recordDelivery(result: next == nil ? "dead" : "retry", sinceChange: nil)
        if next == nil {
            logger.warning(
                "a webhook delivery is dead: retried for the whole retry period",
                metadata: ["delivery": "\(due.delivery.id)", "webhook": "\(due.delivery.webhookID)"])
        }
        return DeliveryAttempt(
            deliveryID: due.delivery.id, state: next == nil ? .dead : .pending, nextAttemptAt: next,
            status: failure.status, error: String(failure.error.prefix(1000)), at: at)
    }

    /// Returns when any of `signals` moves past its generation, or after `timeout`.
    static func waitForAny(_ signals: [(ChangeSignal, UInt64)], timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            for (signal, generation) in signals {
                group.addTask { await signal.wait(after: generation, timeout: timeout) }
            }
            await group.next()
            group.cancelAll()
        }
    }
}

/// What the dispatcher has in flight and what has come back, shared with its senders.
final class DispatchState: Sendable {
    private struct State {
        /// Deliveries being attempted or whose attempt is not recorded yet: not handed out again.
        var tracked: Set<Int64> = []
        /// Due deliveries not started yet, the next one last.
        var queue: [DueDelivery] = []
        /// Senders running, and attempts under way.
        var senders = 0
        var sending = 0
        var completed: [DeliveryAttempt] = []
        var stopped = false
        /// Encoded changes by position, for the other subscriptions that get the same change.
        var messages: [Int64: (id: String, body: [UInt8])] = [:]
    }

    /// Encoded changes kept at most; the cache starts over when full.
    static let messageCacheSize = 4096

    private let state = Mutex(State())
    private let recordBatch: Int
    /// Notified when a batch of attempts is back to be recorded, or when the senders ran out of work.
    let wake = ChangeSignal()

    init(recordBatch: Int) { self.recordBatch = recordBatch }

    var sendingCount: Int { state.withLock { $0.sending } }
    var isStopped: Bool { state.withLock { $0.stopped } }
    var completedCount: Int { state.withLock { $0.completed.count } }
    var queuedCount: Int { state.withLock { $0.queue.count } }

    /// Replaces the deliveries waiting to start with those of `due` (in its order) that are neither under way nor
    /// waiting to be recorded.
    func offer(_ due: [DueDelivery]) {
        state.withLock { state in
            guard !state.stopped else { return }
            state.queue = due.reversed().filter { !state.tracked.contains($0.delivery.id) }
        }
    }

    /// How many senders to start so that there are as many as there is work for, at most `limit`.
    func addSenders(upTo limit: Int) -> Int {
        state.withLock { state in
            let added = max(0, min(limit - state.senders, state.queue.count))
            state.senders += added
            return added
        }
    }

    /// The next delivery for a sender, now under way; nil when there is none (the sender ends).
    func next() -> DueDelivery? {
        let (next, dry) = state.withLock { state -> (DueDelivery?, Bool) in
            while let delivery = state.queue.popLast() {
                if state.tracked.insert(delivery.delivery.id).inserted {
                    state.sending += 1
                    return (delivery, false)
                }
            }
            state.senders -= 1
            return (nil, state.senders == 0)
        }
        if dry { wake.notify() }
        return next
    }

    /// Starts nothing more: the senders end after their attempts under way.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.queue.removeAll()
        }
    }

    func complete(_ attempt: DeliveryAttempt) {
        let full = state.withLock { state -> Bool in
            state.completed.append(attempt)
            state.sending -= 1
            return state.completed.count == recordBatch
        }
        if full { wake.notify() }
    }

    func takeCompleted() -> [DeliveryAttempt] {
        state.withLock { state in
            defer { state.completed.removeAll() }
            return state.completed
        }
    }

    /// Recorded: the store hands out what follows them.
    func release(_ attempts: [DeliveryAttempt]) {
        state.withLock { state in for attempt in attempts { state.tracked.remove(attempt.deliveryID) } }
    }

    /// Whether `attempts` are still tracked (not recorded).
    func isUnreleased(_ attempts: [DeliveryAttempt]) -> Bool {
        state.withLock { state in attempts.allSatisfy { state.tracked.contains($0.deliveryID) } }
    }

    /// Not recorded: kept to record again, still tracked.
    func putBack(_ attempts: [DeliveryAttempt]) {
        state.withLock { $0.completed.insert(contentsOf: attempts, at: 0) }
    }

    /// The CloudEvent of `event`, encoded once for all its deliveries.
    func message(for event: ChangeEvent) throws -> (id: String, body: [UInt8]) {
        if let made = state.withLock({ $0.messages[event.position] }) { return made }
        let made = try Self.encode(event)
        state.withLock { state in
            if state.messages.count >= Self.messageCacheSize { state.messages.removeAll(keepingCapacity: true) }
            state.messages[event.position] = made
        }
        return made
    }

    static func encode(_ event: ChangeEvent) throws -> (id: String, body: [UInt8]) {
        let message = ChangeMessage(event)
        return (message.id, try message.encoded())
    }
}
