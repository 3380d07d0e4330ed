import Foundation
import Markup
import Reservations
import Testing

/// Times whose offset contradicts their place, and arrivals before departures, as senders write them
/// (MARKUP.md, Times).
@Suite("Times: offsets that contradict the place")
struct OffsetMismatchTests {
    static func train(departure: String, arrival: String = "2027-07-04T14:32:00+02:00", country: String = "DE") throws
        -> Resolution
    {
        var object = try GraphBuilder.object(Samples.appleTrain)
        object = GraphBuilder.setting("reservationFor.departureTime", to: departure, in: object)
        object = GraphBuilder.setting("reservationFor.arrivalTime", to: arrival, in: object)
        object = GraphBuilder.setting("reservationFor.departureStation.address.addressCountry", to: country, in: object)
        return try resolveOne(object: object)
    }

    @Test func theOffsetOfTheStationsZoneAtThatDateIsExpected() throws {
        // Germany is on +02:00 in July; +01:00 is its winter offset, a template's fixed value.
        let summer = try Self.train(departure: "2027-07-04T10:30:00+02:00")
        #expect(summer.diagnostics.isEmpty, "\(summer.diagnostics)")
        let winterOffset = try Self.train(departure: "2027-07-04T10:30:00+01:00")
        #expect(winterOffset.codes(at: "reservationFor.departureTime") == ["time.offset-mismatch"])
        #expect(winterOffset.warnings == ["time.offset-mismatch@reservationFor.departureTime"])
        #expect(winterOffset.admissible)
        let time = try #require(winterOffset.reservation?.startTime)
        #expect(time.resolved == "2027-07-04T10:30:00+01:00", "the written instant is kept")
        #expect(time.utcOffsetSeconds == 3600)
        let message = try #require(winterOffset.diagnostics.first?.message)
        #expect(message.contains("Europe/Berlin") && message.contains("+02:00"), "\(message)")
    }

    @Test func localTimeWrittenAsUTCIsFlagged() throws {
        // "Z" appended to a local departure time at Heathrow in summer (+01:00).
        var object = try GraphBuilder.object(Samples.appleFlight)
        object = GraphBuilder.setting("reservationFor.departureAirport.iataCode", to: "LHR", in: object)
        object = GraphBuilder.setting("reservationFor.departureTime", to: "2027-06-18T06:35:00Z", in: object)
        object = GraphBuilder.setting("reservationFor.arrivalTime", to: "2027-06-18T09:40:00-04:00", in: object)
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["time.offset-mismatch"])
        #expect(resolution.codes(at: "reservationFor.arrivalTime").isEmpty, "Newark is on -04:00 in June")
        #expect(resolution.reservation?.startTime?.instant == ISO8601DateFormatter().date(from: "2027-06-18T06:35:00Z"))
    }

    @Test func theArrivalIsCheckedAgainstItsOwnPlace() throws {
        let resolution = try Self.train(departure: "2027-07-04T10:30:00+02:00", arrival: "2027-07-04T14:32:00+00:00")
        #expect(resolution.codes(at: "reservationFor.arrivalTime") == ["time.offset-mismatch"])
    }

    @Test func aPlaceWithSeveralZonesIsNotChecked() throws {
        // A US station: the country has several zones, so no offset can be expected.
        let resolution = try Self.train(departure: "2027-07-04T10:30:00-03:00", country: "US")
        #expect(resolution.codes(at: "reservationFor.departureTime").isEmpty)
    }

    @Test func aTimeWithoutOffsetIsStillInferredNotFlagged() throws {
        let resolution = try Self.train(departure: "2027-07-04T10:30:00")
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.time-zone-inferred"])
        #expect(resolution.reservation?.startTime?.resolved == "2027-07-04T10:30:00+02:00")
    }

    @Test func otherKindsAreCheckedAgainstTheirPlace() throws {
        var lodging = try GraphBuilder.object(Samples.appleLodging)
        lodging = GraphBuilder.setting("reservationFor.address.addressCountry", to: "FR", in: lodging)
        lodging = GraphBuilder.setting("checkinTime", to: "2027-04-10T16:00:00-07:00", in: lodging)
        lodging = GraphBuilder.setting("checkoutTime", to: "2027-04-12T11:00:00+02:00", in: lodging)
        let resolution = try resolveOne(object: lodging)
        #expect(resolution.codes(at: "checkinTime") == ["time.offset-mismatch"])
        #expect(resolution.codes(at: "checkoutTime").isEmpty)
    }
}
