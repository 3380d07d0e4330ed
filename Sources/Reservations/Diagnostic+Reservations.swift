package import Markup

/// The diagnostic codes of reservation resolution (MARKUP.md, "Normal form", "Required properties",
/// "Times", "Identity"). Stable: they appear in `gateway extract --json`, the decision log and API answers.
extension Diagnostic.Code {
    /// A non-canonical name or value was folded into the normal form (`reservationNumber` → `reservationId`).
    package static let alias = Diagnostic.Code("markup.alias")
    /// A required property is absent; the path names it (`reservationFor.departureAirport.iataCode`).
    package static let missingProperty = Diagnostic.Code("markup.missing-property")
    /// Text was given where an item was expected (`"underName": "Eva Green"`); it was read as the item's name.
    package static let textForItem = Diagnostic.Code("markup.text-for-item")
    /// An item was given where text was expected; its `name` (or `@id`) was used, or nothing could be.
    package static let itemForText = Diagnostic.Code("markup.item-for-text")
    /// A single-valued property holds several values; the first was used.
    package static let multipleValues = Diagnostic.Code("markup.multiple-values")
    /// Two spellings of one property disagree (`reservationNumber` and `reservationId`).
    package static let conflictingValues = Diagnostic.Code("markup.conflicting-values")
    /// `reservationStatus` is not one of confirmed, cancelled, pending, hold.
    package static let unknownStatus = Diagnostic.Code("markup.unknown-status")
    /// An airline or airport IATA code has the wrong shape.
    package static let invalidIATACode = Diagnostic.Code("markup.invalid-iata-code")
    /// A flight number is not an airline code followed by 1–4 digits.
    package static let invalidFlightNumber = Diagnostic.Code("markup.invalid-flight-number")
    /// A date or datetime is not ISO 8601.
    package static let invalidDateTime = Diagnostic.Code("markup.invalid-datetime")
    /// A date without a time where a time is expected: a warning for trips, an error for a table booking.
    package static let dateOnly = Diagnostic.Code("markup.date-only")
    /// A number (party size) is not a non-negative integer.
    package static let invalidNumber = Diagnostic.Code("markup.invalid-number")
    /// A datetime without offset was placed in the zone of its airport or country.
    package static let timeZoneInferred = Diagnostic.Code("markup.time-zone-inferred")
    /// A datetime without offset whose place gives no single time zone.
    package static let missingTimeZone = Diagnostic.Code("markup.missing-time-zone")
    /// A local time that does not exist in its inferred zone (skipped by a daylight-saving change).
    package static let nonexistentLocalTime = Diagnostic.Code("markup.nonexistent-local-time")
    /// Warning: arrival not after departure (compared in UTC), by at most 24 hours (an overnight flight
    /// written with the wrong date or offset, the date line); the reservation stays.
    package static let arrivalBeforeDeparture = Diagnostic.Code("markup.arrival-before-departure")
    /// Error: arrival more than 24 hours before departure (compared in UTC): the sender's data is impossible.
    package static let arrivalImpossible = Diagnostic.Code("markup.arrival-impossible")
    /// Warning: a time's explicit UTC offset is not the offset of its place's zone (the departure airport,
    /// the station, the venue) at that date; the written instant was kept.
    package static let offsetMismatch = Diagnostic.Code("time.offset-mismatch")
    /// Checkout not after check-in.
    package static let checkoutBeforeCheckin = Diagnostic.Code("markup.checkout-before-checkin")
    /// Dropoff not after pickup.
    package static let dropoffBeforePickup = Diagnostic.Code("markup.dropoff-before-pickup")
    /// `endDate`/`endTime` not after the start.
    package static let endBeforeStart = Diagnostic.Code("markup.end-before-start")
    /// The `reservationFor` item is not of the type the reservation kind expects.
    package static let unexpectedType = Diagnostic.Code("markup.unexpected-type")
    /// A reservation type the gateway does not handle (`TaxiReservation`).
    package static let unsupportedType = Diagnostic.Code("markup.unsupported-type")
    /// The same reservation was given more than once (JSON-LD and Microdata); one was kept.
    package static let duplicateItem = Diagnostic.Code("markup.duplicate-item")
    /// Several items share a reservation id and nothing in them tells them apart; an ordinal was added.
    package static let ambiguousItem = Diagnostic.Code("markup.ambiguous-item")
    /// Warning: a reservation that is the `result` or template of a `potentialAction` (`ReserveAction`,
    /// `CheckInAction`, …) describes what could be booked, not a booking held: it was not read.
    package static let actionTemplate = Diagnostic.Code("markup.action-template")
    /// Warning: a reservation that is part of an `Offer` (or reached through `offers`) is offered, not
    /// held: it was not read.
    package static let offeredItem = Diagnostic.Code("markup.offered-item")
    /// A resolution limit (nesting depth, items walked, reservations) was reached; the rest was skipped.
    package static let limitExceeded = Diagnostic.Code("markup.limit-exceeded")
}
