package import Foundation

/// The lifecycle rules of DESIGN.md "Identity and lifecycle", once, for every backend: given an incoming item and what
/// is stored at its key and in its container, ``plan(for:state:now:)`` returns the writes and the outcome. A backend
/// reads ``reads(for:)`` inside its write transaction, asks for the plan, and executes it in that transaction.
///
/// - The key is (owner, source domain, item reference). An unknown key is created (version 1).
/// - Versions are ordered by the sender's time (``SenderTime``): an older one arriving late is
///   ``LifecycleOutcome/stale`` and changes nothing; between equal times, or where a time is missing, arrival order
///   decides.
/// - The same content again changes nothing (``LifecycleOutcome/unchanged``); sent later, it only records the
///   newer sender time.
/// - Other content is written over the record (version + 1), the previous version kept in history.
/// - A cancelled status marks the record cancelled; records are never deleted. Reinstating a cancelled record
///   needs a provably newer version: resurrecting a cancelled booking is the worse mistake.
/// - A minimal cancellation cancels every item of its container reference, from its source domain, for its owner;
///   arriving before any of them, it is kept as a cancelled record of its own, and an item of that container that
///   is not provably newer is then stale.
/// - Every write a reader of the record can see (a creation, a new version) is followed by a change event in the
///   outbox, in the same plan: created, updated, or cancelled when the record became cancelled
///   (``LifecycleWrite/recordChange(key:kind:at:channel:)``). A newer sender time alone is not a change.
package enum ReservationLifecycle {
    /// What a backend must read before planning `incoming`.
    package static func reads(for incoming: IncomingReservation) -> LifecycleReads {
        LifecycleReads(
            owner: incoming.owner, sourceDomain: incoming.sourceDomain, itemReference: incoming.itemReference,
            containerReference: incoming.content.containerReference,
            wholeContainer: incoming.content.isMinimalCancellation)
    }

    /// The writes and the outcome for `incoming`.
    /// - Parameters:
    ///   - state: What the backend read for ``reads(for:)``, inside the transaction that will apply the plan.
    ///   - now: The store's clock: stamps creation, updates and cancellations.
    ///   - channel: How the item arrived, for the change events' provenance (nil for a direct `apply`).
    package static func plan(
        for incoming: IncomingReservation, state: LifecycleState, now: Date, channel: IngestionChannel? = nil
    ) -> LifecyclePlan {
        let now = StoreTime.truncated(now)
        let content = incoming.content
        if content.isMinimalCancellation, !state.container.isEmpty {
            return minimalCancellation(incoming, of: state.container, now: now, channel: channel)
        }
        // Nothing of this reservation yet: a minimal cancellation is kept at its own key, like any item.

        guard let current = state.current else {
            // A cancellation that arrived first wins over a confirmation that is not provably newer: mail is not
            // delivered in order.
            let cancellations = state.container.filter { $0.content.isMinimalCancellation && $0.content.status == .cancelled }
            if content.status != .cancelled,
                cancellations.contains(where: { !isNewer(content.senderTime, than: $0.content.senderTime) })
            {
                return LifecyclePlan(outcome: .stale)
            }
            let cancelled = content.status == .cancelled
            return LifecyclePlan(
                writes: [
                    .create(key: incoming.key, content: content, at: now, cancelledAt: cancelled ? now : nil),
                    .recordChange(key: incoming.key, kind: cancelled ? .cancelled : .created, at: now, channel: channel),
                ],
                outcome: cancelled ? .cancelled(count: 0) : .created)
        }

        if isOlder(content.senderTime, than: current.content.senderTime) { return LifecyclePlan(outcome: .stale) }
        if content.says(theSameAs: current.content) {
            guard let time = content.senderTime,
                current.content.senderTime.map({ time > $0 }) ?? true
            else { return LifecyclePlan(outcome: .unchanged) }
            return LifecyclePlan(writes: [.advanceSenderTime(recordID: current.id, to: time)], outcome: .unchanged)
        }
        if current.content.status == .cancelled, content.status != .cancelled,
            !isNewer(content.senderTime, than: current.content.senderTime)
        {
            return LifecyclePlan(outcome: .stale)
        }
        let cancelling = content.status == .cancelled
        let becomesCancelled = cancelling && current.content.status != .cancelled
        let next = current.version + 1
        return LifecyclePlan(
            writes: [
                .archive(recordID: current.id),
                .overwrite(
                    recordID: current.id, version: next, content: content, at: now,
                    cancelledAt: cancelling ? (current.cancelledAt ?? now) : nil),
                .recordChange(
                    key: incoming.key, kind: becomesCancelled ? .cancelled : .updated, at: now, channel: channel),
            ],
            outcome: becomesCancelled ? .cancelled(count: 1) : .updated(version: next))
    }

    /// A minimal cancellation over the records of its reservation: each live item not newer than the cancellation
    /// is marked cancelled (its payload kept; the status is what changes).
    static func minimalCancellation(
        _ incoming: IncomingReservation, of items: [StoredVersion], now: Date, channel: IngestionChannel?
    ) -> LifecyclePlan {
        let cancellation = incoming.content
        var writes: [LifecycleWrite] = []
        var cancelled = 0
        var stale = 0
        for item in items {
            if item.content.status == .cancelled { continue }
            if isOlder(cancellation.senderTime, than: item.content.senderTime) {
                stale += 1
                continue
            }
            var written = item.content
            written.status = .cancelled
            written.senderTime = cancellation.senderTime ?? item.content.senderTime
            written.flags = cancellation.flags
            written.source = cancellation.source
            let key = ReservationKey(
                owner: incoming.owner, sourceDomain: incoming.sourceDomain, itemReference: item.itemReference)
            writes += [
                .archive(recordID: item.id),
                .overwrite(recordID: item.id, version: item.version + 1, content: written, at: now, cancelledAt: now),
                .recordChange(key: key, kind: .cancelled, at: now, channel: channel),
            ]
            cancelled += 1
        }
        let outcome: LifecycleOutcome = cancelled > 0 ? .cancelled(count: cancelled) : stale > 0 ? .stale : .unchanged
        return LifecyclePlan(writes: writes, outcome: outcome)
    }

    /// True when both times are known and `time` is strictly earlier than `other`.
    static func isOlder(_ time: SenderTime?, than other: SenderTime?) -> Bool {
        guard let time, let other else { return false }
        return time < other
    }

    /// True when both times are known and `time` is strictly later than `other`.
    static func isNewer(_ time: SenderTime?, than other: SenderTime?) -> Bool {
        guard let time, let other else { return false }
        return time > other
    }
}
