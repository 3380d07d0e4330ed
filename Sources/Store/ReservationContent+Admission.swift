package import Foundation
package import Reservations

extension ReservationContent {
    /// The one place an admitted ``Reservation`` becomes store content: the payload is canonical JSON (sorted keys)
    /// of the typed reservation and its normalized markup, so "the same content again" compares bytes; the
    /// reservation's own `modifiedTime` orders versions where it is given, else `senderTime` (what the document's
    /// authentication vouches for).
    /// - Parameters:
    ///   - normalized: The schema.org object as resolution normalized it (for `reservations show`).
    ///   - senderTime: The time of the document (signed `Date:`, DKIM `t=`, the page's `dateModified` or fetch time).
    ///   - flags: The developer flags the admission relied on.
    ///   - source: The email's Message-ID or the page's URL.
    ///   - warnings: What admission dropped from the markup and why (links it does not keep), kept in the payload.
    package init(
        admitted reservation: Reservation, normalized: JSONValue, senderTime: SenderTime?, flags: [String], source: String,
        warnings: [StoredPayload.Warning] = []
    ) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload =
            (try? encoder.encode(StoredPayload(reservation: reservation, markup: normalized, warnings: warnings))) ?? Data()
        let status: Status =
            switch reservation.status ?? .confirmed {
            case .confirmed: .confirmed
            case .cancelled: .cancelled
            case .pending: .pending
            case .hold: .hold
            }
        self.init(
            containerReference: reservation.containerReference ?? reservation.reservationId ?? "", status: status,
            isMinimalCancellation: reservation.isMinimalCancellation,
            senderTime: SenderTime.choose(modifiedTime: reservation.modifiedTime?.instant, fallback: senderTime),
            kind: reservation.kind.rawValue, payload: payload, flags: flags, source: source)
    }
}

extension IncomingReservation {
    /// What the store receives for `reservation`, admitted for `owner` from `sourceDomain` (see
    /// ``ReservationContent/init(admitted:normalized:senderTime:flags:source:)``).
    package init(
        admitted reservation: Reservation, normalized: JSONValue, owner: OwnerAddress, sourceDomain: String,
        senderTime: SenderTime?, flags: [String], source: String, warnings: [StoredPayload.Warning] = [],
        bookingParts: BookingParts? = nil
    ) {
        self.init(
            key: ReservationKey(
                owner: owner, sourceDomain: sourceDomain,
                itemReference: reservation.itemReference ?? reservation.reservationId ?? ""),
            content: ReservationContent(
                admitted: reservation, normalized: normalized, senderTime: senderTime, flags: flags, source: source,
                warnings: warnings),
            warnings: warnings.map(\.code), bookingParts: bookingParts, part: PartIdentity(reservation))
    }
}

extension PartIdentity {
    /// The part `reservation` is, or nil when nothing tells its part apart (a minimal cancellation, a reservation
    /// without the values its kind is told apart by).
    package init?(_ reservation: Reservation) {
        guard !reservation.isMinimalCancellation, let key = reservation.partKey else { return nil }
        self.init(kind: reservation.kind.rawValue, partKey: key, passenger: reservation.passengerKey)
    }
}
