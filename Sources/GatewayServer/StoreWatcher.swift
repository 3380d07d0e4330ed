import Foundation
package import Logging
internal import ServiceLifecycle
package import Store

/// Keeps this node's view of the shared store current (DESIGN.md, "Several nodes"): a registry, flag or token change
/// made through any node is in force here within a second, and an outage of the store is noticed within a few.
///
/// - **Notifications** (PostgreSQL LISTEN/NOTIFY on ``ChangeArea/notificationChannel``): a committed change of an area
///   drops this node's copies of it at once. After each (re)subscription it polls once before it trusts the
///   subscription, so a change committed while it was not listening is not missed.
/// - **Polling** the store's change generations: every `pollInterval` while no subscription is up (SQLite always;
///   PostgreSQL while it reconnects), every `pushedPollInterval` while one is. The read cache serves copies only within
///   a second of a confirming poll, or while subscribed (``StoreReadCache``).
/// - **Health**: each poll is also a probe, with a deadline of its own. While the store does not answer, the probes
///   back off from 0.2 s to 2 s (postgres-nio's pool reconnects by itself meanwhile) and ``StoreHealth`` says it is
///   down; the first answer says it is back.
package struct StoreWatcher: Service {
    let store: any GatewayStore
    /// nil: no read cache (only the health is watched).
    let cache: StoreReadCache?
    let health: StoreHealth
    let pollInterval: Duration
    var pushedPollInterval: Duration = .seconds(5)
    var probeTimeout: Duration = .seconds(2)
    let logger: Logger

    package init(
        store: any GatewayStore, cache: StoreReadCache?, health: StoreHealth, pollInterval: Duration = .milliseconds(500),
        logger: Logger
    ) {
        self.store = store
        self.cache = cache
        self.health = health
        self.pollInterval = pollInterval
        self.logger = logger
    }

    /// Watches until cancelled or graceful shutdown.
    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if cache != nil { group.addTask { await listen() } }
                group.addTask { await poll() }
                await group.waitForAll()
            }
        }
    }

    /// Polls the generations (and so probes the store) until cancelled.
    func poll() async {
        var backoff = Duration.milliseconds(200)
        while !Task.isCancelled {
            if await probe() {
                backoff = .milliseconds(200)
                let pushing = cache?.isPushing ?? false
                try? await Task.sleep(for: pushing ? pushedPollInterval : pollInterval)
            } else {
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(2))
            }
        }
    }

    /// One poll of the change generations, within the probe deadline. - Returns: whether the store answered.
    @discardableResult
    func probe() async -> Bool {
        let askedAt = ContinuousClock.now
        do {
            let generations = try await Self.within(probeTimeout) { try await store.changeGenerations() }
            cache?.observe(generations, askedAt: askedAt)
            if health.markAvailable() { logger.notice("the store answers again") }
            return true
        } catch is CancellationError {
            return false
        } catch {
            cache?.invalidateAll()
            if health.record(error) {
                logger.error("the store does not answer; LMTP answers 451 and the API 503 until it does", metadata: ["error": "\(error)"])
            } else if !StoreHealth.isOutage(error) {
                logger.warning("cannot read the store's change generations", metadata: ["error": "\(error)"])
            }
            return false
        }
    }

    /// Follows the store's change notifications until cancelled.
    func listen() async {
        guard let cache else { return }
        for await notification in store.notifications(channel: ChangeArea.notificationChannel) {
            switch notification {
            case .listening:
                // Anything committed before the subscription: one poll, then trust the notifications.
                if await probe() { cache.setPushing(true) }
                logger.debug("listening for the store's change notifications")
            case .interrupted:
                cache.setPushing(false)
                logger.debug("the store's change notifications were interrupted; polling until they are back")
            case .message(let payload):
                if let area = ChangeArea(rawValue: payload) {
                    cache.invalidate(area)
                } else {
                    for area in ChangeArea.allCases { cache.invalidate(area) }
                }
            }
        }
        cache.setPushing(false)
    }

    /// `body`'s result, or `store.unavailable` once `timeout` passes.
    static func within<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws
        -> T
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw StoreError(code: .unavailable, reason: "the store did not answer within \(timeout)")
            }
            return value
        }
    }
}
