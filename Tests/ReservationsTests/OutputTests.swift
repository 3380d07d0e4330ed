import Foundation
import Markup
import Reservations
import Testing

@Suite("Output: the JSON object of gateway extract --json, and one-line summaries")
struct OutputTests {
    @Test func jsonObjectCarriesTheNormalizedObjectAndTheAddedFields() throws {
        var object = try GraphBuilder.object(Samples.gmailFlight)
        object = GraphBuilder.setting("reservationFor.departureTime", to: "2027-03-04T20:15:00", in: object)
        let resolution = try resolveOne(object: object)
        let json = resolution.jsonObject
        #expect(json["@context"] == .string("https://schema.org"))
        #expect(json["@type"] == .string("FlightReservation"))
        #expect(json["reservationId"] == .string("RXJ34P"))
        #expect(json["reservationStatus"] == .string("https://schema.org/ReservationConfirmed"))
        #expect(json["reservationFor"]?["flightNumber"] == .string("UA110"))
        #expect(json["reservationFor"]?["departureTime"] == .string("2027-03-04T20:15:00-08:00"))
        #expect(json["reservationFor"]?["arrivalTime"] == .string("2027-03-05T04:30:00-05:00"))
        #expect(json["kind"] == .string("flight"))
        #expect(json["containerReference"] == .string("RXJ34P"))
        #expect(json["itemReference"] == .string("RXJ34P"))
        #expect(json["admissible"] == .bool(true))
        guard case .array(let diagnostics)? = json["diagnostics"] else {
            Issue.record("diagnostics is not an array")
            return
        }
        #expect(diagnostics.count == resolution.diagnostics.count)
        let inferred = diagnostics.first { $0["code"] == .string("markup.time-zone-inferred") }
        #expect(inferred?["severity"] == .string("warning"))
        #expect(inferred?["path"] == .string("reservationFor.departureTime"))
        #expect(inferred?["message"]?.string?.isEmpty == false)
    }

    @Test func jsonTextHasSortedKeysAndIsStable() throws {
        let resolution = try resolveOne(Samples.appleEvent)
        let data = resolution.jsonObject.jsonData()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix(#"{"@context":"https://schema.org","@type":"EventReservation","admissible":true,"#))
        #expect(text.contains(#""reservationStatus":"https://schema.org/ReservationConfirmed""#))
        #expect(try resolveOne(Samples.appleEvent).jsonObject.jsonData() == data)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == resolution.jsonObject)
    }

    @Test(arguments: [
        (Samples.appleFlight, "flight UA110 SFO→EWR 2027-03-04 20:15-08:00 · RXJ34P · Eva Green"),
        (Samples.appleTrain, "train ICE 597 München Hbf→Berlin Hbf 2027-05-04 10:30+02:00 · AB3XY2 · Eva Green"),
        (Samples.appleLodging, "lodging Hilton Union Square 2027-04-11→2027-04-13 · abc456 · John Smith"),
        (Samples.appleRestaurant, "restaurant Wagamama 2027-04-10 19:00+01:00 party of 2 · OT12345 · John Smith"),
        (Samples.appleRentalCar, "rentalCar Hertz Hertz SAN→Hertz LAX 2027-08-05 16:00-07:00 · 546323 · John Smith"),
        (Samples.appleEvent, "event Foo Fighters Concert @ AT&T Park 2027-03-06 19:30-08:00 · E123456789 · John Smith"),
        (Samples.appleMovie, "movie Metropolis @ Kino 2027-02-14 20:15+01:00 · CIN-1 · Carol Green"),
    ])
    func summaries(json: String, summary: String) throws {
        #expect(try resolveOne(json).summary == summary)
    }

    @Test func summaryOfACancellation() throws {
        let resolution = try resolveOne(
            #"{"@type": "FlightReservation", "reservationId": "RXJ34P", "reservationStatus": "https://schema.org/ReservationCancelled"}"#
        )
        #expect(resolution.summary == "flight (all items) · RXJ34P · cancelled")
    }

    @Test func reservationRoundTripsThroughJSON() throws {
        let resolutions = try resolve("[\(Samples.appleFlight), \(Samples.appleTrain), \(Samples.appleEvent)]")
        for resolution in resolutions {
            let data = try JSONEncoder().encode(resolution)
            #expect(try JSONDecoder().decode(Resolution.self, from: data) == resolution)
        }
    }
}
