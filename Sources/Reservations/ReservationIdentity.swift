import Markup

/// Container and item references (MARKUP.md, "Identity"; DESIGN.md, "Identity and lifecycle").
///
/// The container reference is the booking number (`Reservation.reservationId`). Where the sender
/// gives each part its own `reservationId` beside the booking's `reservationNumber`, that is the
/// part's item reference. Otherwise the item reference is the booking number for a one-part
/// booking; when several items of one document share a reference, it adds, in a
/// fixed order per kind, each distinguishing value that still separates items that look alike:
/// a flight leg by flight number and departure date (`RXJ34P-UA110-2027-03-04`), a train, bus or
/// boat leg by number and departure time, a passenger by name (else ticket number), an event
/// ticket by ticket number or seat. Two different items never share a reference: when nothing
/// tells them apart, an ordinal is added and reported.
enum ReservationIdentity {
    static func assign(_ resolutions: inout [Resolution]) {
        var groups: [String: [Int]] = [:]
        var order: [(key: String, base: String)] = []
        for index in resolutions.indices {
            guard var reservation = resolutions[index].reservation, let id = reservation.reservationId else { continue }
            let container = reservation.containerReference ?? id
            let base = reservation.itemReference ?? container  // the part's own id, where the sender gives one
            reservation.containerReference = container
            reservation.itemReference = base
            resolutions[index].reservation = reservation
            if reservation.isMinimalCancellation { continue }  // it names the whole container
            let key = container + "\u{1F}" + base
            if groups[key] == nil { order.append((key, base)) }
            groups[key, default: []].append(index)
        }
        for (key, id) in order {
            guard let members = groups[key], members.count > 1 else { continue }
            let reservations = members.compactMap { resolutions[$0].reservation }
            let references = references(for: reservations, id: id)
            for (position, index) in members.enumerated() {
                resolutions[index].reservation?.itemReference = references[position].reference
                if references[position].isAmbiguous {
                    resolutions[index].diagnostics.append(
                        Diagnostic(
                            .warning, .ambiguousItem,
                            "several items share reservationId \(id) and nothing tells them apart (flight number, "
                                + "departure, passenger, ticket); an ordinal was added to this one's reference"))
                }
            }
        }
    }

    /// The item references of the parts of one booking, in order.
    static func references(for reservations: [Reservation], id: String) -> [(reference: String, isAmbiguous: Bool)] {
        let mixedKinds = Set(reservations.map(\.kind)).count > 1
        let candidates = reservations.map { reservation in
            (mixedKinds ? [reservation.kind.rawValue.uppercased()] : []) + distinguishingValues(reservation)
        }
        let candidateCount = candidates.map(\.count).max() ?? 0
        var classes: [[Int]] = [Array(reservations.indices)]
        var chosen: [Int] = []
        for component in 0..<candidateCount where classes.contains(where: { $0.count > 1 }) {
            var split: [[Int]] = []
            for group in classes {
                var byValue: [String: [Int]] = [:]
                var valueOrder: [String] = []
                for member in group {
                    let value = component < candidates[member].count ? candidates[member][component] ?? "" : ""
                    if byValue[value] == nil { valueOrder.append(value) }
                    byValue[value, default: []].append(member)
                }
                split.append(contentsOf: valueOrder.compactMap { byValue[$0] })
            }
            if split.count > classes.count {
                chosen.append(component)
                classes = split
            }
        }
        var results = reservations.indices.map { member -> (reference: String, isAmbiguous: Bool) in
            let parts = chosen.compactMap { component in
                component < candidates[member].count ? candidates[member][component] : nil
            }
            return (([id] + parts.filter { !$0.isEmpty }).joined(separator: "-"), false)
        }
        for group in classes where group.count > 1 {
            for (ordinal, member) in group.enumerated() {
                results[member] = (results[member].reference + "-\(ordinal + 1)", true)
            }
        }
        // Distinct values can still concatenate to the same text; never let two items share one.
        var seen: [String: Int] = [:]
        for member in results.indices {
            let reference = results[member].reference
            if let count = seen[reference] {
                seen[reference] = count + 1
                results[member] = (reference + "-\(count + 1)", true)
            } else {
                seen[reference] = 1
            }
        }
        return results
    }

    /// The values that can tell parts of one booking apart, most significant first.
    static func distinguishingValues(_ reservation: Reservation) -> [String?] {
        let passenger = (reservation.underName ?? reservation.tickets.first?.underName).map(normalized)
            ?? reservation.tickets.first?.ticketNumber.map(normalized)
        let ticket = reservation.tickets.first.flatMap { ticket -> String? in
            if let number = ticket.ticketNumber { return normalized(number) }
            let label = ticket.seat?.label ?? ""
            return label.isEmpty ? nil : normalized(label)
        }
        let startDate = reservation.startTime?.localDate
        let startMinute = reservation.startTime.map { time in
            time.localTime.map { time.localDate + "T" + $0.prefix(5) } ?? time.localDate
        }
        func joined(_ parts: String?...) -> String? {
            let present = parts.compactMap { $0 }
            return present.isEmpty ? nil : present.joined(separator: "-")
        }
        switch reservation.kind {
        case .flight:
            return [joined(reservation.flightNumber, startDate), passenger, ticket]
        case .train, .bus, .boat:
            let vehicle = (reservation.tripNumber ?? reservation.tripName ?? reservation.name).map(normalized)
            return [joined(vehicle, startMinute), passenger, ticket, reservation.departure?.name.map(normalized)]
        case .event:
            return [ticket, passenger, joined(reservation.name.map(normalized), startDate)]
        case .lodging:
            return [joined(reservation.location?.name.map(normalized), startDate), passenger, ticket]
        case .restaurant:
            return [startMinute, reservation.location?.name.map(normalized), passenger]
        case .rentalCar:
            return [startMinute, reservation.departure?.name.map(normalized), reservation.name.map(normalized), passenger]
        }
    }

    /// Upper-cased, whitespace folded: `Eva  Green` and `EVA GREEN` are one passenger.
    static func normalized(_ text: String) -> String {
        text.trimmingWhitespace().uppercased()
    }
}

extension Reservation {
    /// What identifies this part within its booking regardless of the other parts in the same
    /// document: the leg for a trip (`UA110-2027-03-04`, `ICE 597-2027-05-04T10:30`), the ticket for
    /// an event, the stay for lodging, the time for a table or rental. Lets a store match a later
    /// document that carries only some parts of a booking against the parts it already holds.
    package var partKey: String? {
        ReservationIdentity.distinguishingValues(self).first ?? nil
    }
}
