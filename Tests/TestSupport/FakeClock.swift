import Synchronization

/// A clock that only moves when a test moves it, for `CachingResolver(now:)` and other TTL logic.
package final class FakeClock: Sendable {
    private let current: Mutex<ContinuousClock.Instant>

    package init(start: ContinuousClock.Instant = ContinuousClock.now) {
        current = Mutex(start)
    }

    package var now: ContinuousClock.Instant { current.withLock { $0 } }

    package func advance(by duration: Duration) {
        current.withLock { $0 = $0.advanced(by: duration) }
    }

    /// The closure `CachingResolver` takes.
    package var nowFunction: @Sendable () -> ContinuousClock.Instant { { self.now } }
}
