package import Foundation

/// One ingestion attempt and what the gateway decided, kept in the ``DecisionLog`` (DESIGN.md, "What bad input
/// gets").
package struct DecisionLogEntry: Codable, Hashable, Sendable, Identifiable {
    /// The decision as a whole.
    package enum Verdict: String, Codable, Hashable, Sendable, CaseIterable {
        /// Every reservation found was admitted.
        case admitted
        /// Nothing was admitted; ``DecisionLogEntry/codes`` says why.
        case rejected
        /// Not decided yet (a DNS temperror): the message is spooled for retry.
        case deferred
        /// Some reservations were admitted, others rejected.
        case partial
    }

    /// Assigned by the log on append, increasing, never reused; nil before.
    package var id: Int64?
    /// When the attempt was made.
    package var time: Date
    package var channel: IngestionChannel
    /// The authenticated domain, or the claimed one when authentication failed; nil when none could be read.
    package var sourceDomain: String?
    /// The email's Message-ID or the page's URL.
    package var source: String?
    /// Whose reservations the attempt was for (the LMTP recipient, `--owner`, the signed recipients), each one
    /// typed; empty when none was known. Each item's outcome in ``reservations`` names its own owner.
    package var owners: [OwnerAddress]
    /// A hash of the message or page bytes, to match retries and duplicates.
    package var contentHash: String
    package var verdict: Verdict
    /// Stable codes behind the verdict (`dkim.body-hash-mismatch`, `registry.domain-not-registered`, ...).
    package var codes: [String]
    /// The developer flags in force for this attempt.
    package var flags: [String]
    /// What happened to each reservation item: one record per item and owner it was admitted for, one per item
    /// refused before that.
    package var reservations: [ReservationOutcomeRecord]

    package init(
        id: Int64? = nil,
        time: Date,
        channel: IngestionChannel,
        sourceDomain: String?,
        source: String?,
        owners: [OwnerAddress] = [],
        contentHash: String,
        verdict: Verdict,
        codes: [String] = [],
        flags: [String] = [],
        reservations: [ReservationOutcomeRecord] = []
    ) {
        self.id = id
        self.time = time
        self.channel = channel
        self.sourceDomain = sourceDomain
        self.source = source
        self.owners = owners
        self.contentHash = contentHash
        self.verdict = verdict
        self.codes = codes
        self.flags = flags
        self.reservations = reservations
    }
}

extension DecisionLogEntry {
    /// This entry with the outcome of each of `reservations` appended (the owner and item named, with the item's
    /// warnings), in order, each followed by the records its plan superseded (cancelled, with
    /// ``LifecyclePlan/supersededCode``): what every backend's `ingest` writes to the log, in the transaction that
    /// applied them.
    ///
    /// An item the owner's block kept out is logged without its content: the owner and the outcome only, the item
    /// reference withheld (``ReservationOutcomeRecord/withheld``), with the code `consent.sender-blocked`.
    package func recording(_ plans: [LifecyclePlan], of reservations: [IncomingReservation]) -> DecisionLogEntry {
        var entry = self
        for (item, plan) in zip(reservations, plans) {
            if plan.outcome == .blocked {
                entry.reservations.append(
                    ReservationOutcomeRecord(
                        itemReference: ReservationOutcomeRecord.withheld, owner: item.owner, outcome: plan.outcome,
                        codes: [ReservationOutcomeRecord.senderBlocked]))
                continue
            }
            entry.reservations.append(
                ReservationOutcomeRecord(
                    itemReference: item.itemReference, owner: item.owner, outcome: plan.outcome, codes: item.warnings))
            for superseded in plan.superseded {
                entry.reservations.append(
                    ReservationOutcomeRecord(
                        itemReference: superseded, owner: item.owner, outcome: .cancelled(count: 1),
                        codes: [LifecyclePlan.supersededCode]))
            }
        }
        return entry
    }

    /// Whether this entry names `owner`, among its owners or as an item's owner.
    package func names(_ owner: OwnerAddress) -> Bool {
        owners.contains(owner) || reservations.contains { $0.owner == owner }
    }

    /// This entry as one owner may see it (their export): the other owners it names, and their items, left out.
    package func keepingOnly(_ owner: OwnerAddress) -> DecisionLogEntry {
        var entry = self
        entry.owners.removeAll { $0 != owner }
        entry.reservations.removeAll { $0.owner != nil && $0.owner != owner }
        return entry
    }

    /// This entry without `owner` (issue 16, `gateway owners forget`): nil when nothing of it remains that is not
    /// theirs (it named no other owner), else the entry with `owner` and their items removed.
    package func forgetting(_ owner: OwnerAddress) -> DecisionLogEntry? {
        var entry = self
        entry.owners.removeAll { $0 == owner }
        entry.reservations.removeAll { $0.owner == owner }
        guard !entry.owners.isEmpty || entry.reservations.contains(where: { $0.owner != nil }) else { return nil }
        return entry
    }
}
