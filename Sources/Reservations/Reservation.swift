/// One reservation item in the gateway's normal form (MARKUP.md): a flight leg for one passenger,
/// a hotel stay, a table, a rental, a train/bus/boat leg, an event ticket. `Codable` because the
/// store keeps it as JSON.
///
/// Which fields are set depends on `kind`:
/// - flight: `flightNumber` (airline code + number), `provider` (the airline, `iataCode`),
///   `departure`/`arrival` airports (`iataCode`), `startTime` departure, `endTime` arrival.
/// - train, bus: `tripNumber`/`tripName` (`trainNumber`/`busNumber`…), `departure`/`arrival`
///   stations, `startTime`/`endTime`; boat: `name` of the trip, terminals, times.
/// - rentalCar: `provider` (rental company), `departure` pickup and `arrival` dropoff locations,
///   `startTime` pickup, `endTime` dropoff, `name` the car.
/// - lodging: `location` the lodging business, `name` its name, `startTime` check-in, `endTime` checkout.
/// - restaurant: `location` the establishment, `name` its name, `startTime`, `endTime`, `partySize`.
/// - event: `name`, `location` the venue, `startTime` `startDate`, `endTime` `endDate`;
///   `isMovie` for a `ScreeningEvent`.
package struct Reservation: Codable, Sendable, Hashable {
    /// The kinds the gateway handles (MARKUP.md, "Required properties").
    package enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        case restaurant, flight, lodging, rentalCar, train, bus, boat, event

        /// The schema.org reservation type of this kind (`FlightReservation`).
        package var schemaType: String {
            switch self {
            case .restaurant: "FoodEstablishmentReservation"
            case .flight: "FlightReservation"
            case .lodging: "LodgingReservation"
            case .rentalCar: "RentalCarReservation"
            case .train: "TrainReservation"
            case .bus: "BusReservation"
            case .boat: "BoatReservation"
            case .event: "EventReservation"
            }
        }
    }

    /// schema.org `ReservationStatusType`: what the calendar does with the item (MARKUP.md, "Status").
    package enum Status: String, Codable, Sendable, Hashable, CaseIterable {
        case confirmed, cancelled, pending, hold

        /// `https://schema.org/ReservationConfirmed` and so on.
        package var schemaIRI: String {
            switch self {
            case .confirmed: "https://schema.org/ReservationConfirmed"
            case .cancelled: "https://schema.org/ReservationCancelled"
            case .pending: "https://schema.org/ReservationPending"
            case .hold: "https://schema.org/ReservationHold"
            }
        }
    }

    /// An organization: the airline, rail or bus company, ferry line, rental company.
    package struct Provider: Codable, Sendable, Hashable {
        package var name: String?
        /// The airline's IATA (2) or ICAO (3) code, uppercased.
        package var iataCode: String?

        package init(name: String? = nil, iataCode: String? = nil) {
            self.name = name
            self.iataCode = iataCode
        }
    }

    /// A seat (schema.org `Seat`, or Gmail's `airplaneSeat`/`venueSeat`/`venueRow`/`venueSection`).
    package struct Seat: Codable, Sendable, Hashable {
        package var section: String?
        package var row: String?
        package var number: String?
        package var seatingType: String?

        package init(section: String? = nil, row: String? = nil, number: String? = nil, seatingType: String? = nil) {
            self.section = section
            self.row = row
            self.number = number
            self.seatingType = seatingType
        }

        /// `101-A-12`: section, row and number, those given.
        package var label: String {
            [section, row, number].compactMap { $0 }.joined(separator: "-")
        }
    }

    /// A ticket (schema.org `reservedTicket`, or Gmail's `ticketNumber`/`ticketToken` on the reservation).
    package struct Ticket: Codable, Sendable, Hashable {
        package var ticketNumber: String?
        package var ticketToken: String?
        package var underName: String?
        package var seat: Seat?

        package init(ticketNumber: String? = nil, ticketToken: String? = nil, underName: String? = nil, seat: Seat? = nil) {
            self.ticketNumber = ticketNumber
            self.ticketToken = ticketToken
            self.underName = underName
            self.seat = seat
        }
    }

    /// Which of the eight kinds this is (from the reservation's `@type`).
    package var kind: Kind
    /// True for an `EventReservation` of a `ScreeningEvent` (a movie).
    package var isMovie: Bool
    /// The booking number: `reservationId` or Gmail's `reservationNumber`, whichever is given; when both
    /// are given and differ, `reservationNumber` (the `reservationId` then identifies this part:
    /// `itemReference`).
    package var reservationId: String?
    /// `reservationStatus`; nil when absent or not one of the four.
    package var status: Status?
    /// `underName.name`: the person the reservation is for.
    package var underName: String?
    /// `modifiedTime`: decides which of two versions of an item is newer.
    package var modifiedTime: ReservationTime?
    /// `url`: where the sender shows the reservation.
    package var url: String?
    /// The airline (`reservationFor.provider`), rail/bus/ferry company, or rental company (`provider`).
    package var provider: Provider?
    /// The booking number, shared by every part of a booking (MARKUP.md, "Identity").
    package var containerReference: String?
    /// The key of this part: the part's own `reservationId` where the sender gives one beside the
    /// booking's `reservationNumber`; else the booking number for a one-part booking, with what tells
    /// the parts apart added for multi-part ones.
    package var itemReference: String?
    /// A cancellation giving only `reservationId` and a cancelled status: it cancels every item
    /// stored under that reservation id from the same source.
    package var isMinimalCancellation: Bool

    /// `reservationFor.name`: the event, restaurant, hotel, car, or boat trip.
    package var name: String?
    /// Departure, check-in, pickup, table time, event start.
    package var startTime: ReservationTime?
    /// Arrival, checkout, dropoff, end of the table booking, event end.
    package var endTime: ReservationTime?
    /// Departure airport, station, bus stop or terminal; pickup location.
    package var departure: Place?
    /// Arrival airport, station, bus stop or terminal; dropoff location.
    package var arrival: Place?
    /// The restaurant, lodging business or event venue.
    package var location: Place?
    /// Airline code and number (`UA110`).
    package var flightNumber: String?
    /// `trainNumber` or `busNumber`.
    package var tripNumber: String?
    /// `trainName` or `busName`.
    package var tripName: String?
    /// `partySize` of a table booking.
    package var partySize: Int?
    /// Tickets and seats, in document order.
    package var tickets: [Ticket]

    /// An empty reservation of `kind`, to be filled in.
    package init(kind: Kind) {
        self.kind = kind
        isMovie = false
        isMinimalCancellation = false
        tickets = []
    }
}
