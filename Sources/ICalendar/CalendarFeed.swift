import Foundation
package import Reservations
package import Store

/// An owner's reservations as an iCalendar object (RFC 5545): one VEVENT per confirmed or
/// cancelled item, under a UID that stays the same for the item's whole life, SEQUENCE growing
/// with each version, STATUS:CANCELLED once cancelled. Pending and held items produce no event.
///
/// The output depends on the records only (no "now" in it), so a feed that did not change renders to the same
/// bytes and its ETag stays the same. Without METHOD (a subscribed feed is not an iTIP message, RFC 5546), DTSTAMP
/// is when the event's information was last revised in the store (RFC 5545 §3.8.7.2), the record's `updatedAt`.
package enum CalendarFeed {
    package static func render(_ reservations: [StoredReservation]) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//gateway//reservations//EN", "CALSCALE:GREGORIAN"]
        for stored in reservations.sorted(by: { $0.id < $1.id }) {
            guard stored.status == .confirmed || stored.status == .cancelled,
                let payload = try? JSONDecoder().decode(StoredPayload.self, from: stored.payload)
            else { continue }
            lines += event(for: payload.reservation, stored: stored)
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    static func event(for reservation: Reservation, stored: StoredReservation) -> [String] {
        guard let start = reservation.startTime, let startValue = dateValue(start) else { return [] }
        var lines = ["BEGIN:VEVENT"]
        lines.append("UID:\(uid(stored))")
        lines.append("DTSTAMP:\(utc(stored.updatedAt))")
        lines.append("LAST-MODIFIED:\(utc(stored.updatedAt))")
        lines.append("SEQUENCE:\(max(0, stored.version - 1))")
        lines.append("STATUS:\(stored.status == .cancelled ? "CANCELLED" : "CONFIRMED")")
        lines.append("DTSTART\(startValue)")
        if let end = reservation.endTime, let endValue = dateValue(end, exclusiveDate: true) {
            lines.append("DTEND\(endValue)")
        } else if start.isDateOnly {
            lines.append("DURATION:P1D")
        } else {
            lines.append("DURATION:PT2H")  // a meal, a show: two hours unless the sender says otherwise
        }
        lines.append("SUMMARY:\(escape(title(reservation)))")
        if let location = location(reservation) { lines.append("LOCATION:\(escape(location))") }
        if let url = reservation.url, url.hasPrefix("https://") || url.hasPrefix("http://") { lines.append("URL:\(url)") }
        var description = ["Reservation \(reservation.reservationId ?? stored.containerReference)"]
        if let name = reservation.underName { description.append("Under the name \(name)") }
        if let provider = reservation.provider?.name { description.append("With \(provider)") }
        description.append("From \(stored.sourceDomain)")
        lines.append("DESCRIPTION:\(escape(description.joined(separator: "\n")))")
        lines.append("END:VEVENT")
        return lines
    }

    /// Stable for the item's life: the store's key (owner, source domain, item reference), hashed.
    static func uid(_ stored: StoredReservation) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a, 64-bit: stable across runs and platforms
        for byte in "\(stored.owner)\u{0}\(stored.sourceDomain)\u{0}\(stored.itemReference)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return String(hash, radix: 16) + "@gateway"
    }

    /// A title a person recognizes: "Flight UA110 SFO → EWR", "Reservation at Kokkari Estiatorio". The console's
    /// cards show the same title (`ReservationCard`).
    package static func title(_ reservation: Reservation) -> String {
        func route(_ from: Place?, _ to: Place?, code: Bool) -> String {
            let a = (code ? from?.iataCode : nil) ?? from?.name ?? "?"
            let b = (code ? to?.iataCode : nil) ?? to?.name ?? "?"
            return "\(a) → \(b)"
        }
        switch reservation.kind {
        case .flight: return "Flight \(reservation.flightNumber ?? "") \(route(reservation.departure, reservation.arrival, code: true))"
        case .train: return "Train \(reservation.tripNumber ?? reservation.tripName ?? "") \(route(reservation.departure, reservation.arrival, code: false))"
        case .bus: return "Bus \(reservation.tripNumber ?? reservation.tripName ?? "") \(route(reservation.departure, reservation.arrival, code: false))"
        case .boat: return "Boat \(reservation.name ?? "") \(route(reservation.departure, reservation.arrival, code: false))"
        case .restaurant: return "Reservation at \(reservation.name ?? reservation.location?.name ?? "a restaurant")"
        case .lodging: return "Stay at \(reservation.name ?? reservation.location?.name ?? "a hotel")"
        case .rentalCar: return "Car rental\(reservation.provider?.name.map { " with \($0)" } ?? "")"
        case .event: return (reservation.isMovie ? "Movie: " : "") + (reservation.name ?? "Event")
        }
    }

    static func location(_ reservation: Reservation) -> String? {
        let place = reservation.location ?? reservation.departure
        guard let place else { return nil }
        let address = place.address.map { address in
            [address.streetAddress, address.addressLocality, address.addressRegion, address.postalCode, address.addressCountry]
                .compactMap { $0 }.joined(separator: ", ")
        }
        return [place.name, address].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
    }

    /// `:VALUE` text: an instant in UTC (`;…:20270305T043000Z` style, the same moment whatever the
    /// reader's zone), or a date (`;VALUE=DATE:20260626`) for date-only values.
    static func dateValue(_ time: ReservationTime, exclusiveDate: Bool = false) -> String? {
        if time.isDateOnly {
            let digits = time.localDate.filter(\.isNumber)
            guard digits.count == 8 else { return nil }
            return ";VALUE=DATE:\(digits)"
        }
        guard let instant = time.instant else { return nil }
        return ":\(utc(instant))"
    }

    /// `20270305T041500Z`: RFC 5545 §3.3.5 form #2, UTC.
    static func utc(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted, timeZone: .gmt))
    }

    /// TEXT escaping (RFC 5545 §3.3.11).
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n": out += "\\n"
            case "\r": continue
            default: out.append(character)
            }
        }
        return out
    }

    /// Lines longer than 75 octets are folded with CRLF and a space (RFC 5545 §3.1), never inside a character.
    static func fold(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var out = ""
        var current = 0
        var limit = 75
        for character in line {
            let size = character.utf8.count
            if current + size > limit {
                out += "\r\n "
                current = 0
                limit = 74
            }
            out.append(character)
            current += size
        }
        return out
    }
}
