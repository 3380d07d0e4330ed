import Markup
import Reservations
import Testing

@Suite("Alias folding (MARKUP.md, Normal form)")
struct AliasTests {
    @Test func reservationNumberBecomesReservationId() throws {
        let resolution = try resolveOne(Samples.gmailFlight)
        #expect(resolution.reservation?.reservationId == "RXJ34P")
        #expect(resolution.codes(at: "reservationNumber") == ["markup.alias"])
        #expect(resolution.normalized["reservationId"] == .string("RXJ34P"))
    }

    /// Both given and different: the booking's number and this part's own id (MARKUP.md, Identity).
    @Test func reservationNumberBesideADifferentReservationIdIsTheContainer() throws {
        var object = try GraphBuilder.object(Samples.appleFlight)
        object["reservationNumber"] = "BOOKING7"
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.reservationId == "BOOKING7")
        #expect(resolution.reservation?.containerReference == "BOOKING7")
        #expect(resolution.reservation?.itemReference == "RXJ34P")
        #expect(resolution.codes(at: "reservationNumber").isEmpty)
        #expect(resolution.normalized["reservationNumber"] == .string("BOOKING7"))
        #expect(resolution.normalized["reservationId"] == .string("RXJ34P"))
        #expect(resolution.admissible)
    }

    @Test func reservationNumberEqualToReservationIdIsOneNumber() throws {
        var object = try GraphBuilder.object(Samples.appleFlight)
        object["reservationNumber"] = "RXJ34P"
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.containerReference == "RXJ34P")
        #expect(resolution.reservation?.itemReference == "RXJ34P")
        #expect(resolution.normalized["reservationNumber"] == nil)
    }

    @Test(arguments: [
        ("http://schema.org/Confirmed", Reservation.Status.confirmed, true),
        ("https://schema.org/Confirmed", .confirmed, true),
        ("Confirmed", .confirmed, true),
        ("ReservationConfirmed", .confirmed, false),
        ("http://schema.org/ReservationConfirmed", .confirmed, false),
        ("https://schema.org/ReservationConfirmed", .confirmed, false),
        ("schema:ReservationConfirmed", .confirmed, false),
        ("http://schema.org/Cancelled", .cancelled, true),
        ("https://schema.org/ReservationCancelled", .cancelled, false),
        ("ReservationCancelled", .cancelled, false),
        ("http://schema.org/ReservationPending", .pending, false),
        ("ReservationHold", .hold, false),
    ])
    func statusValues(written: String, status: Reservation.Status, isAlias: Bool) throws {
        var object = try GraphBuilder.object(Samples.appleEvent)
        object["reservationStatus"] = written
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.status == status)
        #expect(resolution.normalized["reservationStatus"] == .string(status.schemaIRI))
        #expect(resolution.codes(at: "reservationStatus") == (isAlias ? ["markup.alias"] : []))
    }

    @Test func statusAsIdReference() throws {
        var object = try GraphBuilder.object(Samples.appleEvent)
        object["reservationStatus"] = ["@id": "http://schema.org/ReservationCancelled"]
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.status == .cancelled)
    }

    @Test func checkinDateAndCheckoutDate() throws {
        let resolution = try resolveOne(Samples.gmailLodging)
        #expect(resolution.codes(at: "checkinDate") == ["markup.alias"])
        #expect(resolution.codes(at: "checkoutDate") == ["markup.alias"])
        #expect(resolution.normalized["checkinTime"] != nil)
        #expect(resolution.normalized["checkinDate"] == nil)
        #expect(resolution.admissible)
    }

    @Test func airlineBecomesProvider() throws {
        let resolution = try resolveOne(Samples.gmailFlight)
        #expect(resolution.codes(at: "reservationFor.airline") == ["markup.alias"])
        #expect(resolution.normalized["reservationFor"]?["provider"]?["iataCode"] == .string("UA"))
        #expect(resolution.normalized["reservationFor"]?["airline"] == nil)
    }

    @Test(arguments: [("110", "UA110", true), ("UA110", "UA110", false), ("UA 110", "UA110", true), ("ua110", "UA110", true)])
    func flightNumbers(written: String, folded: String, isAlias: Bool) throws {
        let object = GraphBuilder.setting("reservationFor.flightNumber", to: written, in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.flightNumber == folded)
        #expect(resolution.normalized["reservationFor"]?["flightNumber"] == .string(folded))
        #expect(resolution.codes(at: "reservationFor.flightNumber") == (isAlias ? ["markup.alias"] : []))
    }

    @Test func codeshareFlightNumberStaysAsGiven() throws {
        // schema.org's own example: operated by CO, sold as UA110.
        let object = GraphBuilder.setting(
            "reservationFor.provider", to: ["@type": "Airline", "name": "Continental", "iataCode": "CO"],
            in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.flightNumber == "UA110")
        #expect(resolution.admissible)
    }

    @Test(arguments: [("train", Samples.gmailTrain, "trainCompany"), ("bus", Samples.gmailBus, "busCompany")])
    func companyBecomesProvider(kind: String, json: String, property: String) throws {
        let resolution = try resolveOne(json)
        #expect(resolution.codes(at: "reservationFor.\(property)").contains("markup.alias"))
        #expect(resolution.reservation?.provider?.name != nil)
        #expect(resolution.normalized["reservationFor"]?["provider"] != nil)
    }

    @Test func rentalCompanyBecomesProvider() throws {
        let resolution = try resolveOne(Samples.gmailRentalCar)
        #expect(resolution.codes(at: "reservationFor.rentalCompany") == ["markup.alias"])
        #expect(resolution.reservation?.provider?.name == "Hertz")
        #expect(resolution.normalized["provider"]?["name"] == .string("Hertz"))
        #expect(resolution.admissible)
    }

    @Test func busStopBecomesBusStation() throws {
        let resolution = try resolveOne(Samples.gmailBus)
        #expect(resolution.codes(at: "reservationFor.departureBusStop") == ["markup.alias"])
        #expect(resolution.normalized["reservationFor"]?["departureBusStop"]?["@type"] == .string("BusStation"))
    }

    @Test(arguments: [
        (Samples.appleLodging, "LodgingBusiness", "Hotel"), (Samples.appleLodging, "LodgingBusiness", "Hostel"),
        (Samples.appleLodging, "LodgingBusiness", "Motel"), (Samples.appleLodging, "LodgingBusiness", "Resort"),
        (Samples.appleRestaurant, "FoodEstablishment", "Restaurant"),
        (Samples.appleRestaurant, "FoodEstablishment", "CafeOrCoffeeShop"),
        (Samples.appleRestaurant, "FoodEstablishment", "Bakery"), (Samples.appleRestaurant, "FoodEstablishment", "BarOrPub"),
        (Samples.appleEvent, "Event", "MusicEvent"), (Samples.appleEvent, "Event", "SportsEvent"),
        (Samples.appleEvent, "Event", "TheaterEvent"),
    ])
    func subtypesFold(json: String, normal: String, subtype: String) throws {
        let object = GraphBuilder.setting("reservationFor.@type", to: subtype, in: try GraphBuilder.object(json))
        let resolution = try resolveOne(object: object)
        #expect(resolution.normalized["reservationFor"]?["@type"] == .string(normal))
        #expect(resolution.codes(at: "reservationFor") == ["markup.alias"])
        #expect(resolution.admissible)
    }

    @Test func restaurantStartDateBecomesStartTime() throws {
        let resolution = try resolveOne(Samples.gmailRestaurant)
        #expect(resolution.codes(at: "reservationFor.startDate") == ["markup.alias"])
        #expect(resolution.reservation?.startTime?.original == "2027-04-10T19:00:00+01:00")
        #expect(resolution.admissible)
    }

    @Test(arguments: ["http://schema.org/", "https://schema.org/", "https://www.schema.org/", "schema:"])
    func schemaOrgIRIsAreStripped(prefix: String) throws {
        var graph = try GraphBuilder.graph(Samples.appleFlight)
        graph.nodes[0].types = [prefix + "FlightReservation"]
        graph.nodes[0].properties = graph.nodes[0].properties.map {
            SchemaProperty(name: $0.name == "reservationId" ? prefix + "reservationId" : $0.name, values: $0.values)
        }
        let resolutions = ReservationResolver().resolve(graph)
        #expect(resolutions.count == 1)
        #expect(resolutions.first?.reservation?.reservationId == "RXJ34P")
        #expect(resolutions.first?.admissible == true)
        #expect(resolutions.first?.warnings.isEmpty == true)
    }

    @Test func genericReservationTakesKindFromReservedItem() throws {
        let object = GraphBuilder.setting("@type", to: "Reservation", in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.kind == .flight)
        #expect(resolution.codes(at: "@type") == ["markup.alias"])
        #expect(resolution.normalized["@type"] == .string("FlightReservation"))
    }

    @Test func textUnderNameIsReadAsPerson() throws {
        let object = GraphBuilder.setting("underName", to: "Eva Green", in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.underName == "Eva Green")
        #expect(resolution.codes(at: "underName") == ["markup.text-for-item"])
        #expect(resolution.normalized["underName"]?["name"] == .string("Eva Green"))
        #expect(resolution.admissible)
    }

    @Test func givenAndFamilyNameMakeTheName() throws {
        let object = GraphBuilder.setting(
            "underName", to: ["@type": "Person", "givenName": "Eva", "familyName": "Green"],
            in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.underName == "Eva Green")
        #expect(resolution.codes(at: "underName.givenName") == ["markup.alias"])
    }

    @Test func ticketUnderNameStandsInForUnderName() throws {
        var object = GraphBuilder.removing("underName", from: try GraphBuilder.object(Samples.appleTrain))
        object = GraphBuilder.setting("reservedTicket.underName", to: ["@type": "Person", "name": "Eva Green"], in: object)
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.underName == "Eva Green")
        #expect(resolution.codes(at: "reservedTicket.underName") == ["markup.alias"])
        #expect(resolution.admissible)
    }

    @Test func severalReservedItemsAreOneReservationEach() throws {
        var object = try GraphBuilder.object(Samples.appleEvent)
        let event = try #require(object["reservationFor"] as? [String: Any])
        var other = event
        other["name"] = "Another"
        object["reservationFor"] = [event, other]
        let resolutions = ReservationResolver().resolve(GraphBuilder.graph(object))
        #expect(resolutions.map(\.reservation?.name) == ["Foo Fighters Concert", "Another"])
        #expect(resolutions.allSatisfy { $0.admissible && $0.codes(at: "reservationFor").isEmpty })
        #expect(Set(resolutions.map(\.reservation?.containerReference)) == [Optional("E123456789")])
        #expect(Set(resolutions.compactMap(\.reservation?.itemReference)).count == 2)
    }
}

@Suite("Codes given as text")
struct CodeTextTests {
    @Test func airportAndAirlineCodesAsText() throws {
        var object = try GraphBuilder.object(Samples.appleFlight)
        object = GraphBuilder.setting("reservationFor.departureAirport", to: "sfo", in: object)
        object = GraphBuilder.setting("reservationFor.provider", to: "UA", in: object)
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.departure?.iataCode == "SFO")
        #expect(resolution.reservation?.provider?.iataCode == "UA")
        #expect(resolution.codes(at: "reservationFor.departureAirport") == ["markup.text-for-item"])
        // The airline's name is still required.
        #expect(resolution.errors == ["markup.missing-property@reservationFor.provider.name"])
    }

    @Test func airportNameAsTextIsNotACode() throws {
        let object = GraphBuilder.setting(
            "reservationFor.departureAirport", to: "San Francisco", in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.reservation?.departure?.name == "San Francisco")
        #expect(resolution.errors.contains("markup.missing-property@reservationFor.departureAirport.iataCode"))
    }
}
