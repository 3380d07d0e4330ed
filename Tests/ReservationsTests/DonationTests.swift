import Foundation
import Reservations
import Testing

/// Donations (issue 17) read into the typed model through the same resolver as markup.
@Suite("Donations")
struct DonationTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // Tests/ReservationsTests
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("examples/donations")

    static func document(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: examples.appendingPathComponent("\(name).json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func read(_ document: [String: Any]) throws -> Donation {
        Donation.read([UInt8](try JSONSerialization.data(withJSONObject: document)))
    }

    @Test(arguments: [
        ("flight", Reservation.Kind.flight), ("lodging", .lodging), ("restaurant", .restaurant),
        ("rental-car", .rentalCar),
        ("train", .train), ("bus", .bus), ("boat", .boat), ("event", .event),
    ])
    func everyExampleResolvesToItsKind(name: String, kind: Reservation.Kind) throws {
        let donation = try Self.read(try Self.document(name))
        #expect(donation.problems.isEmpty, "\(donation.problems)")
        let resolution = try #require(donation.resolutions.first)
        #expect(donation.resolutions.count == 1)
        #expect(resolution.admissible, "\(resolution.diagnostics)")
        #expect(resolution.reservation?.kind == kind)
        #expect(resolution.reservation?.underName == "Eva Green")
        #expect(resolution.reservation?.status == .confirmed)
        #expect(resolution.reservation?.containerReference == resolution.reservation?.itemReference)
    }

    /// A required field left out is reported at the donation's own path, with the markup code renamed.
    @Test(arguments: [
        ("flight", ["flight", "departureAirport"], "reservations[0].flight.departureAirport"),
        ("flight", ["flight", "flightDuration"], "reservations[0].flight.flightDuration.startDate"),
        ("flight", ["reservationHolderName"], "reservations[0].reservationHolderName"),
        ("lodging", ["lodgingBusinessLocation", "address"], "reservations[0].lodgingBusinessLocation.address"),
        ("restaurant", ["reservationDuration"], "reservations[0].reservationDuration.startDate"),
        ("rental-car", ["pickupLocation"], "reservations[0].pickupLocation"),
        ("train", ["trainTrip", "arrivalStationLocation"], "reservations[0].trainTrip.arrivalStationLocation"),
        ("bus", ["busTrip", "departureBusStopLocation"], "reservations[0].busTrip.departureBusStopLocation"),
        ("boat", ["boatTrip", "arrivalBoatTerminalLocation"], "reservations[0].boatTrip.arrivalBoatTerminalLocation"),
        ("event", ["event", "location"], "reservations[0].event.location"),
    ])
    func missingFieldsAreReportedAtTheDonationsPath(name: String, remove: [String], path: String) throws {
        var document = try Self.document(name)
        var reservations = try #require(document["reservations"] as? [[String: Any]])
        if remove.count == 1 {
            reservations[0][remove[0]] = nil
        } else {
            var inner = try #require(reservations[0][remove[0]] as? [String: Any])
            inner[remove[1]] = nil
            reservations[0][remove[0]] = inner
        }
        document["reservations"] = reservations
        let donation = try Self.read(document)
        #expect(
            donation.problems.contains { $0.code == "donation.missing-property" && $0.path == path },
            "\(donation.problems)")
    }

    @Test func donatedActionsKeepTheirWindowAndAFlightWithoutOneGetsTheInferredDay() throws {
        var document = try Self.document("flight")
        let donation = try Self.read(document)
        let action = try #require(donation.resolutions.first?.reservation?.actions?.first)
        #expect(action.type == .checkIn && action.origin == .donation && !action.windowInferred)
        #expect(action.validFrom == "2027-03-03T16:00:00Z" && action.validUntil == "2027-03-04T15:15:00Z")
        #expect(action.userActivity?.title == "Check in for UA110")
        #expect(donation.interactionTime == ReservationAction.instant("2026-11-20T09:00:00Z"))

        var reservations = try #require(document["reservations"] as? [[String: Any]])
        reservations[0]["actions"] = [
            ["type": "checkIn", "userActivity": ["webpageURL": "https://www.skyways.example/c"]]
        ]
        document["reservations"] = reservations
        let inferred = try #require(try Self.read(document).resolutions.first?.reservation?.actions?.first)
        #expect(inferred.windowInferred)
        #expect(inferred.validFrom == "2027-03-03T16:00:00Z" && inferred.validUntil == "2027-03-04T16:00:00Z")
        #expect(inferred.isValid(at: ReservationAction.instant("2027-03-04T10:00:00Z")!))
        #expect(!inferred.isValid(at: ReservationAction.instant("2027-03-04T16:00:00Z")!))
    }

    @Test func structuralProblemsHaveTheirOwnCodes() throws {
        #expect(Donation.read(Array("[1]".utf8)).problems.map(\.code) == ["donation.malformed"])
        #expect(
            Donation.read(Array(#"{"reservations": []}"#.utf8)).problems.map(\.description) == [
                "donation.missing-property reservations"
            ])
        var document = try Self.document("restaurant")
        document["responseCode"] = "failure"
        var reservations = try #require(document["reservations"] as? [[String: Any]])
        reservations[0]["reservationNumber"] = "OTHER"
        reservations.append(["type": "INTaxiReservation"])
        document["reservations"] = reservations
        let problems = try Self.read(document).problems.map(\.description)
        #expect(problems.contains("donation.response-not-success responseCode"))
        #expect(problems.contains("donation.reference-mismatch reservations[0].reservationNumber"))
        #expect(problems.contains("donation.unknown-type reservations[1].type"))
    }
}
