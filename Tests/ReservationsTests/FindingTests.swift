import Foundation
import Markup
import Reservations
import Testing

@Suite("Finding reservations anywhere in the graph, within limits")
struct FindingTests {
    @Test func nestedUnderEmailMessageAndOrder() throws {
        let json = """
            [{"@type": "EmailMessage", "about": \(Samples.appleFlight),
              "potentialAction": {"@type": "ViewAction", "target": "https://x.example"}},
             {"@type": "Order", "orderNumber": "1", "acceptedOffer": {"@type": "Offer", "itemOffered": \(Samples.appleLodging)}}]
            """
        let resolutions = try resolve(json)
        #expect(resolutions.compactMap(\.reservation?.kind) == [.flight, .lodging])
    }

    @Test func itemsInAGraphWithIdReferences() throws {
        let json = """
            {"@context": "https://schema.org", "@graph": [
              {"@type": "Person", "@id": "#eva", "name": "Eva Green"},
              {"@type": "Airline", "@id": "#ua", "name": "United", "iataCode": "UA"},
              {"@type": "FlightReservation", "reservationId": "RXJ34P",
               "reservationStatus": "https://schema.org/ReservationConfirmed", "underName": {"@id": "#eva"},
               "reservationFor": {"@type": "Flight", "flightNumber": "UA110", "provider": {"@id": "#ua"},
                 "departureAirport": {"@type": "Airport", "iataCode": "SFO"}, "departureTime": "2027-03-04T20:15:00-08:00",
                 "arrivalAirport": {"@type": "Airport", "iataCode": "EWR"}, "arrivalTime": "2027-03-05T04:30:00-05:00"}}]}
            """
        let resolution = try resolveOne(json)
        #expect(resolution.reservation?.underName == "Eva Green")
        #expect(resolution.reservation?.provider?.iataCode == "UA")
        #expect(resolution.admissible)
    }

    @Test func selfReferenceDoesNotLoop() throws {
        var object = try GraphBuilder.object(Samples.appleFlight)
        object["@id"] = "#r"
        object["subjectOf"] = ["@id": "#r"]
        let resolutions = ReservationResolver().resolve(GraphBuilder.graph(object))
        #expect(resolutions.count == 1)
    }

    @Test func packagePartsAreFound() throws {
        let json = """
            {"@type": "ReservationPackage", "reservationId": "PKG", "subReservation": [\(Samples.appleFlight), \(Samples.appleLodging)]}
            """
        #expect(try resolve(json).compactMap(\.reservation?.kind) == [.flight, .lodging])
    }

    @Test func itemsThatAreNotReservationsGiveNothing() throws {
        let json = """
            [{"@type": "Event", "name": "Concert", "startDate": "2027-01-01T20:00:00Z"},
             {"@type": "Product", "name": "Ticket"}, {"@type": "Organization", "name": "Acme"}]
            """
        #expect(try resolve(json).isEmpty)
        #expect(ReservationResolver().resolve(MarkupGraph()).isEmpty)
    }

    @Test func outOfScopeReservationTypeIsReportedWithoutAReservation() throws {
        let json = """
            {"@type": "TaxiReservation", "reservationId": "546323", "reservationStatus": "https://schema.org/ReservationConfirmed",
             "reservationFor": {"@type": "TaxiService"}}
            """
        let resolution = try resolveOne(json)
        #expect(resolution.reservation == nil)
        #expect(!resolution.admissible)
        #expect(resolution.codes(at: "@type") == ["markup.unsupported-type"])
        #expect(resolution.jsonObject["kind"] == .null)
    }

    static func nested(_ item: String, depth: Int) -> String {
        var json = item
        for _ in 0..<depth { json = #"{"@type": "Thing", "about": \#(json)}"# }
        return json
    }

    @Test func reservationsNestedWithinTheDepthLimitAreFound() throws {
        #expect(try resolve(Self.nested(Samples.appleFlight, depth: 10)).count == 1)
    }

    @Test func nestingBeyondTheLimitIsReportedNotWalked() throws {
        let graph = try GraphBuilder.graph(Self.nested(Samples.appleFlight, depth: 40))
        let document = ReservationResolver().resolveDocument(graph)
        #expect(document.resolutions.isEmpty)
        #expect(document.diagnostics.map(\.code) == [.limitExceeded])
    }

    @Test func deepInsideAReservationIsCut() throws {
        var object = try GraphBuilder.object(Samples.appleFlight)
        var chain: [String: Any] = ["@type": "Thing", "name": "bottom"]
        for _ in 0..<50 { chain = ["@type": "Thing", "about": chain] }
        object["subjectOf"] = chain
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "") == ["markup.limit-exceeded"])
        #expect(resolution.admissible)
    }

    @Test func reservationCountIsBounded() throws {
        let items = (0..<5).map { index in
            Samples.appleLodging.replacingOccurrences(of: "abc456", with: "ID\(index)")
        }
        let graph = try GraphBuilder.graph("[" + items.joined(separator: ",") + "]")
        let resolver = ReservationResolver(configuration: .init(maxReservations: 3))
        let document = resolver.resolveDocument(graph)
        #expect(document.resolutions.count == 3)
        #expect(document.diagnostics.map(\.code) == [.limitExceeded])
    }

    @Test func walkedItemsAreBounded() throws {
        let items = (0..<50).map { _ in #"{"@type": "Thing", "name": "x"}"# } + [Samples.appleLodging]
        let graph = try GraphBuilder.graph("[" + items.joined(separator: ",") + "]")
        let document = ReservationResolver(configuration: .init(maxItemsWalked: 20)).resolveDocument(graph)
        #expect(document.resolutions.isEmpty)
        #expect(document.diagnostics.map(\.code) == [.limitExceeded])
    }

    @Test func wideGraphResolvesQuickly() throws {
        // 200 reservations with 4 parts each share one id: identity stays fast and distinct.
        let items = (0..<200).map { index in
            IdentityTests.leg("P\(index)", "\(100 + index % 4)", "SFO", "EWR", "2027-03-04T20:15:00-08:00", "2027-03-05T04:30:00-05:00")
        }
        let resolutions = try resolve("[" + items.joined(separator: ",") + "]")
        #expect(resolutions.count == 200)
        #expect(Set(resolutions.compactMap(\.reservation?.itemReference)).count == 200)
    }
}

@Suite("Hostile graphs stay cheap")
struct HostileGraphTests {
    @Test func reservationWithVeryManyPropertiesIsLinear() throws {
        var graph = try GraphBuilder.graph(Samples.appleFlight)
        for index in 0..<50_000 {
            graph.nodes[0].properties.append(SchemaProperty(name: "extra\(index)", values: [.text("x")]))
        }
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(ReservationResolver().resolve(graph).count == 1) }
        #expect(elapsed < .seconds(10))
    }

    @Test func veryManyValuesOfOneProperty() throws {
        var graph = try GraphBuilder.graph(Samples.appleFlight)
        graph.nodes[0].properties.append(
            SchemaProperty(name: "reservedTicket", values: Array(repeating: .text("t"), count: 100_000)))
        graph.nodes[0].properties.append(
            SchemaProperty(name: "underName", values: Array(repeating: .text("Eva Green"), count: 1000)))
        let resolutions = ReservationResolver().resolve(graph)
        #expect(resolutions.count == 1)
    }
}
