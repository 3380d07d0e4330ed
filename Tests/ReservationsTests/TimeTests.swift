import Foundation
import Markup
import Reservations
import Testing

@Suite("Times: offsets as given, zones inferred from the place, sanity checks in UTC")
struct TimeTests {
    func flight(departure: String, from airport: String = "SFO", arrival: String = "2027-12-31T18:00:00-05:00") throws -> Resolution {
        var object = try GraphBuilder.object(Samples.appleFlight)
        object = GraphBuilder.setting("reservationFor.departureTime", to: departure, in: object)
        object = GraphBuilder.setting("reservationFor.departureAirport.iataCode", to: airport, in: object)
        object = GraphBuilder.setting("reservationFor.arrivalTime", to: arrival, in: object)
        return try resolveOne(object: object)
    }

    /// A fixed reference parser for expected instants.
    static func utc(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) ?? .distantPast
    }

    /// The offset as written, whatever it is; one that is not San Francisco's in March (-08:00) is
    /// flagged `time.offset-mismatch`, a warning.
    @Test(arguments: [
        ("2027-03-04T20:15:00-08:00", "2027-03-05T04:15:00Z", -28_800),
        ("2027-03-04T20:15-08:00", "2027-03-05T04:15:00Z", -28_800),
        ("2027-03-04T20:15:00.500-08:00", "2027-03-05T04:15:00.500Z", -28_800),
        ("2027-03-04T20:15:00Z", "2027-03-04T20:15:00Z", 0),
        ("2027-03-04T20:15:00z", "2027-03-04T20:15:00Z", 0),
        ("2027-03-04T20:15:00+0530", "2027-03-04T14:45:00Z", 19_800),
        ("2027-03-04T20:15:00+05", "2027-03-04T15:15:00Z", 18_000),
        ("2027-03-04 20:15:00+01:00", "2027-03-04T19:15:00Z", 3600),
        ("  2027-03-04T20:15:00-08:00 ", "2027-03-05T04:15:00Z", -28_800),
    ])
    func offsetsAreKeptAsGiven(written: String, instant: String, offset: Int) throws {
        let resolution = try flight(departure: written)
        let time = try #require(resolution.reservation?.startTime)
        #expect(time.zone == .given)
        #expect(time.utcOffsetSeconds == offset)
        #expect(time.instant == Self.utc(instant))
        #expect(time.resolved == written.trimmingCharacters(in: .whitespaces))
        #expect(resolution.admissible)
        let flagged: Set<String> = offset == -28_800 ? [] : ["time.offset-mismatch"]
        #expect(resolution.codes(at: "reservationFor.departureTime") == flagged)
    }

    @Test(arguments: [
        "next tuesday", "2027-02-30T10:00:00Z", "2027-13-01T10:00:00Z", "2027-03-04T25:00:00Z",
        "2027-03-04T10:00:00+25:00", "2027-03-04+01:00", "2027-03-04T10", "2027-03-04T10:00:00 PST", "",
        String(repeating: "2", count: 10_000),
    ])
    func malformedDatetimesAreErrors(written: String) throws {
        let resolution = try flight(departure: written)
        if written.isEmpty {
            #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.missing-property"])
        } else {
            #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.invalid-datetime"])
        }
        #expect(!resolution.admissible)
        #expect(resolution.reservation?.startTime == nil)
    }

    @Test func leapDayIsAccepted() throws {
        let resolution = try flight(departure: "2028-02-29T10:00:00Z", arrival: "2028-02-29T14:00:00Z")
        #expect(resolution.admissible)
    }

    @Test func zoneInferredFromKnownAirport() throws {
        let resolution = try flight(departure: "2027-03-04T20:15:00")
        let time = try #require(resolution.reservation?.startTime)
        #expect(time.zone == .inferred)
        #expect(time.isZoneInferred)
        #expect(time.timeZoneIdentifier == "America/Los_Angeles")
        #expect(time.utcOffsetSeconds == -28_800)
        #expect(time.resolved == "2027-03-04T20:15:00-08:00")
        #expect(time.original == "2027-03-04T20:15:00")
        #expect(time.instant == Self.utc("2027-03-05T04:15:00Z"))
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.time-zone-inferred"])
        #expect(resolution.admissible)
        #expect(resolution.normalized["reservationFor"]?["departureTime"] == .string("2027-03-04T20:15:00-08:00"))
    }

    @Test(arguments: [
        ("2027-07-04T20:15:00", "SFO", -25_200),  // PDT
        ("2027-01-04T20:15:00", "SFO", -28_800),  // PST
        ("2027-07-04T09:00:00", "LHR", 3600),  // BST
        ("2027-01-04T09:00:00", "LHR", 0),
        ("2027-07-04T09:00:00", "PHX", -25_200),  // Arizona keeps MST
        ("2027-01-04T09:00:00", "SYD", 39_600),  // AEDT, southern summer
        ("2027-11-07T01:30:00", "JFK", -14_400),  // repeated hour: first occurrence (EDT)
    ])
    func daylightSavingTimeAtTheLocalTime(written: String, airport: String, offset: Int) throws {
        let resolution = try flight(departure: written, from: airport)
        #expect(resolution.reservation?.startTime?.utcOffsetSeconds == offset)
        #expect(resolution.reservation?.startTime?.zone == .inferred)
    }

    @Test func skippedLocalTimeIsReported() throws {
        let resolution = try flight(departure: "2027-03-14T02:30:00", from: "JFK")
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.time-zone-inferred", "markup.nonexistent-local-time"])
        #expect(resolution.reservation?.startTime?.utcOffsetSeconds == -18_000)
        #expect(resolution.reservation?.startTime?.instant == Self.utc("2027-03-14T07:30:00Z"))
    }

    @Test func unknownAirportIsRefused() throws {
        let resolution = try flight(departure: "2027-03-04T20:15:00", from: "QQQ")
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.missing-time-zone"])
        #expect(resolution.reservation?.startTime?.zone == .floating)
        #expect(resolution.reservation?.startTime?.instant == nil)
        #expect(!resolution.admissible)
    }

    func train(departure: String, country: String) throws -> Resolution {
        var object = try GraphBuilder.object(Samples.appleTrain)
        object = GraphBuilder.setting("reservationFor.departureTime", to: departure, in: object)
        object = GraphBuilder.setting("reservationFor.departureStation.address.addressCountry", to: country, in: object)
        return try resolveOne(object: object)
    }

    @Test(arguments: ["DE", "de", "DEU", "Germany", "Deutschland"])
    func zoneInferredFromSingleZoneCountry(country: String) throws {
        let resolution = try train(departure: "2027-05-04T10:30:00", country: country)
        let time = try #require(resolution.reservation?.startTime)
        #expect(time.timeZoneIdentifier == "Europe/Berlin")
        #expect(time.utcOffsetSeconds == 7200)
        #expect(time.resolved == "2027-05-04T10:30:00+02:00")
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.time-zone-inferred"])
        #expect(resolution.admissible)
    }

    @Test func countryNameFromCommonNames() throws {
        var object = try GraphBuilder.object(Samples.appleRestaurant)
        object["startTime"] = "2027-07-10T19:00:00"
        let resolution = try resolveOne(object: object)  // addressCountry "United Kingdom"
        #expect(resolution.reservation?.startTime?.timeZoneIdentifier == "Europe/London")
        #expect(resolution.reservation?.startTime?.resolved == "2027-07-10T19:00:00+01:00")
    }

    @Test(arguments: ["US", "United States", "RU", "AU"])
    func severalZonesAreRefused(country: String) throws {
        let resolution = try train(departure: "2027-05-04T10:30:00", country: country)
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.missing-time-zone"])
        #expect(!resolution.admissible)
    }

    @Test func unrecognizedCountryIsRefused() throws {
        let resolution = try train(departure: "2027-05-04T10:30:00", country: "Atlantis")
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.missing-time-zone"])
    }

    @Test func eventTimesTakeTheVenueZone() throws {
        var object = try GraphBuilder.object(Samples.appleMovie)
        object = GraphBuilder.setting("reservationFor.startDate", to: "2027-02-14T20:15:00", in: object)
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.startTime?.resolved == "2027-02-14T20:15:00+01:00")
        #expect(resolution.admissible)
    }

    @Test func dateOnlyFlightIsAnAllDayEntryWithAWarning() throws {
        let resolution = try flight(departure: "2027-03-04", arrival: "2027-03-05")
        let time = try #require(resolution.reservation?.startTime)
        #expect(time.isDateOnly)
        #expect(time.zone == .floating)
        #expect(time.localDate == "2027-03-04")
        #expect(time.localTime == nil)
        #expect(resolution.codes(at: "reservationFor.departureTime") == ["markup.date-only"])
        #expect(resolution.admissible)
    }

    @Test func dateOnlyHotelStayNeedsNoWarning() throws {
        var object = try GraphBuilder.object(Samples.appleLodging)
        object["checkinTime"] = "2027-04-11"
        object["checkoutTime"] = "2027-04-13"
        let resolution = try resolveOne(object: object)
        #expect(resolution.warnings.isEmpty)
        #expect(resolution.admissible)
        #expect(resolution.reservation?.startTime?.isDateOnly == true)
    }

    @Test func dateOnlyTableBookingIsRefused() throws {
        var object = try GraphBuilder.object(Samples.appleRestaurant)
        object["startTime"] = "2027-04-10"
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "startTime") == ["markup.date-only"])
        #expect(!resolution.admissible)
    }

    @Test func modifiedTimeWithoutOffsetIsAWarning() throws {
        var object = try GraphBuilder.object(Samples.appleFlight)
        object["modifiedTime"] = "2027-03-01T08:30:00"
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "modifiedTime") == ["markup.missing-time-zone"])
        #expect(resolution.admissible)
    }

    // MARK: Sanity checks

    @Test func arrivalShortlyBeforeDepartureIsAWarning() throws {
        // Lands 19:00 Pacific, before it leaves at 20:15: the overnight flight's date was not advanced.
        let resolution = try flight(departure: "2027-03-04T20:15:00-08:00", arrival: "2027-03-04T22:00:00-05:00")
        #expect(resolution.codes(at: "reservationFor.arrivalTime") == ["markup.arrival-before-departure"])
        #expect(resolution.warnings.contains("markup.arrival-before-departure@reservationFor.arrivalTime"))
        #expect(resolution.admissible, "up to a day before: the reservation stays")
    }

    @Test(arguments: [
        ("2027-03-04T05:30:00-05:00", true),  // 25 h 45 min before the departure (in UTC): impossible
        ("2027-03-03T23:30:00-05:00", true),
        ("2027-03-04T07:15:00-05:00", false),  // 24 h before exactly: still a warning
    ])
    func arrivalMoreThanADayBeforeDepartureIsRefused(arrival: String, refused: Bool) throws {
        let resolution = try flight(departure: "2027-03-05T07:15:00-05:00", from: "EWR", arrival: arrival)
        let code = refused ? "markup.arrival-impossible" : "markup.arrival-before-departure"
        #expect(resolution.codes(at: "reservationFor.arrivalTime") == [code])
        #expect(resolution.admissible == !refused)
        #expect(resolution.reservation != nil, "the item is still found")
    }

    @Test func orderIsComparedInUTC() throws {
        // Leaves 20:15 in San Francisco, lands 23:30 in New York: 20:30 Pacific, after departure.
        let resolution = try flight(departure: "2027-03-04T20:15:00-08:00", arrival: "2027-03-04T23:30:00-05:00")
        #expect(resolution.admissible)
        #expect(resolution.diagnostics.isEmpty)
        // And the other way: the wall clocks look ordered, the instants are not (and the offsets are not
        // those of San Francisco and Newark).
        let reversed = try flight(departure: "2027-03-04T20:15:00-05:00", arrival: "2027-03-04T20:30:00+01:00")
        #expect(
            reversed.codes(at: "reservationFor.arrivalTime") == ["markup.arrival-before-departure", "time.offset-mismatch"])
    }

    @Test func equalTimesAreAWarning() throws {
        let resolution = try flight(departure: "2027-03-04T20:15:00-08:00", arrival: "2027-03-04T23:15:00-05:00")
        #expect(resolution.codes(at: "reservationFor.arrivalTime") == ["markup.arrival-before-departure"])
        #expect(resolution.admissible)
    }

    @Test(arguments: [
        ("2027-03-05", "2027-03-04", "markup.arrival-before-departure"),  // the date line: a day "back"
        ("2027-03-05", "2027-03-03", "markup.arrival-impossible"),
        ("2027-03-05", "2027-03-05", nil),
    ])
    func dateOnlyTripsMayArriveOneDayBack(departure: String, arrival: String, code: String?) throws {
        let resolution = try flight(departure: departure, arrival: arrival)
        #expect(resolution.codes(at: "reservationFor.arrivalTime") == Set([code].compactMap { $0 } + ["markup.date-only"]))
    }

    @Test(arguments: [
        (Samples.appleLodging, "checkoutTime", "2027-04-10T11:00:00-07:00", "markup.checkout-before-checkin"),
        (Samples.appleRentalCar, "dropoffTime", "2027-08-05T15:00:00-07:00", "markup.dropoff-before-pickup"),
        (Samples.appleEvent, "reservationFor.endDate", "2027-03-06T18:00:00-08:00", "markup.end-before-start"),
        (Samples.appleTrain, "reservationFor.arrivalTime", "2027-05-03T03:10:00+02:00", "markup.arrival-impossible"),
    ])
    func timeOrderPerKind(json: String, path: String, value: String, code: String) throws {
        let object = GraphBuilder.setting(path, to: value, in: try GraphBuilder.object(json))
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: path) == [code])
        #expect(!resolution.admissible)
    }

    @Test func dateOnlyStayMayEndTheSameDay() throws {
        var object = try GraphBuilder.object(Samples.appleLodging)
        object["checkinTime"] = "2027-04-11"
        object["checkoutTime"] = "2027-04-10"
        #expect(try resolveOne(object: object).codes(at: "checkoutTime") == ["markup.checkout-before-checkin"])
        object["checkoutTime"] = "2027-04-11"
        #expect(try resolveOne(object: object).admissible)
    }
}
