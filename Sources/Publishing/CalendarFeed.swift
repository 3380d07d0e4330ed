package import Foundation
package import Reservations
package import Store

/// An owner's reservations as an iCalendar object (RFC 5545) that subscribed calendars keep current: one VEVENT per
/// confirmed or cancelled item, under a UID that stays the same for the item's whole life, SEQUENCE growing with each
/// version, STATUS:CANCELLED once cancelled. Pending and held items produce no event.
///
/// The owner decides what shows (issue 16): an accepted reservation is `STATUS:CONFIRMED`, a suggested one
/// `STATUS:TENTATIVE` (or absent, when the owner hides suggestions), a declined one never appears.
///
/// What a subscribed calendar needs to stay current and useful:
/// - `REFRESH-INTERVAL` and `X-PUBLISHED-TTL` (RFC 7986 §5.7; the second for clients that predate it) say how often
///   to fetch the feed again.
/// - Times are local with `TZID` and a matching `VTIMEZONE` where the zone of the place a time belongs to is known
///   (the departure airport for a departure, the hotel for a check-in): the zone the resolver inferred, or the
///   place's zone when it agrees with the offset the sender wrote. Where no zone is known a time is in UTC, or
///   floating when not even its offset is; a date alone is a DATE.
/// - `LOCATION` with the place's name and address, `GEO` from its coordinates, `URL` where the markup gives one.
///
/// The output depends on the records only (no "now" in it), so a feed that did not change renders to the same
/// bytes and its ETag stays the same. Without METHOD (a subscribed feed is not an iTIP message, RFC 5546), DTSTAMP
/// is when the event's information was last revised in the store (RFC 5545 §3.8.7.2): the record's content or its
/// consent, whichever changed last.
package enum CalendarFeed {
    /// How the feed describes itself.
    package struct Options: Sendable, Hashable {
        /// How often subscribers should fetch it again (REFRESH-INTERVAL, X-PUBLISHED-TTL).
        package var refreshInterval: TimeInterval = 900
        /// The calendar's name (NAME, X-WR-CALNAME), when given.
        package var name: String?
        /// How the owner wants suggested reservations shown (their profile's setting).
        package var suggested: OwnerProfile.SuggestedInCalendar

        package init(
            refreshInterval: TimeInterval = 900, name: String? = nil, suggested: OwnerProfile.SuggestedInCalendar = .tentative
        ) {
            self.refreshInterval = refreshInterval
            self.name = name
            self.suggested = suggested
        }
    }

    package static func render(_ reservations: [StoredReservation], options: Options = Options()) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//gateway//reservations//EN", "CALSCALE:GREGORIAN"]
        if let name = options.name {
            lines.append("NAME:\(escape(name))")
            lines.append("X-WR-CALNAME:\(escape(name))")
        }
        let refresh = duration(options.refreshInterval)
        lines.append("REFRESH-INTERVAL;VALUE=DURATION:\(refresh)")
        lines.append("X-PUBLISHED-TTL:\(refresh)")
        var events: [String] = []
        var zones: [String: [Date]] = [:]
        for stored in reservations.sorted(by: { $0.id < $1.id }) {
            guard stored.status == .confirmed || stored.status == .cancelled,
                isShown(stored.consent.state, options.suggested),
                let reservation = StoredPayload.reservation(stored: stored.payload)
            else { continue }
            events += event(for: reservation, stored: stored, zones: &zones)
        }
        for identifier in zones.keys.sorted() {
            guard let zone = TimeZone(identifier: identifier), let instants = zones[identifier] else { continue }
            lines += timeZone(zone, identifier: identifier, covering: instants)
        }
        lines += events
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// The VEVENT of one item; adds each zone its times use, with those times, to `zones`.
    static func event(for reservation: Reservation, stored: StoredReservation, zones: inout [String: [Date]]) -> [String] {
        let (startPlace, endPlace) = places(of: reservation)
        guard let start = reservation.startTime, let startValue = value(of: start, at: startPlace, zones: &zones) else {
            return []
        }
        var lines = ["BEGIN:VEVENT"]
        lines.append("UID:\(uid(stored))")
        lines.append("DTSTAMP:\(utc(stored.lastChangedAt))")
        lines.append("LAST-MODIFIED:\(utc(stored.lastChangedAt))")
        lines.append("SEQUENCE:\(max(0, stored.version - 1))")
        lines.append("STATUS:\(status(stored))")
        lines.append("DTSTART\(startValue)")
        if let end = reservation.endTime, end.isDateOnly == start.isDateOnly,
            let endValue = value(of: end, at: endPlace, exclusiveDate: true, zones: &zones)
        {
            lines.append("DTEND\(endValue)")
        } else if start.isDateOnly {
            lines.append("DURATION:P1D")
        } else {
            lines.append("DURATION:PT2H")  // a meal, a show: two hours unless the sender says otherwise
        }
        lines.append("SUMMARY:\(escape(title(reservation)))")
        let place = reservation.location ?? reservation.departure
        if let location = place.flatMap(location) { lines.append("LOCATION:\(escape(location))") }
        if let geo = place?.geo { lines.append("GEO:\(coordinate(geo.latitude));\(coordinate(geo.longitude))") }
        let checkIn = reservation.actions?.first { $0.type == .checkIn }
        // The page of the reservation; without one, where the owner checks in (issue 17).
        if let url = reservation.url ?? checkIn?.url, url.hasPrefix("https://") || url.hasPrefix("http://") {
            lines.append("URL:\(url)")
        }
        var description = ["Reservation \(reservation.reservationId ?? stored.containerReference)"]
        if let name = reservation.underName { description.append("Under the name \(name)") }
        if let provider = reservation.provider?.name { description.append("With \(provider)") }
        description.append("From \(stored.sourceDomain)")
        if let url = checkIn?.url { description.append("Check in: \(url)") }
        lines.append("DESCRIPTION:\(escape(description.joined(separator: "\n")))")
        lines += alarm(checkIn, title: title(reservation), stored: stored)
        lines.append("END:VEVENT")
        return lines
    }

    /// Whether a reservation with this consent appears at all.
    static func isShown(_ consent: Consent.State, _ suggested: OwnerProfile.SuggestedInCalendar) -> Bool {
        switch consent {
        case .accepted: true
        case .suggested: suggested == .tentative
        case .declined: false
        }
    }

    /// RFC 5545 §3.8.1.11: cancelled whatever the consent; confirmed once accepted; tentative while suggested.
    static func status(_ stored: StoredReservation) -> String {
        if stored.status == .cancelled { return "CANCELLED" }
        return stored.consent.state == .accepted ? "CONFIRMED" : "TENTATIVE"
    }

    /// A VALARM (RFC 5545 §3.6.6) at the instant check-in opens, for a live item whose check-in window start is known
    /// (given, or the 24 hours before a departure inferred for a flight).
    static func alarm(_ checkIn: ReservationAction?, title: String, stored: StoredReservation) -> [String] {
        guard stored.status == .confirmed, let checkIn, let opens = checkIn.validFromDate else { return [] }
        var text = "Check-in opens: \(title)"
        if let url = checkIn.url { text += " \(url)" }
        return [
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER;VALUE=DATE-TIME:\(utc(opens))", "DESCRIPTION:\(escape(text))",
            "END:VALARM",
        ]
    }

    /// Where the start and the end of an item are: departure and arrival for a trip or a rental, the venue for a
    /// stay, a table or an event.
    static func places(of reservation: Reservation) -> (start: Place?, end: Place?) {
        (reservation.departure ?? reservation.location, reservation.arrival ?? reservation.location)
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

    /// The place's name and its address, as one line.
    static func location(_ place: Place) -> String? {
        let address = place.address.map { address in
            [address.streetAddress, address.postalCode.map { code in
                [code, address.addressLocality].compactMap { $0 }.joined(separator: " ")
            } ?? address.addressLocality, address.addressRegion, address.addressCountry]
                .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
        }
        let text = [place.name, address].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
        return text.isEmpty ? nil : text
    }

    // MARK: - Times

    /// The zone of a time: the zone the resolver inferred for it, else the zone of its place when that zone has the
    /// offset the sender wrote at that instant. Nil for a date alone and where no zone is known.
    static func zone(of time: ReservationTime, at place: Place?) -> (identifier: String, zone: TimeZone)? {
        guard !time.isDateOnly, let instant = time.instant else { return nil }
        if let identifier = time.timeZoneIdentifier, let zone = TimeZone(identifier: identifier) {
            return (identifier, zone)
        }
        guard let place, let offset = time.utcOffsetSeconds,
            let identifier = TimeZoneDirectory.bundled.zone(of: place), let zone = TimeZone(identifier: identifier),
            zone.secondsFromGMT(for: instant) == offset
        else { return nil }
        return (identifier, zone)
    }

    /// A DTSTART or DTEND value, parameters included: `;TZID=Europe/Oslo:20260626T082500` where the zone is known,
    /// `:20260626T062500Z` where only the offset is, `:20260626T082500` (floating) where neither is,
    /// `;VALUE=DATE:20260626` for a date alone. Records each zone used, with the instant, in `zones`.
    static func value(
        of time: ReservationTime, at place: Place?, exclusiveDate: Bool = false, zones: inout [String: [Date]]
    ) -> String? {
        if time.isDateOnly {
            let digits = time.localDate.filter(\.isNumber)
            guard digits.count == 8 else { return nil }
            return ";VALUE=DATE:\(digits)"
        }
        if let (identifier, zone) = zone(of: time, at: place), let instant = time.instant {
            zones[identifier, default: []].append(instant)
            return ";TZID=\(identifier):\(local(instant, offset: zone.secondsFromGMT(for: instant)))"
        }
        if let instant = time.instant { return ":\(utc(instant))" }
        let date = time.localDate.filter(\.isNumber)
        let clock = (time.localTime ?? "").filter(\.isNumber).prefix(6)
        guard date.count == 8, clock.count >= 4 else { return nil }
        return ":\(date)T\(clock.padding(toLength: 6, withPad: "0", startingAt: 0))"
    }

    /// A VTIMEZONE for `zone` (RFC 5545 §3.6.5) that is right at every one of `instants`: each change of offset from
    /// the last one before the earliest instant to the latest instant, as an observance of its own (no RRULE, so a
    /// reader needs no rule arithmetic), or one STANDARD observance for a zone without changes.
    static func timeZone(_ zone: TimeZone, identifier: String, covering instants: [Date]) -> [String] {
        guard let earliest = instants.min(), let latest = instants.max() else { return [] }
        var transitions: [Date] = []
        var cursor = earliest.addingTimeInterval(-400 * 86_400)
        while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next <= latest {
            transitions.append(next)
            cursor = next
        }
        // The change in effect at the earliest instant, and every later one.
        if let firstInEffect = transitions.lastIndex(where: { $0 <= earliest }) {
            transitions.removeFirst(firstInEffect)
        }
        var lines = ["BEGIN:VTIMEZONE", "TZID:\(identifier)"]
        let before = zone.secondsFromGMT(for: (transitions.first ?? earliest).addingTimeInterval(-1))
        if transitions.first.map({ $0 > earliest }) ?? true {
            // Nothing changes before the earliest instant in the window: one observance from 1970 with that offset.
            let offset = transitions.isEmpty ? zone.secondsFromGMT(for: earliest) : before
            lines += observance(
                daylight: transitions.isEmpty ? zone.isDaylightSavingTime(for: earliest) : false,
                start: "19700101T000000", from: offset, to: offset,
                name: zone.abbreviation(for: transitions.first?.addingTimeInterval(-1) ?? earliest))
        }
        for transition in transitions {
            let from = zone.secondsFromGMT(for: transition.addingTimeInterval(-1))
            let to = zone.secondsFromGMT(for: transition)
            lines += observance(
                daylight: zone.isDaylightSavingTime(for: transition), start: local(transition, offset: from), from: from,
                to: to, name: zone.abbreviation(for: transition))
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    static func observance(daylight: Bool, start: String, from: Int, to: Int, name: String?) -> [String] {
        let kind = daylight ? "DAYLIGHT" : "STANDARD"
        var lines = [
            "BEGIN:\(kind)", "DTSTART:\(start)", "TZOFFSETFROM:\(offset(from))", "TZOFFSETTO:\(offset(to))",
        ]
        // Abbreviations such as CEST; not the "GMT+2" Foundation makes up where the zone has none.
        if let name, !name.isEmpty, name.allSatisfy(\.isLetter) { lines.append("TZNAME:\(name)") }
        lines.append("END:\(kind)")
        return lines
    }

    /// `+0200`, `-0800`, `+0530` (RFC 5545 §3.3.14; seconds only where the offset has them).
    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let magnitude = abs(seconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text = sign + two(magnitude / 3600) + two(magnitude % 3600 / 60)
        return magnitude % 60 == 0 ? text : text + two(magnitude % 60)
    }

    /// `20270304T201500`: the wall clock at `instant` in a zone `offset` seconds east of UTC (RFC 5545 §3.3.5 form #3
    /// without its TZID).
    static func local(_ instant: Date, offset: Int) -> String {
        String(utc(instant.addingTimeInterval(Double(offset))).dropLast())
    }

    /// `20270305T041500Z`: RFC 5545 §3.3.5 form #2, UTC.
    static func utc(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted, timeZone: .gmt))
    }

    /// `PT15M`, `PT1H30M`, `P1D` (RFC 5545 §3.3.6).
    static func duration(_ interval: TimeInterval) -> String {
        let seconds = max(1, Int(interval.rounded()))
        if seconds % 86_400 == 0 { return "P\(seconds / 86_400)D" }
        var text = "PT"
        if seconds >= 3600 { text += "\(seconds / 3600)H" }
        if seconds % 3600 >= 60 { text += "\(seconds % 3600 / 60)M" }
        if seconds % 60 > 0 { text += "\(seconds % 60)S" }
        return text
    }

    /// A GEO coordinate: decimal degrees, at most six decimals (about 10 cm), no trailing zeros.
    static func coordinate(_ degrees: Double) -> String {
        var text = String(format: "%.6f", degrees)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
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
