package import Foundation

/// A stored version as the lifecycle rules see it: what a backend reads, inside its write transaction, for the
/// rules to decide on.
package struct StoredVersion: Hashable, Sendable {
    package var id: Int64
    package var itemReference: String
    package var version: Int
    /// What the record says. A backend reads what the rules decide on (``StoreSQLNames/versionColumns``): its
    /// ``ReservationContent/flags``, ``ReservationContent/source`` and ``ReservationContent/provenance`` are left
    /// empty, because the rules never read them (a write of theirs replaces all three).
    package var content: ReservationContent
    package var cancelledAt: Date?
    /// The owner's consent: a declined record takes no update but a cancellation.
    package var consent: Consent.State

    package init(
        id: Int64, itemReference: String, version: Int, content: ReservationContent, cancelledAt: Date?,
        consent: Consent.State = .suggested
    ) {
        self.id = id
        self.itemReference = itemReference
        self.version = version
        self.content = content
        self.cancelledAt = cancelledAt
        self.consent = consent
    }
}

/// What the owner decided that bears on a new reservation: their decision about its sender domain and the names
/// bookings for them are made under. Read by the backend with the records (``LifecycleReads/senderDomains``,
/// the owner's profile), in the same transaction.
package struct OwnerContext: Hashable, Sendable {
    /// The decision that applies to the reservation's sender domain (``SenderPreference/decision(for:among:)``).
    package var senderDecision: SenderDecision
    /// The owner's known names (set and learned); empty when unknown.
    package var names: [String]

    package init(senderDecision: SenderDecision = .ask, names: [String] = []) {
        self.senderDecision = senderDecision
        self.names = names
    }

    /// The context from what the backend read: the owner's preferences for ``LifecycleReads/senderDomains`` (given,
    /// as the backend has them already) and their profile.
    package init(senderDomains: [String], preferences: [SenderPreference], profile: OwnerProfile?) {
        self.init(
            senderDecision: SenderPreference.decision(amongCandidates: senderDomains, preferences),
            names: profile?.knownNames ?? [])
    }
}

/// What is stored that an incoming item can touch, read by the backend inside the transaction that applies the plan
/// (``ReservationLifecycle/reads(for:)`` says which records).
package struct LifecycleState: Sendable {
    /// The record at the incoming item's key, if any.
    package var current: StoredVersion?
    /// The records of the incoming item's container reference for the same owner and source domain that
    /// ``LifecycleReads/wholeContainer`` asks for (all of them, or its minimal cancellations and its one-part record:
    /// the one whose item reference is the booking number), ordered by id.
    package var container: [StoredVersion]
    /// The owner's decisions that bear on a new reservation.
    package var owner: OwnerContext

    package init(current: StoredVersion?, container: [StoredVersion], owner: OwnerContext = OwnerContext()) {
        self.current = current
        self.container = container
        self.owner = owner
    }
}

/// What the backend reads for one incoming item, in one indexed query: the records of `owner` from `sourceDomain`
/// whose item reference is `itemReference`, and those whose container reference is `containerReference` (every one
/// when `wholeContainer`, else only the minimal cancellations kept there and the record whose item reference is the
/// booking number, which a one-part document makes and a later document may name by its part).
package struct LifecycleReads: Hashable, Sendable {
    package var owner: OwnerAddress
    package var sourceDomain: String
    package var itemReference: String
    package var containerReference: String
    /// True when the rules need every record of the container (a minimal cancellation cancels them all); false when
    /// only the minimal cancellations matter (an item arriving after its booking was cancelled), so that a booking
    /// of many items is not read whole for each of them.
    package var wholeContainer: Bool

    package init(
        owner: OwnerAddress, sourceDomain: String, itemReference: String, containerReference: String,
        wholeContainer: Bool, ownerNames: Bool = false
    ) {
        self.owner = owner
        self.sourceDomain = sourceDomain
        self.itemReference = itemReference
        self.containerReference = containerReference
        self.wholeContainer = wholeContainer
        self.ownerNames = ownerNames
    }

    /// Whether the rules need the owner's known names (their profile): only for an item booked under a name.
    package var ownerNames: Bool

    /// The domains whose sender preferences apply (the source domain and its parents): the backend reads the owner's
    /// preferences for these, and the owner's profile, for ``OwnerContext``.
    package var senderDomains: [String] { SenderPreference.candidateDomains(for: sourceDomain) }

    /// Whether `record` (of this owner and domain) is one of the records these reads ask for.
    package func wants(itemReference: String, containerReference: String, isMinimalCancellation: Bool) -> Bool {
        itemReference == self.itemReference
            || (containerReference == self.containerReference
                && (wholeContainer || isMinimalCancellation || itemReference == containerReference))
    }

    /// Sorts what the backend read into the rules' input.
    package func state(from records: [StoredVersion], owner: OwnerContext = OwnerContext()) -> LifecycleState {
        LifecycleState(
            current: records.first { $0.itemReference == itemReference },
            container: records.filter {
                $0.content.containerReference == containerReference
                    && (wholeContainer || $0.content.isMinimalCancellation || $0.itemReference == containerReference)
            }.sorted { $0.id < $1.id }, owner: owner)
    }
}

/// What the lifecycle rules decided for one incoming item: the writes to make, in order, in the same transaction as
/// the reads, and the outcome to report.
///
/// The rules decide and the backend executes: a backend translates each ``LifecycleWrite`` into its SQL and makes no
/// decision of its own. A later feature that must happen with a change of a reservation (an outbox event, a consent
/// state) adds a case to ``LifecycleWrite`` and emits it from ``ReservationLifecycle``; every backend's exhaustive
/// `switch` over the writes then fails to compile until it executes the new case, so no backend can miss it.
package struct LifecyclePlan: Hashable, Sendable {
    package var writes: [LifecycleWrite]
    package var outcome: LifecycleOutcome
    /// The item references of the records of the booking this plan marks cancelled because the incoming
    /// confirmation lists the whole booking without them (re-booked: ``ReservationLifecycle``). Reported in the
    /// decision log beside the incoming item, with the code ``supersededCode``.
    package var superseded: [String]

    /// The code written beside each record a re-booking superseded.
    package static let supersededCode = "lifecycle.superseded"

    package init(writes: [LifecycleWrite] = [], outcome: LifecycleOutcome, superseded: [String] = []) {
        self.writes = writes
        self.outcome = outcome
        self.superseded = superseded
    }

    /// Whether executing it appends change events (the feed's readers are then woken once it commits).
    package var recordsChanges: Bool {
        writes.contains { if case .recordChange = $0 { true } else { false } }
    }
}

/// One write of a ``LifecyclePlan``. Times are the instant the plan was made (the store's clock).
package enum LifecycleWrite: Hashable, Sendable {
    /// Insert a new record at `key`, version 1, created and updated `at`, with the owner's `consent`.
    case create(key: ReservationKey, content: ReservationContent, at: Date, cancelledAt: Date?, consent: Consent)
    /// Copy record `recordID`'s current version, unchanged, into its history (before it is overwritten).
    case archive(recordID: Int64)
    /// Make `content` record `recordID`'s version `version`, written `at`. The record must be at `version - 1`:
    /// a backend that finds it elsewhere throws `store.conflict` (its locking let another writer in).
    case overwrite(recordID: Int64, version: Int, content: ReservationContent, at: Date, cancelledAt: Date?)
    /// Record a newer sender time on record `recordID` without a new version: the same content, sent again later,
    /// so that an older message arriving after it is stale.
    case advanceSenderTime(recordID: Int64, to: SenderTime)
    /// Append a change event of `kind` to the outbox (``ChangeFeed``): the record at `key` as the writes before it in
    /// the plan left it, made `at`, that arrived by `channel`. Emitted after every write that changes what a reader of
    /// the record sees; a backend stores the record's id and version with what changes without a new version (sender
    /// time, consent), the feed reads the rest from that version's row (every overwrite archives the version before
    /// it), and assigns the event its position in commit order.
    case recordChange(key: ReservationKey, kind: ChangeKind, at: Date, channel: IngestionChannel?)
}
