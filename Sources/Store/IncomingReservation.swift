package import Foundation

/// One reservation item as admitted, handed to a ``ReservationStore`` to create, update or cancel its record.
///
/// Its key is (``owner``, ``sourceDomain``, ``itemReference``) (DESIGN.md, "Identity and lifecycle"). The store
/// keeps ``payload`` opaque: it never parses it, and compares it byte for byte to decide whether content changed,
/// so callers must hand canonical JSON (sorted keys, no insignificant whitespace) for idempotence to hold.
package struct IncomingReservation: Codable, Hashable, Sendable {
    /// schema.org `reservationStatus` (https://schema.org/ReservationStatusType), reduced to what the store acts on.
    package enum Status: String, Codable, Hashable, Sendable, CaseIterable {
        /// `ReservationConfirmed`.
        case confirmed
        /// `ReservationCancelled`: the record is kept, marked cancelled, never deleted.
        case cancelled
        /// `ReservationPending`.
        case pending
        /// `ReservationHold`.
        case hold
    }

    /// Whose reservation this is: the recipient of the email, or the account that submitted the page.
    package var owner: String
    /// The registered domain the reservation was authenticated for (DKIM `d=` or the page's host).
    package var sourceDomain: String
    /// The reservation number (`reservationId`) shared by every item of one booking.
    package var containerReference: String
    /// The item's own key: the `reservationId` of a one-part booking, a per-part key otherwise (a flight leg).
    package var itemReference: String
    package var status: Status
    /// True for a minimal cancellation (only `reservationId` and a cancelled status): it cancels every item of
    /// ``containerReference`` from ``sourceDomain`` for ``owner``.
    package var isMinimalCancellation: Bool
    /// schema.org `modifiedTime`: when present on both sides, an older version never replaces a newer one.
    package var modifiedTime: Date?
    /// The schema.org type, for example `FlightReservation`.
    package var kind: String
    /// The reservation as canonical JSON (sorted keys).
    package var payload: Data
    /// The developer flags that admitted it (empty when admitted without an override).
    package var flags: [String]
    /// Where it came from: the email's Message-ID or the page's URL.
    package var source: String

    package init(
        owner: String,
        sourceDomain: String,
        containerReference: String,
        itemReference: String,
        status: Status,
        isMinimalCancellation: Bool = false,
        modifiedTime: Date? = nil,
        kind: String,
        payload: Data,
        flags: [String] = [],
        source: String
    ) {
        self.owner = owner
        self.sourceDomain = sourceDomain
        self.containerReference = containerReference
        self.itemReference = itemReference
        self.status = status
        self.isMinimalCancellation = isMinimalCancellation
        self.modifiedTime = modifiedTime
        self.kind = kind
        self.payload = payload
        self.flags = flags
        self.source = source
    }
}
