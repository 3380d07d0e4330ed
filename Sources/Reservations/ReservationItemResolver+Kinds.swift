import Markup

/// The kind-specific properties (MARKUP.md, "Required properties").
extension ReservationItemResolver {
    var reservedItem: SchemaNode? { root.child("reservationFor") }

    // MARK: Places

    /// Reads a place; `requireAddress` holds it to the place bar (name and an address with
    /// streetAddress, addressLocality, addressCountry).
    mutating func readPlace(_ node: SchemaNode?, path: String, required: Bool, requireAddress: Bool, hint: String) -> Place? {
        guard let node else {
            if required { missing(path, hint) }
            return nil
        }
        var place = Place()
        place.name = text(node, "name", path: path)
        place.telephone = text(node, "telephone", path: path)
        if let code = text(node, "iataCode", path: path) { place.iataCode = code.uppercased() }
        // schema.org GeoCoordinates: numbers, or text that reads as one; anything else is left out.
        if let geo = node.child("geo"),
            let latitude = geo.looseText("latitude").flatMap({ Double($0.trimmingWhitespace()) }),
            let longitude = geo.looseText("longitude").flatMap({ Double($0.trimmingWhitespace()) }),
            (-90...90).contains(latitude), (-180...180).contains(longitude)
        {
            place.geo = Place.Geo(latitude: latitude, longitude: longitude)
        }
        if requireAddress, place.name == nil { missing(Self.join(path, "name"), "give the place's name") }

        let addressPath = Self.join(path, "address")
        let addressValue = node.values("address").first
        switch addressValue {
        case .node(let address)?:
            var read = Place.Address()
            read.streetAddress = text(address, "streetAddress", path: addressPath)
            read.addressLocality = text(address, "addressLocality", path: addressPath)
            read.addressRegion = text(address, "addressRegion", path: addressPath)
            read.postalCode = text(address, "postalCode", path: addressPath)
            read.addressCountry = text(address, "addressCountry", path: addressPath)
            read.countryCode = read.addressCountry.flatMap { directory.countryCode(for: $0) }
            place.address = read
            if requireAddress {
                if read.streetAddress == nil { missing(Self.join(addressPath, "streetAddress"), "give the street address") }
                if read.addressLocality == nil { missing(Self.join(addressPath, "addressLocality"), "give the city") }
                if read.addressCountry == nil {
                    missing(Self.join(addressPath, "addressCountry"), "give the country (ISO 3166 code such as US)")
                }
            }
        case .text(let line)?:
            place.address = Place.Address(streetAddress: line)
            warn(.textForItem, addressPath, "\(addressPath) is text; give a PostalAddress with streetAddress, addressLocality, addressCountry")
            if requireAddress {
                missing(Self.join(addressPath, "addressLocality"), "give the city")
                missing(Self.join(addressPath, "addressCountry"), "give the country (ISO 3166 code such as US)")
            }
        case nil:
            if requireAddress {
                missing(addressPath, "give a PostalAddress with streetAddress, addressLocality and addressCountry")
            }
        }
        return place
    }

    /// Validates an airport: a 3-letter IATA code is required.
    mutating func readAirport(_ name: String) -> Place? {
        let path = "reservationFor." + name
        let node = reservedItem?.child(name)
        guard var airport = readPlace(node, path: path, required: true, requireAddress: false, hint: "give the airport with its iataCode")
        else { return nil }
        if let code = airport.iataCode {
            if !Self.isAirportCode(code) {
                error(.invalidIATACode, path + ".iataCode", "\(path).iataCode '\(code)' is not a 3-letter IATA airport code")
                airport.iataCode = nil
            } else {
                root.updateChild("reservationFor") { $0.updateChild(name) { $0.set("iataCode", [.text(code)]) } }
            }
        } else {
            missing(path + ".iataCode", "give the airport's 3-letter IATA code")
        }
        return airport
    }

    static func isAirportCode(_ code: String) -> Bool {
        code.utf8.count == 3 && code.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x5A }
    }

    /// An airline designator: IATA (2 letters or digits, not both digits) or ICAO (3 letters).
    static func isAirlineCode(_ code: String) -> Bool {
        let bytes = Array(code.utf8)
        let isLetter = { (byte: UInt8) in byte >= 0x41 && byte <= 0x5A }
        let isDigit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
        if bytes.count == 2 { return bytes.allSatisfy { isLetter($0) || isDigit($0) } && bytes.contains(where: isLetter) }
        return bytes.count == 3 && bytes.allSatisfy(isLetter)
    }

    mutating func readProvider(_ node: SchemaNode?, path: String) -> Reservation.Provider? {
        guard let node else { return nil }
        var provider = Reservation.Provider(name: text(node, "name", path: path))
        provider.iataCode = text(node, "iataCode", path: path)?.uppercased()
        return provider
    }

    // MARK: Flight

    mutating func readFlight() {
        guard let item = reservedItem else { return }
        var provider = readProvider(item.child("provider"), path: "reservationFor.provider")
        if provider == nil { missing("reservationFor.provider", "give the airline with its name and iataCode") }
        if provider != nil, provider?.name == nil { missing("reservationFor.provider.name", "give the airline's name") }
        if let code = provider?.iataCode {
            if Self.isAirlineCode(code) {
                root.updateChild("reservationFor") { $0.updateChild("provider") { $0.set("iataCode", [.text(code)]) } }
            } else {
                error(
                    .invalidIATACode, "reservationFor.provider.iataCode",
                    "reservationFor.provider.iataCode '\(code)' is not a 2-character IATA or 3-letter ICAO airline code")
                provider?.iataCode = nil
            }
        } else if provider != nil {
            missing("reservationFor.provider.iataCode", "give the airline's 2-letter IATA code")
        }
        reservation.provider = provider

        if let written = text(item, "flightNumber", path: "reservationFor") {
            reservation.flightNumber = foldFlightNumber(written, airlineCode: provider?.iataCode)
        } else {
            missing("reservationFor.flightNumber", "give the flight number (UA110)")
        }

        reservation.departure = readAirport("departureAirport")
        reservation.arrival = readAirport("arrivalAirport")
        readLegTimes(departurePlace: "departureAirport", arrivalPlace: "arrivalAirport")
    }

    /// `UA110` from `110` with airline `UA`, or from `UA 110`/`UA-110`; checks the shape.
    mutating func foldFlightNumber(_ written: String, airlineCode: String?) -> String? {
        let path = "reservationFor.flightNumber"
        let compact = String(written.uppercased().unicodeScalars.filter { $0 != " " && $0 != "-" })
        let bytes = Array(compact.utf8)
        let isDigit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
        let isLetter = { (byte: UInt8) in byte >= 0x41 && byte <= 0x5A }
        // Digits 1-4 and an optional operational suffix letter.
        func isNumberPart(_ part: ArraySlice<UInt8>) -> Bool {
            var digits = part
            if let last = digits.last, isLetter(last) { digits = digits.dropLast() }
            return (1...4).contains(digits.count) && digits.allSatisfy(isDigit)
        }
        var folded: String?
        if isNumberPart(bytes[...]) {
            guard let airlineCode else { return compact }  // the missing airline code is reported already
            folded = airlineCode + compact
            warn(.alias, path, "\(path) \(written) with airline \(airlineCode) was read as \(airlineCode + compact); write the airline code in flightNumber")
        } else {
            for designatorLength in [2, 3] where bytes.count > designatorLength {
                let designator = String(decoding: bytes[..<designatorLength], as: UTF8.self)
                if Self.isAirlineCode(designator), isNumberPart(bytes[designatorLength...]),
                    designatorLength == 2 || bytes[2] >= 0x41
                {
                    folded = compact
                    break
                }
            }
            if let folded, folded != written {
                warn(.alias, path, "\(path) \(written) was read as \(folded); write it without spaces")
            }
        }
        guard let folded else {
            error(.invalidFlightNumber, path, "\(path) '\(written)' is not an airline code followed by 1-4 digits (UA110)")
            return nil
        }
        root.updateChild("reservationFor") { $0.set("flightNumber", [.text(folded)]) }
        return folded
    }

    /// Departure and arrival times of a trip (on `reservationFor`), zones from their places.
    mutating func readLegTimes(departurePlace: String, arrivalPlace: String) {
        guard let item = reservedItem else { return }
        let policy: DateOnlyPolicy = .warn
        reservation.startTime = readTime(
            item, "departureTime", path: "reservationFor", required: true,
            zoneFrom: (item.child(departurePlace), "reservationFor." + departurePlace), dateOnly: policy)
        reservation.endTime = readTime(
            item, "arrivalTime", path: "reservationFor", required: true,
            zoneFrom: (item.child(arrivalPlace), "reservationFor." + arrivalPlace), dateOnly: policy)
        checkArrival(
            reservation.startTime, reservation.endTime, arrivalPath: "reservationFor.arrivalTime",
            departurePath: "reservationFor.departureTime")
    }

    // MARK: Train, bus, boat

    mutating func readTrip() {
        guard let item = reservedItem else { return }
        let (departureName, arrivalName, placeHint): (String, String, String)
        switch kind {
        case .train: (departureName, arrivalName, placeHint) = ("departureStation", "arrivalStation", "station")
        case .bus: (departureName, arrivalName, placeHint) = ("departureBusStop", "arrivalBusStop", "bus station")
        default: (departureName, arrivalName, placeHint) = ("departureBoatTerminal", "arrivalBoatTerminal", "terminal")
        }
        reservation.provider = readProvider(item.child("provider"), path: "reservationFor.provider")
        switch kind {
        case .train, .bus:
            let prefix = kind == .train ? "train" : "bus"
            reservation.tripNumber = text(item, prefix + "Number", path: "reservationFor")
            reservation.tripName = text(item, prefix + "Name", path: "reservationFor")
            if reservation.tripNumber == nil, reservation.tripName == nil {
                missing("reservationFor.\(prefix)Number", "give the \(prefix) number (or reservationFor.\(prefix)Name)")
            }
        default:
            if reservation.name == nil { missing("reservationFor.name", "give the name of the crossing") }
        }
        reservation.departure = readPlace(
            item.child(departureName), path: "reservationFor." + departureName, required: true, requireAddress: true,
            hint: "give the departure \(placeHint) with its name and address")
        reservation.arrival = readPlace(
            item.child(arrivalName), path: "reservationFor." + arrivalName, required: true, requireAddress: true,
            hint: "give the arrival \(placeHint) with its name and address")
        readLegTimes(departurePlace: departureName, arrivalPlace: arrivalName)
    }

    // MARK: Rental car

    mutating func readRentalCar() {
        reservation.provider = readProvider(root.child("provider"), path: "provider")
        if reservation.provider?.name == nil {
            missing("provider.name", "give the rental company's name (provider.name or reservationFor.rentalCompany.name)")
        }
        let pickup = root.child("pickupLocation")
        let dropoff = root.child("dropoffLocation")
        reservation.departure = readPlace(
            pickup, path: "pickupLocation", required: true, requireAddress: true,
            hint: "give the pickup place with its name and address")
        reservation.arrival = readPlace(
            dropoff, path: "dropoffLocation", required: true, requireAddress: true,
            hint: "give the dropoff place with its name and address")
        reservation.startTime = readTime(
            root, "pickupTime", path: "", required: true, zoneFrom: (pickup, "pickupLocation"), dateOnly: .warn)
        reservation.endTime = readTime(
            root, "dropoffTime", path: "", required: true, zoneFrom: (dropoff, "dropoffLocation"), dateOnly: .warn)
        checkOrder(
            reservation.startTime, reservation.endTime, laterPath: "dropoffTime", earlierPath: "pickupTime",
            code: .dropoffBeforePickup)
    }

    // MARK: Lodging, restaurant, event

    mutating func readLodging() {
        let item = reservedItem
        if item != nil {
            reservation.location = readPlace(
                item, path: "reservationFor", required: true, requireAddress: true, hint: "give the lodging business")
        }
        reservation.startTime = readTime(
            root, "checkinTime", path: "", required: true, zoneFrom: (item, "reservationFor"), dateOnly: .accept)
        reservation.endTime = readTime(
            root, "checkoutTime", path: "", required: true, zoneFrom: (item, "reservationFor"), dateOnly: .accept)
        checkOrder(
            reservation.startTime, reservation.endTime, laterPath: "checkoutTime", earlierPath: "checkinTime",
            code: .checkoutBeforeCheckin)
    }

    mutating func readRestaurant() {
        let item = reservedItem
        if item != nil {
            reservation.location = readPlace(
                item, path: "reservationFor", required: true, requireAddress: true, hint: "give the restaurant")
        }
        reservation.startTime = readTime(
            root, "startTime", path: "", required: true, zoneFrom: (item, "reservationFor"), dateOnly: .refuse)
        reservation.endTime = readTime(
            root, "endTime", path: "", required: false, zoneFrom: (item, "reservationFor"), dateOnly: .refuse)
        checkOrder(reservation.startTime, reservation.endTime, laterPath: "endTime", earlierPath: "startTime", code: .endBeforeStart)
        if let written = text(root, "partySize", path: "") ?? text(root.child("partySize"), "value", path: "partySize") {
            if let size = Int(written), size >= 0, size < 100_000 {
                reservation.partySize = size
            } else {
                warn(.invalidNumber, "partySize", "partySize '\(written)' is not a whole number of people")
            }
        }
    }

    mutating func readEvent() {
        guard let item = reservedItem else { return }
        reservation.isMovie = item.types.contains("ScreeningEvent")
        if reservation.name == nil { missing("reservationFor.name", "give the event's name") }
        let venue = item.child("location")
        reservation.location = readPlace(
            venue, path: "reservationFor.location", required: true, requireAddress: true,
            hint: "give the venue with its name and address")
        reservation.startTime = readTime(
            item, "startDate", path: "reservationFor", required: true, zoneFrom: (venue, "reservationFor.location"),
            dateOnly: .accept)
        reservation.endTime = readTime(
            item, "endDate", path: "reservationFor", required: false, zoneFrom: (venue, "reservationFor.location"),
            dateOnly: .accept)
        checkOrder(
            reservation.startTime, reservation.endTime, laterPath: "reservationFor.endDate",
            earlierPath: "reservationFor.startDate", code: .endBeforeStart)
    }

    // MARK: Tickets

    /// `reservedTicket` items, plus Gmail's ticket fields on the reservation itself
    /// (`ticketNumber`, `ticketToken`, `airplaneSeat`, `venueSeat`/`venueRow`/`venueSection`).
    mutating func readTickets() {
        var tickets: [Reservation.Ticket] = []
        for ticket in root.children("reservedTicket").prefix(100) {
            var read = Reservation.Ticket(
                ticketNumber: ticket.looseText("ticketNumber"), ticketToken: ticket.looseText("ticketToken"),
                underName: ticket.looseText("underName"))
            if let seat = ticket.child("ticketedSeat") {
                read.seat = Reservation.Seat(
                    section: seat.looseText("seatSection"), row: seat.looseText("seatRow"),
                    number: seat.looseText("seatNumber"), seatingType: seat.looseText("seatingType"))
            }
            tickets.append(read)
        }
        let seatNumber = root.looseText("airplaneSeat") ?? root.looseText("venueSeat")
        let seatRow = root.looseText("venueRow")
        let seatSection = root.looseText("venueSection")
        let seatClass = root.looseText("airplaneSeatClass")
        let flatNumber = root.looseText("ticketNumber")
        let flatToken = root.looseText("ticketToken")
        if seatNumber != nil || seatRow != nil || seatSection != nil || flatNumber != nil || flatToken != nil {
            var seat: Reservation.Seat?
            if seatNumber != nil || seatRow != nil || seatSection != nil || seatClass != nil {
                seat = Reservation.Seat(section: seatSection, row: seatRow, number: seatNumber, seatingType: seatClass)
            }
            if tickets.isEmpty {
                tickets.append(Reservation.Ticket(ticketNumber: flatNumber, ticketToken: flatToken, seat: seat))
            } else {
                if tickets[0].ticketNumber == nil { tickets[0].ticketNumber = flatNumber }
                if tickets[0].ticketToken == nil { tickets[0].ticketToken = flatToken }
                if tickets[0].seat == nil { tickets[0].seat = seat }
            }
        }
        reservation.tickets = tickets
    }
}
