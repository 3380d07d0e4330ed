import Markup
import Reservations

/// Complete reservations of every kind, in Apple's dialect (canonical names) and Google's
/// (`reservationNumber`, `airline`, `checkinDate`, short status values), for hand-built graphs.
enum Samples {
    static let address = """
        {"@type": "PostalAddress", "streetAddress": "1 Main St", "addressLocality": "Springfield",
         "addressRegion": "CA", "postalCode": "94000", "addressCountry": "US"}
        """

    static func place(_ type: String, _ name: String, country: String = "US", street: String = "1 Main St") -> String {
        """
        {"@type": "\(type)", "name": "\(name)", "address": {"@type": "PostalAddress", "streetAddress": "\(street)",
         "addressLocality": "Springfield", "addressCountry": "\(country)"}}
        """
    }

    // MARK: Apple (canonical)

    static let appleFlight = """
        {"@context": "https://schema.org", "@type": "FlightReservation", "reservationId": "RXJ34P",
         "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "reservationFor": {"@type": "Flight", "flightNumber": "UA110",
           "provider": {"@type": "Airline", "name": "United", "iataCode": "UA"},
           "departureAirport": {"@type": "Airport", "name": "San Francisco", "iataCode": "SFO"},
           "departureTime": "2027-03-04T20:15:00-08:00",
           "arrivalAirport": {"@type": "Airport", "name": "Newark", "iataCode": "EWR"},
           "arrivalTime": "2027-03-05T04:30:00-05:00"},
         "airplaneSeat": "9A", "ticketNumber": "0162345678901"}
        """

    static let appleTrain = """
        {"@type": "TrainReservation", "reservationId": "AB3XY2", "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "reservationFor": {"@type": "TrainTrip", "trainNumber": "ICE 597", "provider": {"@type": "Organization", "name": "DB"},
           "departureStation": \(place("TrainStation", "München Hbf", country: "DE")),
           "departureTime": "2027-05-04T10:30:00+02:00",
           "arrivalStation": \(place("TrainStation", "Berlin Hbf", country: "DE")),
           "arrivalTime": "2027-05-04T14:30:00+02:00"},
         "reservedTicket": {"@type": "Ticket", "ticketNumber": "T-1",
           "ticketedSeat": {"@type": "Seat", "seatNumber": "27", "seatingType": "1st Class"}}}
        """

    static let appleBus = """
        {"@type": "BusReservation", "reservationId": "B-77", "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": {"@type": "BusTrip", "busNumber": "42", "provider": {"@type": "Organization", "name": "Bolt"},
           "departureBusStop": \(place("BusStation", "Port Authority")),
           "departureTime": "2027-01-04T12:30:00-05:00",
           "arrivalBusStop": \(place("BusStation", "South Station")),
           "arrivalTime": "2027-01-04T17:10:00-05:00"}}
        """

    static let appleBoat = """
        {"@type": "BoatReservation", "reservationId": "FB1", "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "reservationFor": {"@type": "BoatTrip", "name": "Harwich - Hoek", "provider": {"@type": "Organization", "name": "Ferries"},
           "departureBoatTerminal": \(place("BoatTerminal", "Harwich", country: "GB")),
           "departureTime": "2027-06-01T09:00:00+01:00",
           "arrivalBoatTerminal": \(place("BoatTerminal", "Hoek van Holland", country: "NL")),
           "arrivalTime": "2027-06-01T17:15:00+02:00"}}
        """

    static let appleRentalCar = """
        {"@type": "RentalCarReservation", "reservationId": "546323", "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "provider": {"@type": "Organization", "name": "Hertz"},
         "reservationFor": {"@type": "Car", "name": "Economy", "model": "Civic"},
         "pickupLocation": \(place("Place", "Hertz SAN")), "pickupTime": "2027-08-05T16:00:00-07:00",
         "dropoffLocation": \(place("Place", "Hertz LAX")), "dropoffTime": "2027-08-06T20:00:00-07:00"}
        """

    static let appleLodging = """
        {"@type": "LodgingReservation", "reservationId": "abc456", "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": \(place("LodgingBusiness", "Hilton Union Square")),
         "checkinTime": "2027-04-11T16:00:00-07:00", "checkoutTime": "2027-04-13T11:00:00-07:00"}
        """

    static let appleRestaurant = """
        {"@type": "FoodEstablishmentReservation", "reservationId": "OT12345",
         "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": \(place("FoodEstablishment", "Wagamama", country: "United Kingdom")),
         "startTime": "2027-04-10T19:00:00+01:00", "partySize": "2"}
        """

    static let appleEvent = """
        {"@type": "EventReservation", "reservationId": "E123456789", "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": {"@type": "Event", "name": "Foo Fighters Concert", "startDate": "2027-03-06T19:30:00-08:00",
           "endDate": "2027-03-06T23:00:00-08:00", "location": \(place("Place", "AT&T Park"))},
         "reservedTicket": {"@type": "Ticket", "ticketNumber": "abc123",
           "ticketedSeat": {"@type": "Seat", "seatSection": "101", "seatRow": "A", "seatNumber": "12"}}}
        """

    static let appleMovie = """
        {"@type": "EventReservation", "reservationId": "CIN-1", "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Carol Green"},
         "reservationFor": {"@type": "ScreeningEvent", "name": "Metropolis", "startDate": "2027-02-14T20:15:00+01:00",
           "location": \(place("MovieTheater", "Kino", country: "DE"))}}
        """

    static let appleCases: [(Reservation.Kind, String)] = [
        (.flight, appleFlight), (.train, appleTrain), (.bus, appleBus), (.boat, appleBoat),
        (.rentalCar, appleRentalCar), (.lodging, appleLodging), (.restaurant, appleRestaurant), (.event, appleEvent),
    ]

    // MARK: Google (Gmail)

    static let gmailFlight = """
        {"@context": "http://schema.org", "@type": "FlightReservation", "reservationNumber": "RXJ34P",
         "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
         "reservationFor": {"@type": "Flight", "flightNumber": "110",
           "airline": {"@type": "Airline", "name": "United", "iataCode": "UA"},
           "departureAirport": {"@type": "Airport", "name": "San Francisco", "iataCode": "SFO"},
           "departureTime": "2027-03-04T20:15:00-08:00",
           "arrivalAirport": {"@type": "Airport", "name": "Newark", "iataCode": "EWR"},
           "arrivalTime": "2027-03-05T04:30:00-05:00"}}
        """

    static let gmailTrain = """
        {"@type": "TrainReservation", "reservationNumber": "AB3XY2", "reservationStatus": "http://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "reservationFor": {"@type": "TrainTrip", "trainNumber": "ICE 597", "trainCompany": {"@type": "Organization", "name": "DB"},
           "departureStation": \(place("TrainStation", "München Hbf", country: "DE")),
           "departureTime": "2027-05-04T10:30:00+02:00",
           "arrivalStation": \(place("TrainStation", "Berlin Hbf", country: "DE")),
           "arrivalTime": "2027-05-04T14:30:00+02:00"}}
        """

    static let gmailBus = """
        {"@type": "BusReservation", "reservationNumber": "B-77", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": {"@type": "BusTrip", "busName": "Boston Express", "busCompany": {"@type": "Organization", "name": "Bolt"},
           "departureBusStop": \(place("BusStop", "Port Authority")),
           "departureTime": "2027-01-04T12:30:00-05:00",
           "arrivalBusStop": \(place("BusStop", "South Station")),
           "arrivalTime": "2027-01-04T17:10:00-05:00"}}
        """

    static let gmailBoat = """
        {"@type": "BoatReservation", "reservationNumber": "FB1", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "reservationFor": {"@type": "BoatTrip", "name": "Harwich - Hoek",
           "departureBoatTerminal": \(place("BoatTerminal", "Harwich", country: "GB")),
           "departureTime": "2027-06-01T09:00:00+01:00",
           "arrivalBoatTerminal": \(place("BoatTerminal", "Hoek van Holland", country: "NL")),
           "arrivalTime": "2027-06-01T17:15:00+02:00"}}
        """

    static let gmailRentalCar = """
        {"@type": "RentalCarReservation", "reservationNumber": "546323", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": {"@type": "RentalCar", "name": "Economy", "rentalCompany": {"@type": "Organization", "name": "Hertz"}},
         "pickupLocation": \(place("Place", "Hertz SAN")), "pickupTime": "2027-08-05T16:00:00-07:00",
         "dropoffLocation": \(place("Place", "Hertz LAX")), "dropoffTime": "2027-08-06T20:00:00-07:00"}
        """

    static let gmailLodging = """
        {"@type": "LodgingReservation", "reservationNumber": "abc456", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": \(place("Hotel", "Hilton Union Square")),
         "checkinDate": "2027-04-11T16:00:00-07:00", "checkoutDate": "2027-04-13T11:00:00-07:00"}
        """

    static let gmailRestaurant = """
        {"@type": "FoodEstablishmentReservation", "reservationNumber": "OT12345", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": {"@type": "Restaurant", "name": "Wagamama", "startDate": "2027-04-10T19:00:00+01:00",
           "address": {"@type": "PostalAddress", "streetAddress": "1 Tavistock St", "addressLocality": "London",
             "addressCountry": "United Kingdom"}},
         "partySize": "2"}
        """

    static let gmailEvent = """
        {"@type": "EventReservation", "reservationNumber": "E123456789", "reservationStatus": "http://schema.org/Confirmed",
         "underName": {"@type": "Person", "name": "John Smith"},
         "reservationFor": {"@type": "MusicEvent", "name": "Foo Fighters Concert", "startDate": "2027-03-06T19:30:00-08:00",
           "location": \(place("Place", "AT&T Park"))},
         "venueSeat": "12", "venueRow": "A", "venueSection": "101", "ticketNumber": "abc123"}
        """

    static let gmailCases: [(Reservation.Kind, String)] = [
        (.flight, gmailFlight), (.train, gmailTrain), (.bus, gmailBus), (.boat, gmailBoat),
        (.rentalCar, gmailRentalCar), (.lodging, gmailLodging), (.restaurant, gmailRestaurant), (.event, gmailEvent),
    ]
}

/// One sample in one dialect and syntax, for parameterized tests.
struct SampleCase: Sendable, CustomStringConvertible {
    var kind: Reservation.Kind
    var dialect: String
    var json: String
    var syntax: SchemaNode.Syntax

    var description: String { "\(kind) \(dialect) \(syntax.rawValue)" }

    static let all: [SampleCase] = [SchemaNode.Syntax.jsonLD, .microdata].flatMap { syntax in
        Samples.appleCases.map { SampleCase(kind: $0.0, dialect: "apple", json: $0.1, syntax: syntax) }
            + Samples.gmailCases.map { SampleCase(kind: $0.0, dialect: "gmail", json: $0.1, syntax: syntax) }
    }
}
