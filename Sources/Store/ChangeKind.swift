/// What a change event says happened (the outbox of DESIGN.md, "Publishing changes"): a stable name that the change
/// feed, the webhooks' `types` filter and the CloudEvents `type` carry.
///
/// A struct with static members rather than an enum, so that a feature adding a kind of change does not break anyone's
/// `switch`: to add one (a consent change, a donation), declare it here, list it in ``known``, and emit
/// ``LifecycleWrite/recordChange(key:kind:at:channel:)`` with it from the plan that makes the change
/// (``ReservationLifecycle`` for reservations). The backends record every kind the same way.
package struct ChangeKind: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// Stable: `reservation.created`, as the feed, the webhooks and the stored rows spell it.
    package let rawValue: String

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// A new reservation record (version 1).
    package static let created = ChangeKind("reservation.created")
    /// A record's content changed (a new version), other than a cancellation.
    package static let updated = ChangeKind("reservation.updated")
    /// A record became cancelled (a new version whose status is cancelled, or a cancelled record created by a
    /// cancellation that arrived first).
    package static let cancelled = ChangeKind("reservation.cancelled")
    /// The owner accepted or declined the record (issue 16): its content is the same, what a calendar shows of it
    /// is not (the record's `consent` says which).
    package static let consentChanged = ChangeKind("reservation.consent-changed")

    /// Every kind this build records, in the order people read them.
    package static let known: [ChangeKind] = [.created, .updated, .cancelled, .consentChanged]

    /// The kind named `rawValue`, when this build knows it.
    package init?(rawValue: String) {
        guard let kind = Self.known.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = kind
    }

    /// A kind read back from the store: kept even when this build does not know it (written by a newer gateway).
    package init(stored rawValue: String) { self.rawValue = rawValue }

    package var description: String { rawValue }

    package static func < (lhs: ChangeKind, rhs: ChangeKind) -> Bool { lhs.rawValue < rhs.rawValue }

    package init(from decoder: any Decoder) throws {
        self.init(stored: try decoder.singleValueContainer().decode(String.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
