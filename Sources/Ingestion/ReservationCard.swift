internal import Foundation
import Publishing
package import Reservations

/// What a calendar would show for one reservation: the event's title (the same one the `.ics` feed writes), its
/// times in their own zone and in UTC, its places, who it is for, and the actions the markup offers. Built for the
/// dry-run report (`gateway check --json`, `POST /v1/check/…`) and the console's tester, never stored.
///
/// Every string is the sender's, as written: readers escape it (the console never renders it as markup, and shows
/// action targets as text, never as links).
package struct ReservationCard: Codable, Sendable, Hashable {
    /// A time as a person reads it in the place it happens, and the same instant in UTC.
    package struct Time: Codable, Sendable, Hashable {
        /// `Departs`, `Check-in`, `Starts`.
        package var label: String
        /// The wall clock where it happens: `2027-03-04 20:15`, or the date alone (`2027-03-04`).
        package var local: String
        /// The offset and, where the gateway inferred it, the zone it came from: `UTC-08:00 (America/Los_Angeles,
        /// inferred)`; nil for a date alone or a time whose zone is unknown.
        package var zone: String?
        /// The instant in UTC: `2027-03-05 04:15 UTC`; nil when the offset is unknown.
        package var utc: String?
        /// The value exactly as the markup gave it.
        package var original: String
        package var isDateOnly: Bool
        /// True when the offset was not in the markup but taken from the place.
        package var zoneInferred: Bool
    }

    /// An airport, station, restaurant, hotel or venue.
    package struct Place: Codable, Sendable, Hashable {
        /// `From`, `To`, `Hotel`, `Pick-up`, `Venue`.
        package var role: String
        package var name: String?
        /// An airport's IATA code.
        package var code: String?
        /// The address on one line.
        package var address: String?
        package var telephone: String?
    }

    /// Someone the reservation is for.
    package struct Person: Codable, Sendable, Hashable {
        package var name: String
        package var ticket: String?
        package var seat: String?
    }

    /// Something the markup offers to do (`CheckInAction`, `modifyReservationUrl`): its name and its target as text.
    package struct Action: Codable, Sendable, Hashable {
        package var name: String
        package var target: String
        /// True when the target is an https URL (anything else would be refused by a calendar).
        package var isHTTPS: Bool
    }

    package var title: String
    package var kind: String
    /// confirmed, cancelled, pending or hold (confirmed when the markup gave none).
    package var status: String
    /// The booking number and, when it differs, this part's reference.
    package var reservationNumber: String?
    package var itemReference: String?
    package var provider: String?
    package var partySize: Int?
    package var start: Time?
    package var end: Time?
    package var places: [Place]
    package var people: [Person]
    package var actions: [Action]
    /// True for a cancellation naming only the booking number: it cancels every part stored under it.
    package var cancelsWholeBooking: Bool

    /// The card for a resolved reservation and its normalized markup.
    package init(_ reservation: Reservation, normalized: JSONValue) {
        title = CalendarFeed.title(reservation)
        kind = reservation.isMovie ? "movie" : reservation.kind.rawValue
        status = (reservation.status ?? .confirmed).rawValue
        reservationNumber = reservation.containerReference ?? reservation.reservationId
        itemReference = reservation.itemReference == reservationNumber ? nil : reservation.itemReference
        provider = reservation.provider.map { provider in
            [provider.name, provider.iataCode.map { "(\($0))" }].compactMap { $0 }.joined(separator: " ")
        }
        partySize = reservation.partySize
        cancelsWholeBooking = reservation.isMinimalCancellation
        let labels = Self.labels(reservation.kind)
        start = reservation.startTime.map { Self.time($0, label: labels.start) }
        end = reservation.endTime.map { Self.time($0, label: labels.end) }
        places = [
            (labels.departure, reservation.departure), (labels.arrival, reservation.arrival),
            (labels.location, reservation.location),
        ].compactMap { role, place in
            place.map { place in
                Place(
                    role: role, name: place.name, code: place.iataCode, address: place.address.map(Self.oneLine),
                    telephone: place.telephone)
            }
        }
        var people: [Person] = []
        for ticket in reservation.tickets {
            let seat = ticket.seat.map(\.label).flatMap { $0.isEmpty ? nil : $0 }
            people.append(
                Person(
                    name: ticket.underName ?? reservation.underName ?? "(no name)",
                    ticket: ticket.ticketNumber ?? ticket.ticketToken, seat: seat))
        }
        if people.isEmpty, let name = reservation.underName { people.append(Person(name: name)) }
        self.people = people
        actions = Self.actions(in: normalized)
    }

    private static func labels(_ kind: Reservation.Kind) -> (
        start: String, end: String, departure: String, arrival: String, location: String
    ) {
        switch kind {
        case .flight, .train, .bus, .boat: ("Departs", "Arrives", "From", "To", "At")
        case .rentalCar: ("Pick-up", "Drop-off", "Pick-up", "Drop-off", "At")
        case .lodging: ("Check-in", "Check-out", "From", "To", "Hotel")
        case .restaurant: ("Table at", "Until", "From", "To", "Restaurant")
        case .event: ("Starts", "Ends", "From", "To", "Venue")
        }
    }

    static func time(_ time: ReservationTime, label: String) -> Time {
        let local = time.localTime.map { time.localDate + " " + String($0.prefix(5)) } ?? time.localDate
        var zone: String?
        if let offset = time.utcOffsetSeconds, !time.isDateOnly {
            zone = "UTC" + offsetText(offset)
            if let identifier = time.timeZoneIdentifier {
                zone! += " (\(identifier)\(time.isZoneInferred ? ", inferred" : ""))"
            } else if time.isZoneInferred {
                zone! += " (inferred)"
            }
        }
        let utc = time.isDateOnly ? nil : time.instant.map(utcText)
        return Time(
            label: label, local: local, zone: zone, utc: utc, original: time.original, isDateOnly: time.isDateOnly,
            zoneInferred: time.isZoneInferred)
    }

    /// `+01:00`, `-08:00`.
    static func offsetText(_ seconds: Int) -> String {
        let magnitude = abs(seconds)
        let hours = magnitude / 3600
        let minutes = (magnitude % 3600) / 60
        return (seconds < 0 ? "-" : "+") + (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }

    /// `2027-03-05 04:15 UTC`.
    static func utcText(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { let value = value ?? 0; return value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.year ?? 1970)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)) UTC"
    }

    static func oneLine(_ address: Reservations.Place.Address) -> String {
        [address.streetAddress, address.addressLocality, address.addressRegion, address.postalCode, address.addressCountry]
            .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
    }

    /// The reservation's `potentialAction`s and Gmail's action URLs (`url`, `checkinUrl`, `modifyReservationUrl`,
    /// `cancelReservationUrl`, `confirmReservationUrl`), at most 10, each target at most 500 characters.
    static func actions(in normalized: JSONValue) -> [Action] {
        var actions: [Action] = []
        func add(_ name: String, _ target: String?) {
            guard let target = target?.trimmingCharacters(in: .whitespacesAndNewlines), !target.isEmpty,
                actions.count < 10
            else { return }
            let clipped = String(target.prefix(500))
            actions.append(Action(name: String(name.prefix(80)), target: clipped, isHTTPS: clipped.lowercased().hasPrefix("https://")))
        }
        var potential: [JSONValue] = []
        switch normalized["potentialAction"] {
        case .array(let elements): potential = elements
        case .some(let value): potential = [value]
        case .none: break
        }
        for action in potential {
            let name = action["@type"]?.string ?? action["name"]?.string ?? "Action"
            switch action["target"] {
            case .string(let target): add(name, target)
            case .object: add(name, action["target"]?["urlTemplate"]?.string ?? action["target"]?["url"]?.string)
            case .array(let targets): add(name, targets.first?.string ?? targets.first?["urlTemplate"]?.string)
            default: add(name, action["url"]?.string)
            }
        }
        for (key, name) in [
            ("url", "View"), ("checkinUrl", "Check in"), ("modifyReservationUrl", "Modify"),
            ("cancelReservationUrl", "Cancel"), ("confirmReservationUrl", "Confirm"),
        ] {
            add(name, normalized[key]?.string)
        }
        return actions
    }
}
