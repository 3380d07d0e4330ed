internal import Foundation
import Markup

/// A booking (container reference) as one document lists it, and whether the document evidently
/// lists the whole booking (MARKUP.md, "Re-bookings").
///
/// A new confirmation that lists the whole booking and no longer lists a part stored before
/// supersedes that part; a message about one step of the booking (a check-in reminder, a boarding
/// pass) never does. The store acts on `listsWholeBooking` and the parts listed; this type only
/// decides what the document says. The listing is whole unless one of these holds, checked in
/// this order (the first that holds is `verdict`):
///
/// 1. A part is not admissible: a part the gateway could not read may be the one that looks dropped.
/// 2. A part is a cancellation of the whole booking (`reservationId` and a cancelled status only).
/// 3. A part is a boarding pass (`Resolution.Scope.isBoardingPass`): one passenger, one leg.
/// 4. The parts prompt check-in (`checkinUrl`, a `CheckInAction`) and all start within 24 hours of
///    the first (or their start is unknown): a check-in reminder for the coming journey. A confirmation
///    that offers check-in for an outbound and a return flight spans more.
/// 5. A trip (flight, train, bus, boat) lists a passenger on one leg but not on another.
///
/// The parts are listed with their item references and part keys (`Reservation.partKey`: the leg, the
/// stay, the ticket), which identify a part across documents even where the item reference does
/// not (a one-part booking's item reference is the booking number).
package struct BookingListing: Sendable, Hashable, Codable {
    /// Why a listing is or is not the whole booking. Stable: the raw values can appear in logs.
    package enum Verdict: String, Sendable, Hashable, Codable {
        case wholeBooking = "whole-booking"
        case partNotAdmissible = "part-not-admissible"
        case cancellation
        case boardingPass = "boarding-pass"
        case checkInReminder = "check-in-reminder"
        case passengerMissingFromLeg = "passenger-missing-from-leg"
    }

    /// One part as listed.
    package struct Part: Sendable, Hashable, Codable {
        package var itemReference: String
        /// `Reservation.partKey`, nil where nothing tells the part apart (a minimal cancellation).
        package var partKey: String?

        package init(itemReference: String, partKey: String?) {
            self.itemReference = itemReference
            self.partKey = partKey
        }
    }

    package var containerReference: String
    /// The parts, in document order.
    package var parts: [Part]
    package var verdict: Verdict

    /// True when the document evidently lists every part of the booking.
    package var listsWholeBooking: Bool { verdict == .wholeBooking }

    package init(containerReference: String, parts: [Part], verdict: Verdict) {
        self.containerReference = containerReference
        self.parts = parts
        self.verdict = verdict
        self.passengers = []
    }

    /// Every passenger (``Reservation/passengerKey``) the listed parts name.
    package var passengers: [String]

    /// The listing of each container the resolutions name, in the order first seen.
    package static func listings(of resolutions: [Resolution]) -> [BookingListing] {
        var order: [String] = []
        var members: [String: [Resolution]] = [:]
        for resolution in resolutions {
            guard let container = resolution.reservation?.containerReference else { continue }
            if members[container] == nil { order.append(container) }
            members[container, default: []].append(resolution)
        }
        return order.map { container in
            let listed = members[container] ?? []
            let parts = listed.compactMap { resolution in
                resolution.reservation.map { Part(itemReference: $0.itemReference ?? container, partKey: $0.partKey) }
            }
            var listing = BookingListing(containerReference: container, parts: parts, verdict: verdict(of: listed))
            var passengers: [String] = []
            for reservation in listed.compactMap(\.reservation) where !passengers.contains(reservation.passengerKey) {
                passengers.append(reservation.passengerKey)
            }
            listing.passengers = passengers
            return listing
        }
    }

    static func verdict(of listed: [Resolution]) -> Verdict {
        let reservations = listed.compactMap(\.reservation)
        if listed.contains(where: { !$0.admissible }) { return .partNotAdmissible }
        if reservations.contains(where: \.isMinimalCancellation) { return .cancellation }
        if listed.contains(where: \.scope.isBoardingPass) { return .boardingPass }
        if listed.contains(where: \.scope.promptsCheckIn), !spansMoreThanADay(reservations) { return .checkInReminder }
        if !everyPassengerOnEveryLeg(reservations) { return .passengerMissingFromLeg }
        return .wholeBooking
    }

    /// Whether the parts' starts spread over more than 24 hours (false when one is unknown).
    static func spansMoreThanADay(_ reservations: [Reservation]) -> Bool {
        var starts: [Date] = []
        for reservation in reservations {
            guard let start = reservation.startTime else { return false }
            if let instant = start.instant {
                starts.append(instant)
            } else if let date = LocalDateTime(parsing: start.localDate) {  // a date alone: its midnight, as UTC
                starts.append(Date(timeIntervalSince1970: Double(date.wallClockSeconds)))
            } else {
                return false
            }
        }
        guard let first = starts.min(), let last = starts.max() else { return false }
        return last.timeIntervalSince(first) > 86_400
    }

    /// For trips: every passenger listed on some leg is listed on every leg.
    static func everyPassengerOnEveryLeg(_ reservations: [Reservation]) -> Bool {
        let trips = reservations.filter { [.flight, .train, .bus, .boat].contains($0.kind) }
        var legs: [String: Set<String>] = [:]
        var passengers = Set<String>()
        for trip in trips {
            guard let leg = trip.partKey else { continue }
            let passenger = trip.passengerKey
            passengers.insert(passenger)
            legs[leg, default: []].insert(passenger)
        }
        return legs.values.allSatisfy { $0 == passengers }
    }
}

extension Reservation {
    /// Whom the reservation is for, normalized as identities are (case, accents, spacing): the `underName`, else the
    /// first ticket's; empty when neither names anyone. What tells one passenger's parts of a booking from another's.
    package var passengerKey: String {
        (underName ?? tickets.first?.underName).map(ReservationIdentity.normalized) ?? ""
    }
}
