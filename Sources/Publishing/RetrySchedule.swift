package import Foundation

/// When a failed webhook delivery is tried again: exponential backoff with jitter, for at least ``retryFor`` (24
/// hours by default) from its first attempt, then given up (dead). Counted from the first attempt, not from when it
/// was queued, so that a change that waited behind an earlier one of its reservation gets its own full period.
///
/// After the n-th failed attempt the wait is `initialInterval × 2^(n−1)`, at most ``maximumInterval``, of which a
/// random half is jitter ("equal jitter"): receivers that failed together do not all come back at once.
package struct RetrySchedule: Hashable, Sendable {
    package var initialInterval: TimeInterval = 5
    package var maximumInterval: TimeInterval = 3600
    package var retryFor: TimeInterval = 86_400

    package init() {}

    package init(initialInterval: TimeInterval, maximumInterval: TimeInterval, retryFor: TimeInterval) {
        self.initialInterval = initialInterval
        self.maximumInterval = maximumInterval
        self.retryFor = retryFor
    }

    /// The wait after the `attempts`-th failure, before jitter.
    package func interval(afterFailures attempts: Int) -> TimeInterval {
        let exponent = Double(min(max(attempts, 1) - 1, 62))
        return min(initialInterval * pow(2, exponent), maximumInterval)
    }

    /// When to try again after the `attempts`-th attempt failed at `now`, for a delivery first attempted at
    /// `firstAttempt`; nil when it has been retried long enough (dead).
    /// - Parameter random: A number in 0..<1 that places the attempt within the jitter.
    package func nextAttempt(afterFailures attempts: Int, firstAttempt: Date, now: Date, random: Double) -> Date? {
        guard now.timeIntervalSince(firstAttempt) < retryFor else { return nil }
        let interval = self.interval(afterFailures: attempts)
        return now.addingTimeInterval(interval / 2 + interval / 2 * min(max(random, 0), 1))
    }
}
