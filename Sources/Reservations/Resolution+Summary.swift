/// One-line summaries for the table output of `gateway extract`.
extension Resolution {
    /// `flight UA110 SFO→JFK 2027-03-04 20:15-08:00 · RXJ34P · Eva Green`; the status is added
    /// when it is not confirmed.
    package var summary: String {
        guard let reservation else {
            let type = normalized["@type"]?.string ?? "item"
            return "\(type) (not handled)" + (normalized["reservationId"]?.string.map { " · \($0)" } ?? "")
        }
        var head: [String] = [reservation.isMovie ? "movie" : reservation.kind.rawValue]
        func route(_ from: String?, _ to: String?) -> String? {
            guard from != nil || to != nil else { return nil }
            return (from ?? "?") + "→" + (to ?? "?")
        }
        let start = reservation.startTime?.shortText
        switch reservation.kind {
        case .flight:
            head += [reservation.flightNumber, route(reservation.departure?.iataCode, reservation.arrival?.iataCode), start]
                .compactMap { $0 }
        case .train, .bus, .boat:
            head += [
                reservation.tripNumber ?? reservation.tripName ?? reservation.name,
                route(reservation.departure?.name, reservation.arrival?.name), start,
            ].compactMap { $0 }
        case .rentalCar:
            head += [
                reservation.provider?.name, route(reservation.departure?.name, reservation.arrival?.name), start,
            ].compactMap { $0 }
        case .lodging:
            let stay = route(reservation.startTime?.localDate, reservation.endTime?.localDate)
            head += [reservation.name ?? reservation.location?.name, stay].compactMap { $0 }
        case .restaurant:
            head += [reservation.name ?? reservation.location?.name, start].compactMap { $0 }
            if let size = reservation.partySize { head.append("party of \(size)") }
        case .event:
            head += [reservation.name, reservation.location?.name.map { "@ " + $0 }, start].compactMap { $0 }
        }
        if reservation.isMinimalCancellation { head.append("(all items)") }
        var parts = [head.joined(separator: " ")]
        if let id = reservation.itemReference ?? reservation.reservationId { parts.append(id) }
        if let name = reservation.underName { parts.append(name) }
        if let status = reservation.status, status != .confirmed { parts.append(status.rawValue) }
        return parts.joined(separator: " · ")
    }
}
