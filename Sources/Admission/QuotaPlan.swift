package import Foundation
package import Store

/// Which quota counters a submission charges under a policy (issue 15): one rule for every channel, applied by the
/// server against the store's counters (``QuotaStore``). Pure.
package struct QuotaPlan: Sendable {
    package var quotas: Policy.Quotas

    package init(quotas: Policy.Quotas) {
        self.quotas = quotas
    }

    /// True when the policy sets no quota at all: nothing to count, no store call to make.
    package var isUnlimited: Bool { quotas.domain.isUnlimited && quotas.owner.isUnlimited }

    /// The charges of one submission before it is decided: one message and its bytes, for its sender domain (when
    /// known) and each owner given; and a check (amount 0) that neither has used up its reservations.
    /// - Parameter owners: each owner's counter subject: its pseudonym (``OwnerPseudonym``), so that the counters
    ///   keep no address.
    package func intake(domain: String?, owners: [String], bytes: Int) -> [QuotaCharge] {
        var charges: [QuotaCharge] = []
        func add(_ scope: QuotaKey.Scope, _ subject: String, _ limits: Policy.QuotaLimits) {
            charges += [
                charge(scope, subject, .messages, 1, limits.messages),
                charge(scope, subject, .bytes, Int64(bytes), limits.bytes),
                charge(scope, subject, .reservations, 0, limits.reservations),
            ].compactMap { $0 }
        }
        if let domain { add(.domain, domain, quotas.domain) }
        for owner in Set(owners).sorted() { add(.owner, owner, quotas.owner) }
        return charges
    }

    /// The reservations a decided submission wrote, counted against its sender domain and each owner (never refused:
    /// the next submission waits instead).
    /// - Parameters:
    ///   - reservations: how many records it wrote (created, updated, cancelled), every owner's together.
    ///   - perOwner: how many of them each owner's were, by counter subject (its pseudonym).
    package func written(domain: String?, reservations: Int, perOwner: [String: Int]) -> [QuotaCharge] {
        var charges: [QuotaCharge] = []
        if let domain, reservations > 0, quotas.domain.reservations.limit > 0 {
            charges.append(uncapped(.domain, domain, Int64(reservations), quotas.domain.reservations))
        }
        if quotas.owner.reservations.limit > 0 {
            for (owner, count) in perOwner.sorted(by: { $0.key < $1.key }) where count > 0 {
                charges.append(uncapped(.owner, owner, Int64(count), quotas.owner.reservations))
            }
        }
        return charges
    }

    private func charge(
        _ scope: QuotaKey.Scope, _ subject: String, _ metric: QuotaKey.Metric, _ amount: Int64, _ limit: Policy.QuotaLimit
    ) -> QuotaCharge? {
        guard limit.limit > 0 else { return nil }
        return QuotaCharge(
            key: QuotaKey(scope: scope, subject: subject, metric: metric), amount: amount, limit: Int64(limit.limit),
            windowSeconds: Int64(limit.seconds))
    }

    private func uncapped(_ scope: QuotaKey.Scope, _ subject: String, _ amount: Int64, _ limit: Policy.QuotaLimit)
        -> QuotaCharge
    {
        QuotaCharge(
            key: QuotaKey(scope: scope, subject: subject, metric: .reservations), amount: amount, limit: 0,
            windowSeconds: Int64(limit.seconds))
    }

    /// What a scope has used of each quota the policy sets, for `gateway domains show` and the API.
    package func usage(scope: QuotaKey.Scope, subject: String, counters: [QuotaCounter], now: Date) -> [QuotaUsage] {
        let limits = scope == .domain ? quotas.domain : quotas.owner
        return [(QuotaKey.Metric.messages, limits.messages), (.reservations, limits.reservations), (.bytes, limits.bytes)]
            .filter { $0.1.limit > 0 }
            .map { metric, limit in
                let counter = counters.first { $0.key.metric == metric }
                let probe = QuotaCharge(
                    key: QuotaKey(scope: scope, subject: subject, metric: metric), amount: 0, limit: 0,
                    windowSeconds: Int64(limit.seconds))
                let current = (try? probe.applied(to: counter, at: now).get())?.used ?? 0
                let start = StoreTime.date(probe.windowStart(at: now))
                return QuotaUsage(
                    metric: metric, limit: Int64(limit.limit), windowSeconds: Int64(limit.seconds), used: current,
                    windowEnd: start.addingTimeInterval(limit.seconds))
            }
    }
}

/// One quota and how much of it the current window has used.
package struct QuotaUsage: Codable, Hashable, Sendable {
    package var metric: QuotaKey.Metric
    package var limit: Int64
    package var windowSeconds: Int64
    package var used: Int64
    /// When the current window ends (and the count starts again).
    package var windowEnd: Date
}
