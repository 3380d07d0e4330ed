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
///
/// Woken at once by changes committed on this node (``ChangeSignal``); changes committed on other nodes are picked
/// up by a short poll (``Configuration/pollInterval``, one second).
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

    package init(
        store: any GatewayStore, transport: any WebhookTransport, configuration: Configuration, node: String,
        now: @escaping @Sendable () -> Date = { Date() }, metrics: GatewayMetrics? = nil, logger: Logger
    ) {
        self.store = store
        self.transport = transport
        self.configuration = configuration
        self.node = node
        self.now = now
        self.metrics = metrics
        self.logger = logger
    }

    package func run() async throws {
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
    }

    /// Dispatches while this node holds the lease, renewing it; returns when it is lost, or at shutdown once the
    /// attempts in flight have finished and been recorded.
    func dispatch() async {
        let state = DispatchState()
        let renewEvery = configuration.lease / 3
        var renewed = now()
        var lastFanOut = ContinuousClock.now - configuration.pollInterval
        var fannedOutGeneration = store.changeSignal.generation &- 1
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
                await record(state.takeCompleted(), state: state)
                if storeGeneration != fannedOutGeneration || ContinuousClock.now - lastFanOut >= configuration.pollInterval {
                    do {
                        while try await store.queueDeliveries(limit: configuration.fanOutBatch) > 0 {}
                        fannedOutGeneration = storeGeneration
                        lastFanOut = .now
                    } catch {
                        logger.warning("cannot queue webhook deliveries", metadata: ["error": "\(error)"])
                    }
                }
                let free = configuration.concurrency - state.inFlightCount
                if free > 0 {
                    do {
                        let due = try await store.dueDeliveries(at: now(), limit: configuration.concurrency * 2)
                        for delivery in state.claim(due, upTo: free) {
                            group.addTask {
                                let attempt = await self.attempt(delivery)
                                state.complete(attempt)
                            }
                        }
                    } catch {
                        logger.warning("cannot read due webhook deliveries", metadata: ["error": "\(error)"])
                    }
                }
                await Self.waitForAny(
                    [(state.wake, localGeneration), (store.changeSignal, storeGeneration)],
                    timeout: configuration.pollInterval)
            }
            // Let the attempts in flight finish (each is bounded by its time limit), then record them.
            while state.inFlightCount > 0 {
                let generation = state.wake.generation
                await record(state.takeCompleted(), state: state)
                if state.inFlightCount > 0 { await state.wake.wait(after: generation, timeout: .seconds(1)) }
            }
        }
        await record(state.takeCompleted(), state: state)
    }

    /// Records attempts in one transaction and frees their slots; on a store failure they stay in flight (not sent
    /// again) until it succeeds.
    func record(_ attempts: [DeliveryAttempt], state: DispatchState) async {
        guard !attempts.isEmpty else { return }
        do {
            try await store.recordDeliveryAttempts(attempts)
            state.release(attempts)
        } catch {
            logger.warning("cannot record webhook deliveries", metadata: ["error": "\(error)"])
            state.putBack(attempts)
        }
    }

    /// One attempt: the change as a CloudEvent, signed, POSTed; a 2xx is delivered, anything else is retried later
    /// or, past the retry period, dead.
    func attempt(_ due: DueDelivery) async -> DeliveryAttempt {
        let message = ChangeMessage(due.event)
        let started = now()
        let failure: (status: Int?, error: String)
        do {
            guard let url = URL(string: due.url) else {
                throw FetchError(code: .invalidURL, reason: "the subscription's URL cannot be read")
            }
            guard let secret = WebhookSecret(due.secret) else {
                throw FetchError(code: .invalidURL, reason: "the subscription's secret cannot be read")
            }
            let body = try message.encoded()
            let headers =
                [("Content-Type", ChangeMessage.mediaType)]
                + WebhookSignature.headers(
                    id: message.id, timestamp: Int64(started.timeIntervalSince1970), body: body, secret: secret)
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

/// What the dispatcher has in flight and what has come back, shared with its attempts.
final class DispatchState: Sendable {
    private struct State {
        var inFlight: Set<Int64> = []
        var completed: [DeliveryAttempt] = []
    }

    private let state = Mutex(State())
    /// Notified when an attempt completes.
    let wake = ChangeSignal()

    var inFlightCount: Int { state.withLock { $0.inFlight.count } }

    /// The deliveries of `due` not in flight yet, at most `limit`, now in flight.
    func claim(_ due: [DueDelivery], upTo limit: Int) -> [DueDelivery] {
        state.withLock { state in
            var claimed: [DueDelivery] = []
            for delivery in due where claimed.count < limit && !state.inFlight.contains(delivery.delivery.id) {
                state.inFlight.insert(delivery.delivery.id)
                claimed.append(delivery)
            }
            return claimed
        }
    }

    func complete(_ attempt: DeliveryAttempt) {
        state.withLock { $0.completed.append(attempt) }
        wake.notify()
    }

    func takeCompleted() -> [DeliveryAttempt] {
        state.withLock { state in
            defer { state.completed.removeAll() }
            return state.completed
        }
    }

    /// Recorded: their slots are free, and the store will hand out what follows them.
    func release(_ attempts: [DeliveryAttempt]) {
        state.withLock { state in for attempt in attempts { state.inFlight.remove(attempt.deliveryID) } }
    }

    /// Not recorded: kept to record again, still in flight.
    func putBack(_ attempts: [DeliveryAttempt]) {
        state.withLock { $0.completed.insert(contentsOf: attempts, at: 0) }
    }
}
