import Markup
import Reservations
import Testing

@Suite("Required properties (MARKUP.md): each missing one is an error at its path")
struct RequiredPropertyTests {
    /// (sample, property removed, path of the expected error)
    static let cases: [(String, String, String)] = [
        (Samples.appleFlight, "reservationId", "reservationId"),
        (Samples.appleFlight, "reservationStatus", "reservationStatus"),
        (Samples.appleFlight, "underName", "underName.name"),
        (Samples.appleFlight, "underName.name", "underName.name"),
        (Samples.appleFlight, "reservationFor", "reservationFor"),
        (Samples.appleFlight, "reservationFor.flightNumber", "reservationFor.flightNumber"),
        (Samples.appleFlight, "reservationFor.provider.iataCode", "reservationFor.provider.iataCode"),
        (Samples.appleFlight, "reservationFor.provider.name", "reservationFor.provider.name"),
        (Samples.appleFlight, "reservationFor.departureAirport.iataCode", "reservationFor.departureAirport.iataCode"),
        (Samples.appleFlight, "reservationFor.arrivalAirport.iataCode", "reservationFor.arrivalAirport.iataCode"),
        (Samples.appleFlight, "reservationFor.departureAirport", "reservationFor.departureAirport"),
        (Samples.appleFlight, "reservationFor.departureTime", "reservationFor.departureTime"),
        (Samples.appleFlight, "reservationFor.arrivalTime", "reservationFor.arrivalTime"),
        (Samples.appleTrain, "reservationFor.trainNumber", "reservationFor.trainNumber"),
        (Samples.appleTrain, "reservationFor.departureStation", "reservationFor.departureStation"),
        (Samples.appleTrain, "reservationFor.departureStation.name", "reservationFor.departureStation.name"),
        (Samples.appleTrain, "reservationFor.departureStation.address", "reservationFor.departureStation.address"),
        (
            Samples.appleTrain, "reservationFor.arrivalStation.address.streetAddress",
            "reservationFor.arrivalStation.address.streetAddress"
        ),
        (
            Samples.appleTrain, "reservationFor.arrivalStation.address.addressLocality",
            "reservationFor.arrivalStation.address.addressLocality"
        ),
        (
            Samples.appleTrain, "reservationFor.arrivalStation.address.addressCountry",
            "reservationFor.arrivalStation.address.addressCountry"
        ),
        (Samples.appleTrain, "reservationFor.departureTime", "reservationFor.departureTime"),
        (Samples.appleBus, "reservationFor.busNumber", "reservationFor.busNumber"),
        (Samples.appleBus, "reservationFor.departureBusStop", "reservationFor.departureBusStop"),
        (Samples.appleBus, "reservationFor.arrivalBusStop.address", "reservationFor.arrivalBusStop.address"),
        (Samples.appleBus, "reservationFor.arrivalTime", "reservationFor.arrivalTime"),
        (Samples.appleBoat, "reservationFor.name", "reservationFor.name"),
        (Samples.appleBoat, "reservationFor.departureBoatTerminal", "reservationFor.departureBoatTerminal"),
        (Samples.appleBoat, "reservationFor.arrivalBoatTerminal.name", "reservationFor.arrivalBoatTerminal.name"),
        (Samples.appleRentalCar, "provider", "provider.name"),
        (Samples.appleRentalCar, "pickupTime", "pickupTime"),
        (Samples.appleRentalCar, "dropoffTime", "dropoffTime"),
        (Samples.appleRentalCar, "pickupLocation", "pickupLocation"),
        (Samples.appleRentalCar, "dropoffLocation.address", "dropoffLocation.address"),
        (Samples.appleLodging, "checkinTime", "checkinTime"),
        (Samples.appleLodging, "checkoutTime", "checkoutTime"),
        (Samples.appleLodging, "reservationFor.name", "reservationFor.name"),
        (Samples.appleLodging, "reservationFor.address", "reservationFor.address"),
        (Samples.appleRestaurant, "startTime", "startTime"),
        (Samples.appleRestaurant, "reservationFor.address.addressLocality", "reservationFor.address.addressLocality"),
        (Samples.appleEvent, "reservationFor.name", "reservationFor.name"),
        (Samples.appleEvent, "reservationFor.startDate", "reservationFor.startDate"),
        (Samples.appleEvent, "reservationFor.location", "reservationFor.location"),
        (
            Samples.appleEvent, "reservationFor.location.address.streetAddress",
            "reservationFor.location.address.streetAddress"
        ),
    ]

    @Test(arguments: cases)
    func missingPropertyIsAnErrorAtItsPath(json: String, removed: String, path: String) throws {
        let object = GraphBuilder.removing(removed, from: try GraphBuilder.object(json))
        for syntax in [SchemaNode.Syntax.jsonLD, .microdata] {
            let resolution = try resolveOne(object: object, syntax: syntax)
            #expect(resolution.reservation != nil, "the item is still found")
            #expect(!resolution.admissible)
            let missing = resolution.diagnostics.filter { $0.code == .missingProperty }
            #expect(missing.map(\.path) == [path])
            #expect(missing.allSatisfy { $0.severity == .error && $0.message.contains(path) })
        }
    }

    @Test func trainNameStandsInForTrainNumber() throws {
        var object = GraphBuilder.removing("reservationFor.trainNumber", from: try GraphBuilder.object(Samples.appleTrain))
        object = GraphBuilder.setting("reservationFor.trainName", to: "Sprinter", in: object)
        let resolution = try resolveOne(object: object)
        #expect(resolution.admissible)
        #expect(resolution.reservation?.tripName == "Sprinter")
    }

    @Test func rentalCompanyNameSatisfiesProvider() throws {
        #expect(try resolveOne(Samples.gmailRentalCar).admissible)
    }

    @Test func airportsNeedNoAddress() throws {
        let resolution = try resolveOne(Samples.appleFlight)
        #expect(resolution.admissible)
        #expect(resolution.reservation?.departure?.address == nil)
    }

    @Test(arguments: [
        ("reservationFor.departureAirport.iataCode", "SFOX", "reservationFor.departureAirport.iataCode"),
        ("reservationFor.arrivalAirport.iataCode", "12A", "reservationFor.arrivalAirport.iataCode"),
        ("reservationFor.provider.iataCode", "U", "reservationFor.provider.iataCode"),
        ("reservationFor.provider.iataCode", "12", "reservationFor.provider.iataCode"),
    ])
    func invalidIATACodes(property: String, value: String, path: String) throws {
        let object = GraphBuilder.setting(property, to: value, in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: path).contains("markup.invalid-iata-code"))
        #expect(!resolution.admissible)
    }

    @Test(arguments: ["B6", "U2", "9W", "DLH"])
    func validAirlineDesignators(code: String) throws {
        var object = GraphBuilder.setting("reservationFor.provider.iataCode", to: code, in: try GraphBuilder.object(Samples.appleFlight))
        object = GraphBuilder.setting("reservationFor.flightNumber", to: "123", in: object)
        let resolution = try resolveOne(object: object)
        #expect(resolution.admissible)
        #expect(resolution.reservation?.flightNumber == code + "123")
    }

    @Test(arguments: ["hello", "UA12345", "UA"])
    func invalidFlightNumber(value: String) throws {
        let object = GraphBuilder.setting("reservationFor.flightNumber", to: value, in: try GraphBuilder.object(Samples.appleFlight))
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "reservationFor.flightNumber") == ["markup.invalid-flight-number"])
        #expect(!resolution.admissible)
    }

    @Test func unknownStatusIsAnError() throws {
        var object = try GraphBuilder.object(Samples.appleFlight)
        object["reservationStatus"] = "http://schema.org/Booked"
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "reservationStatus") == ["markup.unknown-status"])
        #expect(resolution.reservation?.status == nil)
        #expect(!resolution.admissible)
    }

    @Test func invalidPartySizeIsAWarning() throws {
        var object = try GraphBuilder.object(Samples.appleRestaurant)
        object["partySize"] = "two"
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "partySize") == ["markup.invalid-number"])
        #expect(resolution.admissible)
    }

    @Test func addressAsTextIsReported() throws {
        let object = GraphBuilder.setting(
            "reservationFor.address", to: "1 Main St, Springfield", in: try GraphBuilder.object(Samples.appleLodging))
        let resolution = try resolveOne(object: object)
        #expect(resolution.codes(at: "reservationFor.address") == ["markup.text-for-item"])
        #expect(resolution.errors.contains("markup.missing-property@reservationFor.address.addressCountry"))
    }
}
