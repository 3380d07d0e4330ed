import Foundation
import Markup
import Reservations
import Testing

/// The parts of a booking as senders write them (MARKUP.md, Identity and Required properties): the
/// booking's `reservationNumber` beside each part's own `reservationId`, and several things under
/// one `reservationFor`.
@Suite("Booking parts: reservationNumber beside reservationId, several reserved things")
struct BookingPartsTests {
    /// A KLM-style leg: the booking code as `reservationNumber`, the passenger's ticket as `reservationId`.
    static func leg(_ passenger: String, ticket: String, _ number: String, _ from: String, _ to: String, _ day: String)
        -> String
    {
        """
        {"@context": "http://schema.org", "@type": "FlightReservation",
         "reservationNumber": "KX7Q2P", "reservationId": "\(ticket)",
         "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "\(passenger)"},
         "reservationFor": {"@type": "Flight", "flightNumber": "\(number)",
           "airline": {"@type": "Airline", "name": "KLM", "iataCode": "KL"},
           "departureAirport": {"@type": "Airport", "iataCode": "\(from)"}, "departureTime": "\(day)T07:10:00+02:00",
           "arrivalAirport": {"@type": "Airport", "iataCode": "\(to)"}, "arrivalTime": "\(day)T09:05:00+01:00"}}
        """
    }

    @Test func eachPartIsItsReservationIdUnderTheBookingsNumber() throws {
        let json = "[" + [
            Self.leg("Eva Green", ticket: "074-2400000001", "KL1691", "AMS", "LIS", "2027-05-02"),
            Self.leg("John Green", ticket: "074-2400000002", "KL1691", "AMS", "LIS", "2027-05-02"),
        ].joined(separator: ",") + "]"
        let resolutions = try resolve(json)
        #expect(resolutions.count == 2)
        #expect(resolutions.allSatisfy { $0.admissible })
        #expect(resolutions.map(\.reservation?.containerReference) == ["KX7Q2P", "KX7Q2P"])
        #expect(resolutions.map(\.reservation?.itemReference) == ["074-2400000001", "074-2400000002"])
        #expect(resolutions.map(\.reservation?.reservationId) == ["KX7Q2P", "KX7Q2P"], "the booking number")
        #expect(resolutions.allSatisfy { $0.codes(at: "reservationNumber").isEmpty })
    }

    @Test func aTicketCoveringTwoLegsIsToldApartByLeg() throws {
        // One e-ticket per passenger for the whole trip: the same reservationId on both legs.
        let json = "[" + [
            Self.leg("Eva Green", ticket: "074-2400000001", "KL1691", "AMS", "LIS", "2027-05-02"),
            Self.leg("Eva Green", ticket: "074-2400000001", "KL1696", "LIS", "AMS", "2027-05-09"),
        ].joined(separator: ",") + "]"
        let references = try resolve(json).compactMap(\.reservation?.itemReference)
        #expect(references == ["074-2400000001-KL1691-2027-05-02", "074-2400000001-KL1696-2027-05-09"])
    }

    @Test func aCancellationNamingItsPartCancelsThatPartOnly() throws {
        let resolution = try resolveOne(
            """
            {"@type": "FlightReservation", "reservationNumber": "KX7Q2P", "reservationId": "074-2400000002",
             "reservationStatus": "http://schema.org/Cancelled"}
            """)
        let reservation = try #require(resolution.reservation)
        #expect(reservation.status == .cancelled)
        #expect(!reservation.isMinimalCancellation, "it names one part, not the whole booking")
        #expect(reservation.containerReference == "KX7Q2P")
        #expect(reservation.itemReference == "074-2400000002")
        #expect(resolution.admissible)
        // Without the part's id it is the booking's cancellation, as before.
        let whole = try resolveOne(
            #"{"@type": "FlightReservation", "reservationNumber": "KX7Q2P", "reservationStatus": "http://schema.org/Cancelled"}"#)
        #expect(whole.reservation?.isMinimalCancellation == true)
    }

    // MARK: Several reserved things

    static let outbound = """
        {"@type": "Flight", "flightNumber": "LH400", "airline": {"@type": "Airline", "name": "Lufthansa", "iataCode": "LH"},
         "departureAirport": {"@type": "Airport", "iataCode": "FRA"}, "departureTime": "2027-07-02T10:15:00+02:00",
         "arrivalAirport": {"@type": "Airport", "iataCode": "JFK"}, "arrivalTime": "2027-07-02T12:55:00-04:00"}
        """
    static let inbound = """
        {"@type": "Flight", "flightNumber": "LH401", "airline": {"@type": "Airline", "name": "Lufthansa", "iataCode": "LH"},
         "departureAirport": {"@type": "Airport", "iataCode": "JFK"}, "departureTime": "2027-07-12T17:55:00-04:00",
         "arrivalAirport": {"@type": "Airport", "iataCode": "FRA"}, "arrivalTime": "2027-07-13T07:45:00+02:00"}
        """

    @Test func oneReservationPerReservedThing() throws {
        let resolutions = try resolve(
            """
            {"@context": "http://schema.org", "@type": "FlightReservation", "reservationNumber": "LH4XQ9",
             "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
             "reservationFor": [\(Self.outbound), \(Self.inbound)]}
            """)
        #expect(resolutions.count == 2)
        #expect(resolutions.allSatisfy { $0.admissible })
        #expect(resolutions.map(\.reservation?.flightNumber) == ["LH400", "LH401"])
        #expect(Set(resolutions.map(\.reservation?.containerReference)) == [Optional("LH4XQ9")])
        #expect(resolutions.map(\.reservation?.itemReference) == ["LH4XQ9-LH400-2027-07-02", "LH4XQ9-LH401-2027-07-12"])
        // Each normalized object holds its own flight only.
        #expect(resolutions[1].normalized["reservationFor"]?["flightNumber"] == .string("LH401"))
        #expect(resolutions.allSatisfy { $0.diagnostics.allSatisfy { $0.code == .alias } })
    }

    @Test func severalReservedThingsInMicrodata() throws {
        let html = """
            <div itemscope itemtype="http://schema.org/TrainReservation">
              <meta itemprop="reservationNumber" content="DB7Y3K">
              <link itemprop="reservationStatus" href="http://schema.org/Confirmed">
              <div itemprop="underName" itemscope itemtype="http://schema.org/Person"><span itemprop="name">Eva Green</span></div>
              <table><tr><td itemprop="reservationFor" itemscope itemtype="http://schema.org/TrainTrip">
                <span itemprop="trainNumber">ICE 597</span>
                <div itemprop="departureStation" itemscope itemtype="http://schema.org/TrainStation"><span itemprop="name">München Hbf</span>
                  <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress"><span itemprop="streetAddress">Bayerstraße 10a</span>
                  <span itemprop="addressLocality">München</span><span itemprop="addressCountry">DE</span></div></div>
                <time itemprop="departureTime" datetime="2027-05-04T10:30:00+02:00">10:30</time>
                <div itemprop="arrivalStation" itemscope itemtype="http://schema.org/TrainStation"><span itemprop="name">Berlin Hbf</span>
                  <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress"><span itemprop="streetAddress">Europaplatz 1</span>
                  <span itemprop="addressLocality">Berlin</span><span itemprop="addressCountry">DE</span></div></div>
                <time itemprop="arrivalTime" datetime="2027-05-04T14:32:00+02:00">14:32</time>
              </td><td itemprop="reservationFor" itemscope itemtype="http://schema.org/TrainTrip">
                <span itemprop="trainNumber">ICE 598</span>
                <div itemprop="departureStation" itemscope itemtype="http://schema.org/TrainStation"><span itemprop="name">Berlin Hbf</span>
                  <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress"><span itemprop="streetAddress">Europaplatz 1</span>
                  <span itemprop="addressLocality">Berlin</span><span itemprop="addressCountry">DE</span></div></div>
                <time itemprop="departureTime" datetime="2027-05-09T16:29:00+02:00">16:29</time>
                <div itemprop="arrivalStation" itemscope itemtype="http://schema.org/TrainStation"><span itemprop="name">München Hbf</span>
                  <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress"><span itemprop="streetAddress">Bayerstraße 10a</span>
                  <span itemprop="addressLocality">München</span><span itemprop="addressCountry">DE</span></div></div>
                <time itemprop="arrivalTime" datetime="2027-05-09T20:31:00+02:00">20:31</time>
              </td></tr></table>
            </div>
            """
        let graph = MarkupExtractor().extract(html: Array(html.utf8), encoding: "UTF-8")
        let resolutions = ReservationResolver().resolve(graph)
        #expect(resolutions.map(\.reservation?.tripNumber) == ["ICE 597", "ICE 598"])
        #expect(resolutions.allSatisfy { $0.admissible && $0.syntax == .microdata })
        #expect(Set(resolutions.map(\.reservation?.containerReference)) == [Optional("DB7Y3K")])
        #expect(Set(resolutions.compactMap(\.reservation?.itemReference)).count == 2)
    }

    @Test func severalThingsWithTheirOwnReservationIdEach() throws {
        // One reservationId for the whole item: it names the part, and the two parts are told apart by leg.
        let resolutions = try resolve(
            """
            {"@type": "FlightReservation", "reservationNumber": "LH4XQ9", "reservationId": "220-1234567890",
             "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
             "reservationFor": [\(Self.outbound), \(Self.inbound)]}
            """)
        #expect(
            resolutions.map(\.reservation?.itemReference) == [
                "220-1234567890-LH400-2027-07-02", "220-1234567890-LH401-2027-07-12",
            ])
    }

    @Test func manyReservedThingsStopAtTheReservationLimit() throws {
        let flights = (0..<300).map { Self.outbound.replacingOccurrences(of: "LH400", with: "LH\(1000 + $0)") }
            .joined(separator: ",")
        let graph = try GraphBuilder.graph(
            """
            {"@type": "FlightReservation", "reservationId": "LH4XQ9", "reservationStatus": "http://schema.org/Confirmed",
             "underName": {"@type": "Person", "name": "Eva Green"}, "reservationFor": [\(flights)]}
            """)
        let resolver = ReservationResolver(configuration: .init(maxItemsPerReservation: 100_000))
        let document = resolver.resolveDocument(graph)
        #expect(document.diagnostics.map(\.code) == [.limitExceeded])
        #expect(document.resolutions.count == 200)
        #expect(Set(document.resolutions.compactMap(\.reservation?.itemReference)).count == 200)
    }
}

@Suite("What is not a reservation: action templates and offers")
struct NotHeldTests {
    static let table = """
        {"@type": "FoodEstablishmentReservation", "reservationNumber": "OT-1", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "Eva Green"}, "startTime": "2027-06-12T20:30:00+02:00",
         "reservationFor": {"@type": "Restaurant", "name": "Café Lumière",
           "address": {"@type": "PostalAddress", "streetAddress": "12 rue de l'Échaudé", "addressLocality": "Paris", "addressCountry": "FR"}}}
        """

    @Test func theResultOfAReserveActionIsWhatCouldBeBooked() throws {
        // A restaurant's page: "book a table" with the reservation it would make.
        let document = ReservationResolver().resolveDocument(
            try GraphBuilder.graph(
                """
                {"@context": "http://schema.org", "@type": "Restaurant", "name": "Café Lumière",
                 "potentialAction": {"@type": "ReserveAction",
                   "target": {"@type": "EntryPoint", "urlTemplate": "https://book.example/cafe-lumiere"},
                   "result": \(Self.table)}}
                """))
        #expect(document.resolutions.isEmpty)
        #expect(document.diagnostics.map(\.code) == [.actionTemplate])
        #expect(document.diagnostics.first?.path == "potentialAction.result")
        #expect(document.diagnostics.first?.severity == .warning)
    }

    @Test func aReservationWithItsOwnActionsIsHeld() throws {
        // Gmail's check-in and confirm buttons are actions of the reservation, not templates of another.
        let document = ReservationResolver().resolveDocument(
            try GraphBuilder.graph(
                """
                [\(Samples.gmailFlight.dropLast(1)), "potentialAction": {"@type": "CheckInAction", "target": "https://united.example/checkin"}},
                 {"@type": "FlightReservation", "reservationId": "UPSELL",
                  "potentialAction": {"@type": "ReserveAction", "result": \(Self.table)}}]
                """))
        #expect(document.resolutions.compactMap(\.reservation?.reservationId) == ["RXJ34P", "UPSELL"])
        #expect(document.diagnostics.map(\.code) == [.actionTemplate])
    }

    @Test func anOfferedReservationIsNotHeld() throws {
        let document = ReservationResolver().resolveDocument(
            try GraphBuilder.graph(
                """
                [{"@type": "Event", "name": "Sigur Rós", "offers": {"@type": "Offer", "price": "89", "itemOffered": \(Samples.appleEvent)}},
                 {"@type": "AggregateOffer", "lowPrice": "10", "offers": [{"@type": "Offer", "itemOffered": \(Self.table)}]},
                 {"@type": "Hotel", "makesOffer": {"@type": "Thing", "itemOffered": \(Samples.appleLodging)}}]
                """))
        #expect(document.resolutions.isEmpty)
        #expect(document.diagnostics.map(\.code) == [.offeredItem, .offeredItem, .offeredItem])
        #expect(document.diagnostics.map(\.path) == ["offers.itemOffered", "offers.itemOffered", "makesOffer.itemOffered"])
    }

    @Test func anOrdersAcceptedOfferWasBought() throws {
        let resolutions = try resolve(
            """
            {"@type": "Order", "orderNumber": "1", "acceptedOffer": {"@type": "Offer", "itemOffered": \(Samples.appleLodging)}}
            """)
        #expect(resolutions.compactMap(\.reservation?.kind) == [.lodging])
    }
}
