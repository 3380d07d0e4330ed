import Markup
import Reservations
import Testing

@Suite("Identity: container and item references (MARKUP.md, Identity)")
struct IdentityTests {
    static func leg(_ passenger: String, _ number: String, _ from: String, _ to: String, _ departure: String, _ arrival: String)
        -> String
    {
        """
        {"@type": "FlightReservation", "reservationNumber": "RXJ34P", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "\(passenger)"},
         "reservationFor": {"@type": "Flight", "flightNumber": "\(number)",
           "airline": {"@type": "Airline", "name": "United", "iataCode": "UA"},
           "departureAirport": {"@type": "Airport", "iataCode": "\(from)"}, "departureTime": "\(departure)",
           "arrivalAirport": {"@type": "Airport", "iataCode": "\(to)"}, "arrivalTime": "\(arrival)"}}
        """
    }

    static let roundTrip = "[" + [
        leg("Eva Green", "110", "SFO", "EWR", "2027-03-04T20:15:00-08:00", "2027-03-05T04:30:00-05:00"),
        leg("Eva Green", "111", "EWR", "SFO", "2027-03-10T08:00:00-05:00", "2027-03-10T11:30:00-08:00"),
        leg("John Green", "110", "SFO", "EWR", "2027-03-04T20:15:00-08:00", "2027-03-05T04:30:00-05:00"),
        leg("John Green", "111", "EWR", "SFO", "2027-03-10T08:00:00-05:00", "2027-03-10T11:30:00-08:00"),
    ].joined(separator: ",") + "]"

    @Test func twoPassengerRoundTripIsFourItemsInOneContainer() throws {
        let resolutions = try resolve(Self.roundTrip)
        #expect(resolutions.count == 4)
        #expect(resolutions.filter(\.admissible).count == 4)
        #expect(Set(resolutions.compactMap(\.reservation?.containerReference)) == ["RXJ34P"])
        #expect(
            resolutions.compactMap(\.reservation?.itemReference) == [
                "RXJ34P-UA110-2027-03-04-EVA GREEN", "RXJ34P-UA111-2027-03-10-EVA GREEN",
                "RXJ34P-UA110-2027-03-04-JOHN GREEN", "RXJ34P-UA111-2027-03-10-JOHN GREEN",
            ])
    }

    @Test func legsOfOnePassengerAreTheLegKey() throws {
        let json = "[" + [
            Self.leg("Eva Green", "110", "SFO", "EWR", "2026-06-26T20:15:00-07:00", "2026-06-27T04:30:00-04:00"),
            Self.leg("Eva Green", "111", "EWR", "SFO", "2026-07-01T08:00:00-04:00", "2026-07-01T11:30:00-07:00"),
        ].joined(separator: ",") + "]"
        let references = try resolve(json).compactMap(\.reservation?.itemReference)
        #expect(references == ["RXJ34P-UA110-2026-06-26", "RXJ34P-UA111-2026-07-01"])
    }

    @Test func onePartBookingIsTheReservationId() throws {
        let resolution = try resolveOne(Self.leg("Eva Green", "110", "SFO", "EWR", "2027-03-04T20:15:00-08:00", "2027-03-05T04:30:00-05:00"))
        #expect(resolution.reservation?.itemReference == "RXJ34P")
        #expect(resolution.reservation?.containerReference == "RXJ34P")
    }

    @Test func eventTicketsByTicketNumber() throws {
        let first = try GraphBuilder.object(Samples.gmailEvent)
        var second = first
        second["ticketNumber"] = "abc456"
        second["venueSeat"] = "13"
        second = GraphBuilder.setting("underName.name", to: "Eva Green", in: second)
        let resolutions = ReservationResolver().resolve(GraphBuilder.graph([first, second]))
        #expect(resolutions.compactMap(\.reservation?.itemReference) == ["E123456789-ABC123", "E123456789-ABC456"])
    }

    @Test func eventTicketsBySeatWithoutTicketNumbers() throws {
        var first = try GraphBuilder.object(Samples.appleMovie)
        first["reservedTicket"] = ["@type": "Ticket", "ticketedSeat": ["@type": "Seat", "seatRow": "F", "seatNumber": "7"]]
        var second = first
        second["reservedTicket"] = ["@type": "Ticket", "ticketedSeat": ["@type": "Seat", "seatRow": "F", "seatNumber": "8"]]
        let resolutions = ReservationResolver().resolve(GraphBuilder.graph([first, second]))
        #expect(resolutions.compactMap(\.reservation?.itemReference) == ["CIN-1-F-7", "CIN-1-F-8"])
    }

    @Test func trainLegsByNumberAndDepartureTime() throws {
        let first = try GraphBuilder.object(Samples.appleTrain)
        var second = GraphBuilder.setting("reservationFor.trainNumber", to: "ICE 1000", in: first)
        second = GraphBuilder.setting("reservationFor.departureTime", to: "2027-05-04T15:00:00+02:00", in: second)
        second = GraphBuilder.setting("reservationFor.arrivalTime", to: "2027-05-04T18:00:00+02:00", in: second)
        let resolutions = ReservationResolver().resolve(GraphBuilder.graph([first, second]))
        #expect(
            resolutions.compactMap(\.reservation?.itemReference) == [
                "AB3XY2-ICE 597-2027-05-04T10:30", "AB3XY2-ICE 1000-2027-05-04T15:00",
            ])
    }

    @Test func sameItemInBothSyntaxesIsOne() throws {
        let jsonLD = try GraphBuilder.graph(Samples.gmailFlight, syntax: .jsonLD)
        let microdata = try GraphBuilder.graph(Samples.gmailFlight, syntax: .microdata)
        let graph = MarkupGraph(nodes: jsonLD.nodes + microdata.nodes)
        let resolutions = ReservationResolver().resolve(graph)
        #expect(resolutions.count == 1)
        #expect(resolutions.first?.reservation?.itemReference == "RXJ34P")
        #expect(resolutions.first?.syntax == .jsonLD)
        #expect(resolutions.first?.codes(at: "") == ["markup.duplicate-item"])
        #expect(resolutions.first?.admissible == true)
    }

    @Test func fullerCopyWinsAcrossSyntaxes() throws {
        let jsonLD = try GraphBuilder.graph(Samples.appleFlight, syntax: .jsonLD)
        let sparse = GraphBuilder.removing("airplaneSeat", from: try GraphBuilder.object(Samples.appleFlight))
        let microdata = GraphBuilder.graph(sparse, syntax: .microdata)
        let resolutions = ReservationResolver().resolve(MarkupGraph(nodes: microdata.nodes + jsonLD.nodes))
        #expect(resolutions.count == 1)
        #expect(resolutions.first?.reservation?.tickets.first?.seat?.number == "9A")
    }

    @Test func sameItemTwiceInOneSyntaxIsOne() throws {
        let resolutions = try resolve("[\(Samples.appleLodging), \(Samples.appleLodging)]")
        #expect(resolutions.count == 1)
        #expect(resolutions.first?.reservation?.itemReference == "abc456")
    }

    @Test func distinctItemsAreNeverMerged() throws {
        // Two stays under one booking that differ only in their URL: nothing in the identity tells
        // them apart, so each gets an ordinal and a warning, and both are kept.
        var first = try GraphBuilder.object(Samples.appleLodging)
        first["url"] = "https://hotel.example/a"
        var second = first
        second["url"] = "https://hotel.example/b"
        let resolutions = ReservationResolver().resolve(GraphBuilder.graph([first, second]))
        #expect(resolutions.count == 2)
        #expect(resolutions.compactMap(\.reservation?.itemReference) == ["abc456-1", "abc456-2"])
        let flagged = resolutions.filter { $0.codes(at: "").contains("markup.ambiguous-item") }
        #expect(flagged.count == 2)
    }

    @Test func mixedKindsUnderOneBookingSayWhichKind() throws {
        var hotel = try GraphBuilder.object(Samples.appleLodging)
        hotel["reservationId"] = "PKG1"
        var flight = try GraphBuilder.object(Samples.appleFlight)
        flight["reservationId"] = "PKG1"
        let resolutions = ReservationResolver().resolve(GraphBuilder.graph([flight, hotel]))
        #expect(resolutions.compactMap(\.reservation?.itemReference) == ["PKG1-FLIGHT", "PKG1-LODGING"])
    }

    @Test func minimalCancellationIsAdmissible() throws {
        let resolution = try resolveOne(
            #"{"@type": "FlightReservation", "reservationId": "RXJ34P", "reservationStatus": "https://schema.org/ReservationCancelled"}"#
        )
        let reservation = try #require(resolution.reservation)
        #expect(resolution.admissible)
        #expect(resolution.diagnostics.isEmpty)
        #expect(reservation.isMinimalCancellation)
        #expect(reservation.status == .cancelled)
        #expect(reservation.containerReference == "RXJ34P")
        #expect(reservation.itemReference == "RXJ34P")
    }

    @Test func minimalCancellationBesideFullItemsNamesTheContainer() throws {
        let cancellation = #"{"@type": "FlightReservation", "reservationNumber": "RXJ34P", "reservationStatus": "http://schema.org/Cancelled"}"#
        let resolutions = try resolve("[\(cancellation), \(Self.roundTrip.dropFirst().dropLast())]")
        #expect(resolutions.count == 5)
        #expect(resolutions[0].reservation?.isMinimalCancellation == true)
        #expect(resolutions[0].reservation?.itemReference == "RXJ34P")
        #expect(resolutions[1].reservation?.itemReference == "RXJ34P-UA110-2027-03-04-EVA GREEN")
    }

    @Test func cancellationWithIncompleteDetailsIsAdmissible() throws {
        var object = GraphBuilder.removing("reservationFor.departureStation.address", from: try GraphBuilder.object(Samples.appleTrain))
        object["reservationStatus"] = "https://schema.org/ReservationCancelled"
        let resolution = try resolveOne(object: object)
        #expect(resolution.admissible)
        #expect(resolution.reservation?.isMinimalCancellation == false)
        #expect(resolution.warnings.contains("markup.missing-property@reservationFor.departureStation.address"))
    }

    @Test func cancellationNeedsAReservationId() throws {
        let resolution = try resolveOne(#"{"@type": "FlightReservation", "reservationStatus": "ReservationCancelled"}"#)
        #expect(!resolution.admissible)
        #expect(resolution.errors.contains("markup.missing-property@reservationId"))
    }
}

@Suite("Part keys")
struct PartKeyTests {
    @Test func partKeyDoesNotDependOnSiblings() throws {
        let alone = try resolveOne(Samples.gmailFlight)
        #expect(alone.reservation?.itemReference == "RXJ34P")
        #expect(alone.reservation?.partKey == "UA110-2027-03-04")
        let train = try resolveOne(Samples.appleTrain)
        #expect(train.reservation?.partKey == "ICE 597-2027-05-04T10:30")
    }
}
