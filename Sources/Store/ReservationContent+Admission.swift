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
    ///   - provenance: Where it came from, in full.
    package init(
        admitted reservation: Reservation, normalized: JSONValue, senderTime: SenderTime?, flags: [String], source: String,
        warnings: [StoredPayload.Warning] = [], provenance: Provenance = Provenance()
    ) {
        let payload =
            (try? CanonicalJSONEncoder().encodeData(
                StoredPayload(reservation: reservation, markup: normalized, warnings: warnings))) ?? Data()
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
            kind: reservation.kind.rawValue, payload: payload, flags: flags, source: source, provenance: provenance,
            endsAt: Self.end(of: reservation))
    }

    /// When `reservation` ends, for retention: its end, else its start; a date without a time ends when that day has
    /// ended everywhere on Earth (the next day at 12:00 UTC). Nil when it states no time.
    package static func end(of reservation: Reservation) -> Date? {
        guard let time = reservation.endTime ?? reservation.startTime else { return nil }
        if let instant = time.instant { return instant }
        guard let day = try? Date(time.localDate + "T00:00:00Z", strategy: .iso8601) else { return nil }
        return day.addingTimeInterval(36 * 3600)
    }

    /// The name the booking is under: the reservation's `underName`, else its first ticket's.
    package static func underName(of reservation: Reservation) -> String? {
        reservation.underName ?? reservation.tickets.lazy.compactMap(\.underName).first
    }
}

extension StoredReservation {
    /// The name the booking is under, read from the payload; nil when it names none (or the payload does not decode).
    package var underName: String? {
        guard let reservation = StoredPayload.reservation(stored: content.payload) else { return nil }
        return ReservationContent.underName(of: reservation)
    }
}

extension IncomingReservation {
    /// What the store receives for `reservation`, admitted for `owner` from `sourceDomain` (see
    /// ``ReservationContent/init(admitted:normalized:senderTime:flags:source:)``).
    package init(
        admitted reservation: Reservation, normalized: JSONValue, owner: OwnerAddress, sourceDomain: String,
        senderTime: SenderTime?, flags: [String], source: String, warnings: [StoredPayload.Warning] = [],
        bookingParts: BookingParts? = nil, provenance: Provenance = Provenance()
    ) {
        self.init(
            key: ReservationKey(
                owner: owner, sourceDomain: sourceDomain,
                itemReference: reservation.itemReference ?? reservation.reservationId ?? ""),
            content: ReservationContent(
                admitted: reservation, normalized: normalized, senderTime: senderTime, flags: flags, source: source,
                warnings: warnings, provenance: provenance),
            underName: ReservationContent.underName(of: reservation), warnings: warnings.map(\.code),
            bookingParts: bookingParts, part: PartIdentity(reservation))
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
