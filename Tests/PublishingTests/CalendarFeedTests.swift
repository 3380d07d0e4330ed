import Foundation
@testable import Publishing
import Reservations
import Store
import Testing

@Suite("iCalendar feed (RFC 5545)")
struct CalendarFeedTests {
    /// A time as the resolver reads one with an offset (`2027-03-04T20:15:00-08:00`), or a date alone.
    func time(_ text: String, instant: TimeInterval?, dateOnly: Bool = false) -> ReservationTime {
        var offset: Int?
        if !dateOnly, text.count == 25, let hours = Int(text.suffix(6).prefix(3)), let minutes = Int(text.suffix(2)) {
            offset = hours * 3600 + (hours < 0 ? -minutes : minutes) * 60
        }
        return ReservationTime(
            original: text, resolved: text, isDateOnly: dateOnly, localDate: String(text.prefix(10)),
            localTime: dateOnly ? nil : String(text.dropFirst(11).prefix(5)), zone: .given,
            instant: instant.map(Date.init(timeIntervalSince1970:)), utcOffsetSeconds: offset, timeZoneIdentifier: nil)
    }

    /// The lines of a feed, without TZNAME (an abbreviation some platforms' zone data does not have: it is written
    /// only when there is one).
    func lines(_ feed: String) -> [String] {
        feed.components(separatedBy: "\r\n").filter { !$0.hasPrefix("TZNAME:") }
    }

    func flight(status: Reservation.Status = .confirmed) -> Reservation {
        var reservation = Reservation(kind: .flight)
        reservation.reservationId = "RXJ34P"
        reservation.status = status
        reservation.underName = "Eva Green"
        reservation.flightNumber = "UA110"
        var departure = Place()
        departure.iataCode = "SFO"
        departure.name = "San Francisco, International"
        var arrival = Place()
        arrival.iataCode = "EWR"
        reservation.departure = departure
        reservation.arrival = arrival
        reservation.startTime = time("2027-03-04T20:15:00-08:00", instant: 1_804_220_100)
        reservation.endTime = time("2027-03-05T06:30:00-05:00", instant: 1_804_246_200)
        return reservation
    }

    func stored(
        _ reservation: Reservation, version: Int = 1, status: StoredReservation.Status = .confirmed,
        item: String = "RXJ34P-UA110", consent: Consent.State = .accepted
    ) throws -> StoredReservation {
        let payload = try JSONEncoder().encode(StoredPayload(reservation: reservation, markup: .object([:])))
        return StoredReservation(
            id: 1,
            key: ReservationKey(owner: OwnerAddress("eva@guest.example.net")!, sourceDomain: "skyways.example", itemReference: item),
            content: ReservationContent(containerReference: "RXJ34P", status: status, kind: "flight", payload: payload, source: "test"),
            version: version, createdAt: Date(), updatedAt: Date(), cancelledAt: nil,
            consent: Consent(consent, reason: .owner, changedAt: Date(timeIntervalSince1970: 1_700_000_000)))
    }

    @Test("The owner decides: accepted is confirmed, suggested tentative or hidden, declined never shown")
    func consent() throws {
        let accepted = try stored(flight())
        let suggested = try stored(flight(), item: "RXJ34P-UA111", consent: .suggested)
        var declined = try stored(flight(), item: "RXJ34P-UA112", consent: .declined)
        declined.id = 3
        let feed = CalendarFeed.render([accepted, suggested, declined])
        #expect(feed.components(separatedBy: "BEGIN:VEVENT").count == 3)
        #expect(feed.contains("STATUS:CONFIRMED"))
        #expect(feed.contains("STATUS:TENTATIVE"))
        let hidden = CalendarFeed.render([accepted, suggested, declined], options: .init(suggested: .hidden))
        #expect(hidden.components(separatedBy: "BEGIN:VEVENT").count == 2)
        #expect(!hidden.contains("TENTATIVE"))
        // A cancellation shows as cancelled whatever the consent, unless declined.
        let cancelled = try stored(flight(status: .cancelled), status: .cancelled, consent: .suggested)
        #expect(CalendarFeed.render([cancelled]).contains("STATUS:CANCELLED"))
        let declinedCancelled = try stored(flight(status: .cancelled), status: .cancelled, consent: .declined)
        #expect(!CalendarFeed.render([declinedCancelled]).contains("BEGIN:VEVENT"))
        // A decision changes the stamps (and so the feed's ETag), not the sequence.
        var later = accepted
        later.consent.changedAt = Date(timeIntervalSince1970: 1_900_000_000)
        later.updatedAt = Date(timeIntervalSince1970: 1_800_000_000)
        let stamped = CalendarFeed.render([later])
        #expect(stamped.contains("DTSTAMP:20300317T174640Z"))
        #expect(stamped.contains("SEQUENCE:0"))
    }

    @Test("A confirmed flight is one VEVENT with local times in the airports' zones, a title, a location and CRLF lines")
    func confirmedFlight() throws {
        var record = try stored(flight())
        record.updatedAt = Date(timeIntervalSince1970: 1_800_000_000)
        let feed = CalendarFeed.render([record])
        #expect(feed.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"))
        #expect(feed.hasSuffix("END:VCALENDAR\r\n"))
        // SFO and EWR, whose zones have the offsets the sender wrote at those instants.
        #expect(feed.contains("\r\nDTSTART;TZID=America/Los_Angeles:20270304T201500\r\n"))
        #expect(feed.contains("\r\nDTEND;TZID=America/New_York:20270305T063000\r\n"))
        #expect(feed.contains("\r\nBEGIN:VTIMEZONE\r\nTZID:America/Los_Angeles\r\n"))
        #expect(feed.contains("\r\nBEGIN:VTIMEZONE\r\nTZID:America/New_York\r\n"))
        #expect(feed.contains("\r\nREFRESH-INTERVAL;VALUE=DURATION:PT15M\r\nX-PUBLISHED-TTL:PT15M\r\n"))
        #expect(feed.contains("\r\nSUMMARY:Flight UA110 SFO → EWR\r\n"))
        #expect(feed.contains("\r\nLOCATION:San Francisco\\, International\r\n"))
        #expect(feed.contains("\r\nSTATUS:CONFIRMED\r\nDTSTART"))
        #expect(feed.contains("\r\nDTSTAMP:20270115T080000Z\r\nLAST-MODIFIED:20270115T080000Z\r\n"))
        // The same records render to the same bytes (the server's ETag depends on it).
        #expect(CalendarFeed.render([record]) == feed)
        #expect(!feed.contains("\n\n"))
    }

    @Test("The UID stays the same across versions; SEQUENCE follows the version; a cancellation says so")
    func lifecycle() throws {
        let first = CalendarFeed.render([try stored(flight())])
        let updated = CalendarFeed.render([try stored(flight(), version: 3)])
        let cancelled = CalendarFeed.render([try stored(flight(status: .cancelled), version: 4, status: .cancelled)])
        func uid(_ feed: String) -> Substring? { feed.split(separator: "\r\n").first { $0.hasPrefix("UID:") } }
        #expect(uid(first) != nil)
        #expect(uid(first) == uid(updated))
        #expect(uid(first) == uid(cancelled))
        #expect(uid(first) != uid(CalendarFeed.render([try stored(flight(), item: "RXJ34P-UA111")])))
        #expect(first.contains("SEQUENCE:0"))
        #expect(updated.contains("SEQUENCE:2"))
        #expect(cancelled.contains("STATUS:CANCELLED"))
    }

    @Test("Pending and held reservations produce no event")
    func pendingHasNoEvent() throws {
        for status in [StoredReservation.Status.pending, .hold] {
            #expect(!CalendarFeed.render([try stored(flight(), status: status)]).contains("BEGIN:VEVENT"))
        }
    }

    @Test("A date-only stay is an all-day event")
    func allDay() throws {
        var stay = Reservation(kind: .lodging)
        stay.reservationId = "H1"
        stay.name = "Hotel Bergen; Harbour"
        stay.startTime = time("2026-06-26", instant: nil, dateOnly: true)
        stay.endTime = time("2026-06-28", instant: nil, dateOnly: true)
        let feed = CalendarFeed.render([try stored(stay, item: "H1")])
        #expect(feed.contains("DTSTART;VALUE=DATE:20260626"))
        #expect(feed.contains("DTEND;VALUE=DATE:20260628"))
        #expect(feed.contains("SUMMARY:Stay at Hotel Bergen\\; Harbour"))
    }

    @Test("Long lines fold at 75 octets without splitting a character", arguments: [80, 200, 1000])
    func folding(length: Int) {
        let line = "DESCRIPTION:" + String(repeating: "é", count: length)
        let folded = CalendarFeed.fold(line)
        for physical in folded.components(separatedBy: "\r\n") { #expect(physical.utf8.count <= 75) }
        #expect(folded.replacingOccurrences(of: "\r\n ", with: "") == line)
    }

    @Test("An offset that is not the place's zone's stays UTC; a time without an offset or a place stays floating")
    func zonesOnlyWhereKnown() throws {
        var wrongOffset = flight()
        // SFO is at -08:00 on that day: +01:00 cannot be Los Angeles time.
        wrongOffset.startTime = time("2027-03-05T05:15:00+01:00", instant: 1_804_220_100)
        wrongOffset.endTime = nil
        let utcFeed = CalendarFeed.render([try stored(wrongOffset)])
        #expect(utcFeed.contains("\r\nDTSTART:20270305T041500Z\r\n"))
        #expect(!utcFeed.contains("VTIMEZONE"))

        var floating = Reservation(kind: .restaurant)
        floating.reservationId = "T1"
        floating.name = "Somewhere"
        floating.startTime = ReservationTime(
            original: "2027-03-04T19:30:00", resolved: "2027-03-04T19:30:00", isDateOnly: false, localDate: "2027-03-04",
            localTime: "19:30:00", zone: .floating, instant: nil, utcOffsetSeconds: nil, timeZoneIdentifier: nil)
        let floatingFeed = CalendarFeed.render([try stored(floating, item: "T1")])
        #expect(floatingFeed.contains("\r\nDTSTART:20270304T193000\r\nDURATION:PT2H\r\n"))
    }

    @Test("An inferred zone is used as inferred; its VTIMEZONE has the change in effect and the later ones")
    func inferredZone() throws {
        var train = Reservation(kind: .train)
        train.reservationId = "B9C8"
        train.tripNumber = "812"
        var oslo = Place(name: "Oslo S")
        oslo.address = Place.Address(streetAddress: "Jernbanetorget 1", addressLocality: "Oslo", postalCode: "0154", addressCountry: "NO", countryCode: "NO")
        oslo.geo = Place.Geo(latitude: 59.910_848, longitude: 10.752_250)
        train.departure = oslo
        train.arrival = Place(name: "Bergen stasjon")
        train.url = "https://nordic-rail.example/b/B9C8"
        train.startTime = ReservationTime(
            original: "2026-06-26T08:25:00", resolved: "2026-06-26T08:25:00+02:00", isDateOnly: false,
            localDate: "2026-06-26", localTime: "08:25:00", zone: .inferred, instant: Date(timeIntervalSince1970: 1_782_455_100),
            utcOffsetSeconds: 7200, timeZoneIdentifier: "Europe/Oslo")
        // Arrival in winter: both offsets of the zone appear.
        train.endTime = ReservationTime(
            original: "2026-12-26T15:10:00", resolved: "2026-12-26T15:10:00+01:00", isDateOnly: false,
            localDate: "2026-12-26", localTime: "15:10:00", zone: .inferred, instant: Date(timeIntervalSince1970: 1_798_294_200),
            utcOffsetSeconds: 3600, timeZoneIdentifier: "Europe/Oslo")
        let feed = CalendarFeed.render([try stored(train, item: "B9C8")], options: .init(refreshInterval: 3600, name: "Eva's trips"))
        #expect(feed.contains("\r\nDTSTART;TZID=Europe/Oslo:20260626T082500\r\n"))
        #expect(feed.contains("\r\nDTEND;TZID=Europe/Oslo:20261226T151000\r\n"))
        #expect(feed.contains("\r\nLOCATION:Oslo S\\, Jernbanetorget 1\\, 0154 Oslo\\, NO\r\n"))
        #expect(feed.contains("\r\nGEO:59.910848;10.75225\r\n"))
        #expect(feed.contains("\r\nURL:https://nordic-rail.example/b/B9C8\r\n"))
        #expect(feed.contains("\r\nNAME:Eva's trips\r\nX-WR-CALNAME:Eva's trips\r\nREFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n"))
        // The VTIMEZONE: summer time in effect since 2026-03-29 01:00 UTC (02:00 local before the change), winter time
        // from 2026-10-25.
        let expected = [
            "BEGIN:VTIMEZONE", "TZID:Europe/Oslo",
            "BEGIN:DAYLIGHT", "DTSTART:20260329T020000", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "END:DAYLIGHT",
            "BEGIN:STANDARD", "DTSTART:20261025T030000", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "END:STANDARD",
            "END:VTIMEZONE",
        ].joined(separator: "\r\n")
        #expect(lines(feed).joined(separator: "\r\n").contains(expected))
    }

    @Test("A zone without changes is one STANDARD observance from 1970")
    func zoneWithoutChanges() {
        let lines = CalendarFeed.timeZone(
            TimeZone(identifier: "Asia/Tokyo")!, identifier: "Asia/Tokyo", covering: [Date(timeIntervalSince1970: 1_800_000_000)])
        #expect(lines.filter { !$0.hasPrefix("TZNAME:") } == [
            "BEGIN:VTIMEZONE", "TZID:Asia/Tokyo", "BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:+0900",
            "TZOFFSETTO:+0900", "END:STANDARD", "END:VTIMEZONE",
        ])
    }

    @Test("Durations and offsets in RFC 5545's forms", arguments: [
        (900.0, "PT15M"), (3600, "PT1H"), (5400, "PT1H30M"), (86_400, "P1D"), (90, "PT1M30S"),
    ])
    func durations(seconds: Double, expected: String) {
        #expect(CalendarFeed.duration(seconds) == expected)
    }

    @Test func offsets() {
        #expect(CalendarFeed.offset(-28_800) == "-0800")
        #expect(CalendarFeed.offset(19_800) == "+0530")
        #expect(CalendarFeed.offset(0) == "+0000")
        #expect(CalendarFeed.coordinate(-0.000_000_1) == "0")
        #expect(CalendarFeed.coordinate(37.5) == "37.5")
    }

    @Test("UTC formatting around the epoch and leap days", arguments: [
        (0.0, "19700101T000000Z"), (951_782_400, "20000229T000000Z"), (-86_400, "19691231T000000Z"), (4_107_542_399, "21000228T235959Z"), (4_107_542_400, "21000301T000000Z"),
    ])
    func utc(seconds: Double, expected: String) {
        #expect(CalendarFeed.utc(Date(timeIntervalSince1970: seconds)) == expected)
    }
}
