package import Foundation

/// Counts what senders and owners send, cluster-wide, so that quotas hold across every node sharing the store
/// (issue 15): messages, reservations and bytes per sender domain and per owner, each in fixed windows.
///
/// The rule of a charge lives once, in ``QuotaCharge/applied(to:at:)``; each backend reads the counters a request
/// names inside one transaction (locked against every other node), applies it, and writes the counters only when no
/// charge was refused.
package protocol QuotaStore: Sendable {
    /// Adds each charge's amount to its counter's current window, all or nothing: when one charge would pass its
    /// limit, nothing is added and that refusal is returned.
    /// - Returns: nil when every charge was counted; otherwise the refusal with the longest wait.
    func chargeQuotas(_ charges: [QuotaCharge]) async throws -> QuotaRefusal?

    /// The counters of one scope and subject (a domain's, an owner's), whatever their window.
    func quotaCounters(scope: QuotaKey.Scope, subject: String) async throws -> [QuotaCounter]

    /// Removes counters whose window ended before `instant` (a periodic sweep keeps the table small).
    /// - Returns: How many were removed.
    func removeQuotaCounters(endedBefore instant: Date) async throws -> Int
}

/// Which counter: whose (a sender domain or an owner) and what it counts.
package struct QuotaKey: Hashable, Comparable, Sendable, Codable {
    package enum Scope: String, Codable, Hashable, Sendable, CaseIterable {
        /// A sender domain: its registration's domain, or the From domain's organizational domain.
        case domain
        /// An owner address (the LMTP recipient, an `owner` given).
        case owner
    }

    package enum Metric: String, Codable, Hashable, Sendable, CaseIterable {
        case messages, reservations, bytes
    }

    package var scope: Scope
    package var subject: String
    package var metric: Metric

    package init(scope: Scope, subject: String, metric: Metric) {
        self.scope = scope
        self.subject = subject
        self.metric = metric
    }

    package static func < (lhs: QuotaKey, rhs: QuotaKey) -> Bool {
        (lhs.scope.rawValue, lhs.subject, lhs.metric.rawValue) < (rhs.scope.rawValue, rhs.subject, rhs.metric.rawValue)
    }
}

/// One counter as stored: how much was used in the window that starts at ``windowStart``.
package struct QuotaCounter: Hashable, Sendable, Codable {
    package var key: QuotaKey
    package var windowStart: Date
    package var windowSeconds: Int64
    package var used: Int64

    package init(key: QuotaKey, windowStart: Date, windowSeconds: Int64, used: Int64) {
        self.key = key
        self.windowStart = windowStart
        self.windowSeconds = windowSeconds
        self.used = used
    }

    /// When the window ends.
    package var windowEnd: Date { windowStart.addingTimeInterval(TimeInterval(windowSeconds)) }
}

/// A charge against one counter: add ``amount`` unless the counter would pass ``limit`` in its window.
package struct QuotaCharge: Hashable, Sendable, Codable {
    package var key: QuotaKey
    /// What to add. Zero asks only whether the quota is used up already (a message's reservations are counted after it
    /// was decided, but a sender over its daily reservations waits before the next message).
    package var amount: Int64
    /// The most a window may hold; 0 counts without a limit.
    package var limit: Int64
    /// The window's length: windows are aligned to multiples of it since 1970.
    package var windowSeconds: Int64

    package init(key: QuotaKey, amount: Int64, limit: Int64, windowSeconds: Int64) {
        self.key = key
        self.amount = amount
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    /// The window `instant` falls in, in milliseconds since 1970.
    package func windowStart(at instant: Date) -> Int64 {
        let length = windowSeconds * 1000
        let now = StoreTime.milliseconds(instant)
        return now - ((now % length) + length) % length
    }

    /// The rule every backend applies, in one place: the counter after this charge at `instant` (a counter from an
    /// earlier window, or of another length, starts again at zero), or the refusal.
    ///
    /// A charge is refused when the limit is set and the counter would pass it; a first charge larger than the whole
    /// limit is allowed once per window (one message bigger than a byte quota must not wait forever). An amount of
    /// zero is refused when the counter has reached the limit.
    package func applied(to counter: QuotaCounter?, at instant: Date) -> Result<QuotaCounter, QuotaRefusal> {
        let start = windowStart(at: instant)
        var used: Int64 = 0
        if let counter, StoreTime.milliseconds(counter.windowStart) == start, counter.windowSeconds == windowSeconds {
            used = counter.used
        }
        let over = amount == 0 ? used >= limit : used > 0 && used.addingReportingOverflow(amount).partialValue > limit
        if limit > 0 && over {
            let end = start + windowSeconds * 1000
            let wait = max(1, Int64((Double(end - StoreTime.milliseconds(instant)) / 1000).rounded(.up)))
            return .failure(QuotaRefusal(key: key, limit: limit, used: used, windowSeconds: windowSeconds, retryAfterSeconds: wait))
        }
        let (sum, overflow) = used.addingReportingOverflow(amount)
        return .success(
            QuotaCounter(
                key: key, windowStart: StoreTime.date(start), windowSeconds: windowSeconds,
                used: overflow ? Int64.max : sum))
    }
}

/// A charge that would pass its quota: which counter, how far it is, and how long until its window ends.
package struct QuotaRefusal: Hashable, Sendable, Codable, Error {
    package var key: QuotaKey
    package var limit: Int64
    package var used: Int64
    package var windowSeconds: Int64
    /// Seconds until the window ends (at least 1): when asking again may succeed.
    package var retryAfterSeconds: Int64

    package init(key: QuotaKey, limit: Int64, used: Int64, windowSeconds: Int64, retryAfterSeconds: Int64) {
        self.key = key
        self.limit = limit
        self.used = used
        self.windowSeconds = windowSeconds
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The stable code: `quota.domain-messages`, `quota.owner-bytes`, ...
    package var code: String { "quota.\(key.scope.rawValue)-\(key.metric.rawValue)" }

    /// What happened and what to do (the subject is named only for a domain: an owner's address stays out of replies).
    package var reason: String {
        let whose = key.scope == .domain ? key.subject : "this recipient"
        return "\(whose) is over its quota of \(limit) \(key.metric.rawValue) per \(windowSeconds) s; "
            + "try again in \(retryAfterSeconds) s"
    }
}

extension Array where Element == QuotaCharge {
    /// Applies every charge at `instant` to `counters` (those of the charges' keys), the way each backend does: the
    /// counters to write, or the refusal with the longest wait. Charges of one key add up, in order.
    package func applied(to counters: [QuotaKey: QuotaCounter], at instant: Date) -> Result<[QuotaCounter], QuotaRefusal>
    {
        var current = counters
        var refusals: [QuotaRefusal] = []
        for charge in self {
            switch charge.applied(to: current[charge.key], at: instant) {
            case .success(let counter): current[charge.key] = counter
            case .failure(let refusal): refusals.append(refusal)
            }
        }
        if let longest = refusals.max(by: { $0.retryAfterSeconds < $1.retryAfterSeconds }) { return .failure(longest) }
        return .success(Set(map(\.key)).sorted().compactMap { current[$0] })
    }
}
