import Reservations
import TestSupport

extension CorpusComparison {
    /// The flat form of a resolved reservation, with the fields the corpus README lists per type.
    static func flat(_ reservation: Reservation) -> Flat {
        var flat: Flat = ["type": reservation.kind.rawValue]
        flat["reservationId"] = reservation.reservationId
        flat["reservationStatus"] = reservation.status?.rawValue
        flat["underName"] = reservation.underName
        switch reservation.kind {
        case .flight:
            flat["flightNumber"] = reservation.flightNumber
            flat["departureAirport"] = reservation.departure?.iataCode
            flat["arrivalAirport"] = reservation.arrival?.iataCode
            flat["departureTime"] = reservation.startTime?.resolved
            flat["arrivalTime"] = reservation.endTime?.resolved
        case .train, .bus, .boat:
            flat["departureStation"] = reservation.departure?.name
            flat["arrivalStation"] = reservation.arrival?.name
            flat["departureTime"] = reservation.startTime?.resolved
            flat["arrivalTime"] = reservation.endTime?.resolved
        case .lodging:
            flat["name"] = reservation.name ?? reservation.location?.name
            flat["checkinTime"] = reservation.startTime?.resolved
            flat["checkoutTime"] = reservation.endTime?.resolved
        case .restaurant:
            flat["name"] = reservation.name ?? reservation.location?.name
            flat["startDate"] = reservation.startTime?.resolved
        case .rentalCar:
            flat["pickupLocation"] = reservation.departure?.name
            flat["pickupTime"] = reservation.startTime?.resolved
            flat["dropoffLocation"] = reservation.arrival?.name
            flat["dropoffTime"] = reservation.endTime?.resolved
        case .event:
            flat["name"] = reservation.name
            flat["startDate"] = reservation.startTime?.resolved
            flat["location"] = reservation.location?.name
        }
        if let address = reservation.location?.address {
            flat["address.streetAddress"] = address.streetAddress
            flat["address.addressLocality"] = address.addressLocality
        }
        return flat
    }
}
