package import Foundation

/// Leases that make periodic jobs and single dispatchers run on one node of a cluster at a time (DESIGN.md, "Several
/// nodes"): every node sharing the store asks for a job's lease, and only the holder runs it. Nothing is coordinated
/// through a node's memory: a node that dies leaves its lease to expire, and another node takes the job over.
///
/// A lease is `name` held by `holder` until an instant. Two uses:
/// - **A job due every interval** (a daily re-check, a retention sweep): ``acquireLease(_:holder:for:ifLastStartedBefore:)``
///   with `ifLastStartedBefore` = now − interval is granted to one node once per interval across the cluster, however
///   many nodes ask; the holder runs the job, then ``releaseLease(_:holder:)``.
/// - **A singleton that runs continuously** (a webhook dispatcher): acquire with `ifLastStartedBefore` nil, and call
///   again before the lease ends to renew it; while it holds, every other node is refused.
package protocol JobLeaseStore: Sendable {
    /// Grants lease `name` to `holder` until now + `duration` (the store's clock) when it is free, expired, or already
    /// `holder`'s, and, when `ifLastStartedBefore` is given, only if the job was last started at or before that instant
    /// (or never). A grant records now as the job's last start, unless `holder` is renewing a lease it holds.
    /// - Returns: Whether `holder` holds the lease now.
    func acquireLease(_ name: String, holder: String, for duration: TimeInterval, ifLastStartedBefore: Date?)
        async throws -> Bool

    /// Ends `holder`'s lease on `name` now (the job is done); a lease another holder took meanwhile is left alone.
    func releaseLease(_ name: String, holder: String) async throws

    /// Every lease ever granted, by name: who holds or last held it, until when, and when the job last started.
    func leases() async throws -> [JobLease]
}

/// One job's lease as stored (``JobLeaseStore``).
package struct JobLease: Codable, Hashable, Sendable {
    package var name: String
    /// The node that holds it, or last held it.
    package var holder: String
    /// The lease ends at this instant; before it, only ``holder`` runs the job.
    package var leasedUntil: Date
    /// When a holder last acquired it (not when it renewed it).
    package var lastStartedAt: Date

    package init(name: String, holder: String, leasedUntil: Date, lastStartedAt: Date) {
        self.name = name
        self.holder = holder
        self.leasedUntil = leasedUntil
        self.lastStartedAt = lastStartedAt
    }

    /// The rule every backend applies, in one place: whether `holder` may take this lease at `now`.
    /// - Returns: nil when refused; otherwise the lease as it is to be written.
    package func granted(to holder: String, at now: Date, for duration: TimeInterval, ifLastStartedBefore: Date?)
        -> JobLease?
    {
        let renewing = self.holder == holder && leasedUntil > now
        guard renewing || leasedUntil <= now else { return nil }
        if !renewing, let due = ifLastStartedBefore, lastStartedAt > due { return nil }
        return JobLease(
            name: name, holder: holder, leasedUntil: now.addingTimeInterval(duration),
            lastStartedAt: renewing ? lastStartedAt : now)
    }
}
