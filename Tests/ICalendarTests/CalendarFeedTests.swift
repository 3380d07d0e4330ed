import Foundation
@testable import ICalendar
import Reservations
import Store
import Testing

@Suite("iCalendar feed (RFC 5545)")
struct CalendarFeedTests {
    func time(_ text: String, instant: TimeInterval?, dateOnly: Bool = false) -> ReservationTime {
        ReservationTime(
            original: text, resolved: text, isDateOnly: dateOnly, localDate: String(text.prefix(10)),
            localTime: dateOnly ? nil : String(text.dropFirst(11).prefix(5)), zone: .given,
            instant: instant.map(Date.init(timeIntervalSince1970:)), utcOffsetSeconds: nil, timeZoneIdentifier: nil)
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

    func stored(_ reservation: Reservation, version: Int = 1, status: StoredReservation.Status = .confirmed, item: String = "RXJ34P-UA110") throws -> StoredReservation {
        let payload = try JSONEncoder().encode(StoredPayload(reservation: reservation, markup: .object([:])))
        return StoredReservation(
            id: 1,
            key: ReservationKey(owner: OwnerAddress("eva@guest.example.net")!, sourceDomain: "skyways.example", itemReference: item),
            content: ReservationContent(containerReference: "RXJ34P", status: status, kind: "flight", payload: payload, source: "test"),
            version: version, createdAt: Date(), updatedAt: Date(), cancelledAt: nil)
    }

    @Test("A confirmed flight is one VEVENT with UTC times, a title, a location and CRLF lines")
    func confirmedFlight() throws {
        var record = try stored(flight())
        record.updatedAt = Date(timeIntervalSince1970: 1_800_000_000)
        let feed = CalendarFeed.render([record])
        #expect(feed.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"))
        #expect(feed.hasSuffix("END:VCALENDAR\r\n"))
        #expect(feed.contains("\r\nDTSTART:20270305T041500Z\r\n"))
        #expect(feed.contains("\r\nDTEND:20270305T113000Z\r\n"))
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

    @Test("UTC formatting around the epoch and leap days", arguments: [
        (0.0, "19700101T000000Z"), (951_782_400, "20000229T000000Z"), (-86_400, "19691231T000000Z"), (4_107_542_399, "21000228T235959Z"), (4_107_542_400, "21000301T000000Z"),
    ])
    func utc(seconds: Double, expected: String) {
        #expect(CalendarFeed.utc(Date(timeIntervalSince1970: seconds)) == expected)
    }
}
