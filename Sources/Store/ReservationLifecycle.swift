package import Foundation
import Reservations

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
///
/// The owner decides (issue 16, ``Consent``):
/// - A new record is `suggested`, or `accepted` when the owner trusts its sender domain, unless the name on the
///   booking is clearly not the owner's (``OwnerName``): then it stays `suggested`, with that reason.
/// - Nothing new from a sender the owner blocked is stored (``LifecycleOutcome/blocked``); a cancellation of what is
///   already stored still is, so that no calendar keeps showing a cancelled booking.
/// - A declined record takes no update (``LifecycleOutcome/declined``) but its cancellation.
/// - An update leaves the consent as it is.
/// - An item with no record at its key is the record of the same part (kind, part key and passenger) stored under
///   another item reference of its booking, when exactly one is: a one-part document names a part by the booking
///   number, a document of several parts by longer references, and the part is one reservation either way.
/// - A confirmation from a document that evidently lists the whole booking (``IncomingReservation/bookingParts``)
///   supersedes the booking's live records it no longer lists (a passenger moved to another flight): each is marked
///   cancelled in the same plan, reported as ``LifecyclePlan/superseded``, unless it is newer than the confirmation.
///   A cancellation never supersedes: a notice that one part is cancelled says nothing about the others.
/// - Every write a reader of the record can see (a creation, a new version) is followed by a change event in the
///   outbox, in the same plan: created, updated, or cancelled when the record became cancelled
///   (``LifecycleWrite/recordChange(key:kind:at:channel:)``). A newer sender time alone is not a change.
package enum ReservationLifecycle {
    /// What a backend must read before planning `incoming`.
    package static func reads(for incoming: IncomingReservation) -> LifecycleReads {
        LifecycleReads(
            owner: incoming.owner, sourceDomain: incoming.sourceDomain, itemReference: incoming.itemReference,
            containerReference: incoming.content.containerReference,
            wholeContainer: incoming.content.isMinimalCancellation || supersedes(incoming)
                // A one-part document's item (its item reference is the booking number) may be a part stored under
                // a longer reference: the booking's records are read to find it.
                || (incoming.part != nil && incoming.itemReference == incoming.content.containerReference),
            ownerNames: incoming.underName != nil)
    }

    /// The writes and the outcome for `incoming`.
    /// - Parameters:
    ///   - state: What the backend read for ``reads(for:)``, inside the transaction that will apply the plan.
    ///   - now: The store's clock: stamps creation, updates and cancellations.
    ///   - channel: How the item arrived, for the change events' provenance (nil for a direct `apply`).
    package static func plan(
        for incoming: IncomingReservation, state: LifecycleState, now: Date, channel: IngestionChannel? = nil
    ) -> LifecyclePlan {
        // The same part under another item reference (a one-leg reminder for a leg a two-leg confirmation stored, or
        // the reverse): the update is that record's.
        var incoming = incoming
        var state = state
        if state.current == nil, let part = incoming.part, let record = record(of: part, in: state.container) {
            incoming.key.itemReference = record.itemReference
            state.current = record
        }
        var plan = itemPlan(for: incoming, state: state, now: now, channel: channel)
        // A blocked sender's confirmation changes nothing stored for this owner, not even by superseding.
        if supersedes(incoming), plan.outcome != .stale, plan.outcome != .blocked, let parts = incoming.bookingParts {
            supersede(notIn: parts, by: incoming, of: state.container, now: StoreTime.truncated(now), channel: channel, into: &plan)
        }
        return plan
    }

    /// The one record of `records` that is `part` (its kind, part key and passenger, read from its payload), or nil
    /// when none or several are.
    static func record(of part: PartIdentity, in records: [StoredVersion]) -> StoredVersion? {
        let matches = records.filter {
            !$0.content.isMinimalCancellation && $0.content.kind == part.kind && Self.part(of: $0) == part
        }
        return matches.count == 1 ? matches[0] : nil
    }

    /// The part a stored record is, from its payload (nil when the payload cannot be read or tells no part apart).
    static func part(of record: StoredVersion) -> PartIdentity? {
        StoredPayload.reservation(stored: record.content.payload).flatMap { PartIdentity($0) }
    }

    /// Whether `incoming` may supersede parts of its booking: a confirmation (not a cancellation) from a document that
    /// lists the whole booking.
    static func supersedes(_ incoming: IncomingReservation) -> Bool {
        incoming.bookingParts != nil && incoming.content.status != .cancelled && !incoming.content.isMinimalCancellation
    }

    /// Marks cancelled each live record of the booking that `parts` does not list, for one of the passengers it
    /// lists, and that is not newer than `incoming` (its payload kept; the status is what changes, as for a minimal
    /// cancellation). A record whose payload cannot be read is left alone.
    static func supersede(
        notIn parts: BookingParts, by incoming: IncomingReservation, of records: [StoredVersion], now: Date,
        channel: IngestionChannel?, into plan: inout LifecyclePlan
    ) {
        let confirmation = incoming.content
        // Usually every record of the booking is listed (the same confirmation again): then nothing is hashed.
        guard records.contains(where: { record in !parts.itemReferences.contains(record.itemReference) }) else { return }
        let listed = Set(parts.itemReferences)
        let listedParts = Set(parts.parts)
        let passengers = Set(parts.passengers)
        for record in records {
            guard !listed.contains(record.itemReference), record.itemReference != incoming.itemReference,
                !record.content.isMinimalCancellation, record.content.status != .cancelled,
                !isOlder(confirmation.senderTime, than: record.content.senderTime),
                let reservation = StoredPayload.reservation(stored: record.content.payload),
                passengers.contains(reservation.passengerKey),
                PartIdentity(reservation).map({ !listedParts.contains($0) }) ?? true
            else { continue }
            var written = record.content
            written.status = .cancelled
            written.senderTime = confirmation.senderTime ?? record.content.senderTime
            written.flags = confirmation.flags
            written.source = confirmation.source
            written.provenance = confirmation.provenance
            let key = ReservationKey(
                owner: incoming.owner, sourceDomain: incoming.sourceDomain, itemReference: record.itemReference)
            plan.writes += [
                .archive(recordID: record.id),
                .overwrite(recordID: record.id, version: record.version + 1, content: written, at: now, cancelledAt: now),
                .recordChange(key: key, kind: .cancelled, at: now, channel: channel),
            ]
            plan.superseded.append(record.itemReference)
        }
    }

    /// The writes and the outcome for `incoming` itself.
    static func itemPlan(
        for incoming: IncomingReservation, state: LifecycleState, now: Date, channel: IngestionChannel?
    ) -> LifecyclePlan {
        let now = StoreTime.truncated(now)
        let content = incoming.content
        if content.isMinimalCancellation, !state.container.isEmpty {
            return minimalCancellation(incoming, of: state.container, now: now, channel: channel)
        }
        // Nothing of this reservation yet: a minimal cancellation is kept at its own key, like any item.

        guard let current = state.current else {
            // A blocked sender stores nothing new for this owner, not even a cancellation kept for later.
            if state.owner.senderDecision == .block { return LifecyclePlan(outcome: .blocked) }
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
                    .create(
                        key: incoming.key, content: content, at: now, cancelledAt: cancelled ? now : nil,
                        consent: consent(for: incoming, owner: state.owner, now: now)),
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
        // The owner said no (to this reservation, or to its sender): only a cancellation is still recorded.
        if content.status != .cancelled {
            if current.consent == .declined { return LifecyclePlan(outcome: .declined) }
            if state.owner.senderDecision == .block { return LifecyclePlan(outcome: .blocked) }
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
            written.provenance = cancellation.provenance
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

    /// A new record's consent: accepted when the owner trusts the sender, unless the booking is clearly under someone
    /// else's name; suggested otherwise.
    static func consent(for incoming: IncomingReservation, owner: OwnerContext, now: Date) -> Consent {
        if let name = incoming.underName, OwnerName.isClearlyNot(name, anyOf: owner.names) {
            return Consent(.suggested, reason: .nameMismatch, changedAt: now)
        }
        if owner.senderDecision == .trust { return Consent(.accepted, reason: .trustedSender, changedAt: now) }
        return Consent(.suggested, reason: .new, changedAt: now)
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
