package import Foundation
import Store
import Synchronization

/// Whether the store answers, as this node last saw it (DESIGN.md, "Several nodes": when the database is unavailable,
/// LMTP answers 451 and HTTP 503, and the client retries). The store watcher probes it (``StoreWatcher``); a store
/// call that finds it unreachable says so too. While it is down, LMTP answers 451 at MAIL FROM and the HTTP API 503
/// with Retry-After at once, instead of each request waiting for the store's own timeout; `/healthz` says so and
/// `/readyz` answers 503.
package final class StoreHealth: Sendable {
    /// What `/healthz` shows.
    package struct Snapshot: Sendable, Hashable {
        package var isAvailable: Bool
        /// Since when it has been unavailable.
        package var since: Date?
        /// The error that made it so (a store error's code and reason: never a password, never SQL).
        package var problem: String?
    }

    private let state = Mutex(Snapshot(isAvailable: true, since: nil, problem: nil))
    private let now: @Sendable () -> Date

    package init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    package var isAvailable: Bool { state.withLock { $0.isAvailable } }
    package var snapshot: Snapshot { state.withLock { $0 } }

    /// Records that the store answered. - Returns: whether it had been unavailable (it recovered now).
    @discardableResult
    package func markAvailable() -> Bool {
        state.withLock { state in
            defer { state = Snapshot(isAvailable: true, since: nil, problem: nil) }
            return !state.isAvailable
        }
    }

    /// Records `error` when it says the store cannot be reached (``isOutage(_:)``). - Returns: whether the store had
    /// been available until now (the outage begins).
    @discardableResult
    package func record(_ error: any Error) -> Bool {
        guard Self.isOutage(error) else { return false }
        let instant = now()
        return state.withLock { state in
            let began = state.isAvailable
            state.isAvailable = false
            state.since = state.since ?? instant
            state.problem = "\(error)"
            return began
        }
    }

    /// Whether `error` means the store cannot be reached now (rather than refusing this one request).
    package static func isOutage(_ error: any Error) -> Bool {
        (error as? StoreError)?.code == .unavailable
    }
}
