package import Foundation

/// One change of the store, as the outbox keeps it (DESIGN.md, "Publishing changes"): written in the same transaction
/// as the change itself, at a ``position`` that orders every change as its transaction committed.
///
/// It carries the reservation record exactly as the change left it (a copy, not a reference: later versions do not
/// alter it), so a reader sees each version as it was stored, and its provenance: how the version arrived
/// (``channel``), from which domain (``StoredReservation/sourceDomain``), from which message or page
/// (``StoredReservation/source``) and under which developer flags.
package struct ChangeEvent: Codable, Hashable, Sendable {
    /// Where this event is in the feed: positive, strictly increasing in commit order, never reused. A reader that
    /// has seen every event up to a position and asks for those after it never misses one (``ChangeFeed``).
    package var position: Int64
    package var kind: ChangeKind
    /// When the change was made (the store's clock).
    package var recordedAt: Date
    /// How the version arrived; nil for a change made without an ingestion (a direct `apply`).
    package var channel: IngestionChannel?
    /// The record as this change left it.
    package var reservation: StoredReservation

    package init(
        position: Int64, kind: ChangeKind, recordedAt: Date, channel: IngestionChannel?, reservation: StoredReservation
    ) {
        self.position = position
        self.kind = kind
        self.recordedAt = recordedAt
        self.channel = channel
        self.reservation = reservation
    }
}

/// Whose changes a reader sees: an owner token its owner's, a sender token its domain's, an admin every one.
package enum ChangeScope: Hashable, Sendable {
    case all
    case owner(OwnerAddress)
    /// Reservations from this domain and the domains below it (a registration covers its subdomains).
    case domain(String)

    /// Whether a change of `owner`'s reservation from `sourceDomain` is in this scope: the rule every backend's query
    /// and the webhooks' fan-out follow.
    package func contains(owner: OwnerAddress, sourceDomain: String) -> Bool {
        switch self {
        case .all: return true
        case .owner(let scoped): return owner == scoped
        case .domain(let domain):
            let name = StoreNames.domain(domain)
            return sourceDomain == name || sourceDomain.hasSuffix("." + name)
        }
    }
}
