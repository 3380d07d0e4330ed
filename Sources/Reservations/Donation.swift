package import Foundation
internal import Markup

/// An app donation (issue 17): the server side of what a booking app donates to SiriKit, an `INInteraction` wrapping an
/// `INGetReservationDetailsIntent` and its response, as JSON:
///
/// ```json
/// {"intent": {"reservationContainerReference": {"vocabularyIdentifier": "RXJ34P"},
///             "reservationItemReferences": [{"vocabularyIdentifier": "RXJ34P"}]},
///  "responseCode": "success",
///  "dateInterval": {"startDate": "2027-03-01T09:00:00Z"},
///  "reservations": [{"type": "INFlightReservation", "itemReference": "RXJ34P", "reservationNumber": "RXJ34P", ...}]}
/// ```
///
/// Each reservation is one of the eight `INReservation` subclasses, with that class's fields. A donation is read into
/// the same typed ``Reservation`` as markup, through the same resolver ("rules live once"): its fields are written as
/// the schema.org object they mean, resolved, and every problem is reported at the donation's own field path
/// (`donation.missing-property reservations[0].flight.departureAirport`).
package struct Donation: Sendable {
    /// One thing wrong with a donation: a stable code at a field path, and what to do.
    package struct Problem: Sendable, Hashable, Codable, CustomStringConvertible {
        package var code: String
        package var path: String
        package var message: String

        package init(code: String, path: String, message: String) {
            self.code = code
            self.path = path
            self.message = message
        }

        package var description: String { path.isEmpty ? code : "\(code) \(path)" }
    }

    /// The `INReservation` subclasses and the kind each becomes.
    package static let classes: [String: Reservation.Kind] = [
        "INRestaurantReservation": .restaurant, "INFlightReservation": .flight, "INLodgingReservation": .lodging,
        "INRentalCarReservation": .rentalCar, "INTrainReservation": .train, "INBusReservation": .bus,
        "INBoatReservation": .boat, "INTicketedEventReservation": .event,
    ]

    /// One resolution per donated reservation, in order, with container and item references assigned.
    package var resolutions: [Resolution]
    /// Everything wrong with the donation; a donation with any problem is refused whole.
    package var problems: [Problem]
    /// `dateInterval.startDate`: when the app says the interaction happened.
    package var interactionTime: Date?
    /// Each reservation's `bookingTime`, in order.
    package var bookingTimes: [Date?]
    /// `appIdentifier`: the app that says it donated (checked against the token's app).
    package var appIdentifier: String?

    /// The most reservations one donation may carry.
    package static let maxReservations = 50

    /// Reads a donation's JSON and resolves its reservations.
    package static func read(_ bytes: [UInt8], resolver: ReservationResolver = ReservationResolver()) -> Donation {
        var donation = Donation(
            resolutions: [], problems: [], interactionTime: nil, bookingTimes: [], appIdentifier: nil)
        func problem(_ code: String, _ path: String, _ message: String) {
            donation.problems.append(Problem(code: code, path: path, message: message))
        }
        guard let document = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)), case .object = document
        else {
            problem("donation.malformed", "", "the body is not a JSON object; send the donation as application/json")
            return donation
        }
        donation.appIdentifier = document["appIdentifier"]?.string
        if let code = document["responseCode"]?.string, code.lowercased() != "success" {
            problem(
                "donation.response-not-success", "responseCode",
                "the intent's response code is \(code.prefix(40)); donate only responses with code success")
        }
        if let start = document["dateInterval"]?["startDate"] {
            if let text = start.string, let date = ReservationAction.instant(text) {
                donation.interactionTime = date
            } else {
                problem("donation.invalid-date", "dateInterval.startDate", "give an ISO 8601 date-time with an offset")
            }
        }
        let intent = document["intent"]
        let container = intent?["reservationContainerReference"].flatMap(speakable)
        let itemReferences = intent?["reservationItemReferences"].map(Donation.items)?.compactMap(speakable) ?? []
        guard case .array(let reservations)? = document["reservations"], !reservations.isEmpty else {
            problem("donation.missing-property", "reservations", "give the response's reservations, at least one")
            return donation
        }
        guard reservations.count <= maxReservations else {
            problem(
                "donation.too-many-reservations", "reservations", "at most \(maxReservations) reservations per donation"
            )
            return donation
        }
        var resolutions: [Resolution] = []
        for (index, value) in reservations.enumerated() {
            let path = "reservations[\(index)]"
            guard case .object = value, let type = value["type"]?.string else {
                problem(
                    "donation.missing-property", path + ".type",
                    "name the INReservation subclass (\"type\": \"INFlightReservation\")")
                continue
            }
            guard let kind = classes[type] else {
                problem(
                    "donation.unknown-type", path + ".type",
                    "\(type.prefix(60)) is not one of the eight INReservation subclasses (\(classes.keys.sorted().joined(separator: ", ")))"
                )
                continue
            }
            let number = value["reservationNumber"]?.string ?? container
            if let container, let given = value["reservationNumber"]?.string, given != container {
                problem(
                    "donation.reference-mismatch", path + ".reservationNumber",
                    "the intent's reservationContainerReference is \(container.prefix(64)); a donation is about one booking"
                )
            }
            let item = value["itemReference"].flatMap(speakable)
            if let item, !itemReferences.isEmpty, !itemReferences.contains(item) {
                problem(
                    "donation.reference-mismatch", path + ".itemReference",
                    "not among the intent's reservationItemReferences")
            }
            var node = SchemaNode(types: [kind.schemaType], syntax: .jsonLD)
            if let number { node.set("reservationNumber", [.text(number)]) }
            // The app's item reference is the part's own id beside the booking number (MARKUP.md, "Identity"): the
            // same rule as a `reservationId` beside a `reservationNumber` in markup, so mail and app meet on one key.
            if let item, item != number { node.set("reservationId", [.text(item)]) }
            if let status = value["reservationStatus"]?.string, let iri = statusIRI(status) {
                node.set("reservationStatus", [.text(iri)])
            }
            if let name = value["reservationHolderName"]?.string {
                node.set(
                    "underName",
                    [.node(SchemaNode(types: ["Person"], properties: [text("name", name)], syntax: .jsonLD))])
            }
            for field in ["url", "modifiedTime", "bookingTime"] {
                if let text = value[field]?.string { node.set(field, [.text(text)]) }
            }
            var bookingTime: Date? = nil
            if let text = value["bookingTime"]?.string {
                bookingTime = ReservationAction.instant(text)
                if bookingTime == nil {
                    problem("donation.invalid-date", path + ".bookingTime", "give an ISO 8601 date-time with an offset")
                }
            }
            donation.bookingTimes.append(bookingTime)
            if let seat = value["reservedSeat"], case .object = seat {
                node.set(
                    "reservedTicket",
                    [
                        .node(
                            SchemaNode(
                                types: ["Ticket"],
                                properties: [
                                    SchemaProperty(
                                        name: "ticketedSeat",
                                        values: [
                                            .node(
                                                SchemaNode(
                                                    types: ["Seat"],
                                                    properties: properties(
                                                        of: seat,
                                                        [
                                                            ("seatNumber", "seatNumber"), ("seatRow", "seatRow"),
                                                            ("seatSection", "seatSection"),
                                                            ("seatingType", "seatingType"),
                                                        ]), syntax: .jsonLD))
                                        ])
                                ], syntax: .jsonLD))
                    ])
            }
            fill(&node, kind: kind, from: value)
            var resolved =
                resolver.resolveDocument(MarkupGraph(nodes: [node])).resolutions.first
                ?? Resolution(reservation: nil, diagnostics: [], normalized: .null, syntax: .jsonLD)
            // The aliases are this reader's own spelling (reservationNumber, an airline code beside the number), not
            // the app's: nothing for the app to change.
            resolved.diagnostics.removeAll { $0.code == .alias }
            for diagnostic in resolved.diagnostics where diagnostic.severity == .error {
                let code =
                    diagnostic.code.rawValue.hasPrefix("markup.")
                    ? "donation." + diagnostic.code.rawValue.dropFirst("markup.".count) : diagnostic.code.rawValue
                problem(code, path + donationPath(diagnostic.path, kind: kind), diagnostic.message)
            }
            var actions: [ReservationAction] = []
            let donatedActions: [JSONValue] = value["actions"].map(Donation.items) ?? []
            for (actionIndex, action) in donatedActions.enumerated() {
                let actionPath = "\(path).actions[\(actionIndex)]"
                guard let read = readAction(action, path: actionPath, problem: problem) else { continue }
                actions.append(read)
            }
            if var reservation = resolved.reservation {
                let all = ReservationAction.inferringWindows(actions, for: reservation)
                reservation.actions = all.isEmpty ? nil : all
                resolved.reservation = reservation
            }
            resolutions.append(resolved)
        }
        ReservationIdentity.assign(&resolutions)
        donation.resolutions = resolutions
        return donation
    }

    /// `INSpeakableString`: its `vocabularyIdentifier`, or a plain string.
    static func speakable(_ value: JSONValue) -> String? {
        let text = value.string ?? value["vocabularyIdentifier"]?.string ?? value["spokenPhrase"]?.string
        let trimmed = text?.trimmingCharacters(in: .whitespaces)
        return trimmed?.isEmpty == false ? trimmed : nil
    }

    static func items(_ value: JSONValue) -> [JSONValue] {
        if case .array(let elements) = value { return elements }
        return [value]
    }

    /// `INReservationStatus`: `confirmed`, `canceled` (or `cancelled`), `pending`, `hold`; `unknown` says nothing.
    static func statusIRI(_ status: String) -> String? {
        switch status.lowercased() {
        case "confirmed": Reservation.Status.confirmed.schemaIRI
        case "canceled", "cancelled": Reservation.Status.cancelled.schemaIRI
        case "pending": Reservation.Status.pending.schemaIRI
        case "hold": Reservation.Status.hold.schemaIRI
        default: nil
        }
    }

    /// `INReservationAction`: `type` (`checkIn`), `validDuration` (`startDate`, `endDate`) and `userActivity`
    /// (`activityType`, `title`, `webpageURL`).
    static func readAction(
        _ value: JSONValue, path: String, problem: (String, String, String) -> Void
    ) -> ReservationAction? {
        guard case .object = value else {
            problem("donation.invalid-action", path, "an action is an object with type, validDuration and userActivity")
            return nil
        }
        let type: ReservationAction.ActionType = value["type"]?.string?.lowercased() == "checkin" ? .checkIn : .other
        var dates: [String?] = []
        for field in ["startDate", "endDate"] {
            guard let text = value["validDuration"]?[field]?.string else {
                dates.append(nil)
                continue
            }
            guard let date = ReservationAction.instant(text) else {
                problem(
                    "donation.invalid-date", "\(path).validDuration.\(field)",
                    "give an ISO 8601 date-time with an offset")
                return nil
            }
            dates.append(ReservationAction.isoText(date))
        }
        if let start = dates[0].flatMap(ReservationAction.instant),
            let end = dates[1].flatMap(ReservationAction.instant), end < start
        {
            problem("donation.invalid-window", "\(path).validDuration", "endDate is before startDate")
            return nil
        }
        let activity = value["userActivity"].map { activity in
            ReservationAction.UserActivity(
                activityType: activity["activityType"]?.string, title: activity["title"]?.string,
                webpageURL: activity["webpageURL"]?.string)
        }
        return ReservationAction(
            type: type, origin: .donation, url: activity?.webpageURL, userActivity: activity, validFrom: dates[0],
            validUntil: dates[1])
    }
}

// MARK: The eight classes as schema.org

extension Donation {
    static func text(_ name: String, _ value: String) -> SchemaProperty {
        SchemaProperty(name: name, values: [.text(value)])
    }

    /// The properties `pairs` (donation field → schema.org property) that `value` gives as text.
    static func properties(of value: JSONValue?, _ pairs: [(String, String)]) -> [SchemaProperty] {
        pairs.compactMap { field, property in value?[field]?.string.map { text(property, $0) } }
    }

    /// A location (`CLPlacemark`: `name`, `address` with `street`, `city`, `state`, `postalCode`, `country`) as a
    /// schema.org place of `type`; nil when absent.
    static func place(_ value: JSONValue?, type: String) -> SchemaValue? {
        guard let value, case .object = value else { return nil }
        var node = SchemaNode(
            types: [type], properties: properties(of: value, [("name", "name"), ("iataCode", "iataCode")]),
            syntax: .jsonLD)
        if let address = value["address"] {
            if let line = address.string {
                node.set("address", [.text(line)])
            } else {
                node.set(
                    "address",
                    [
                        .node(
                            SchemaNode(
                                types: ["PostalAddress"],
                                properties: properties(
                                    of: address,
                                    [
                                        ("street", "streetAddress"), ("city", "addressLocality"),
                                        ("state", "addressRegion"),
                                        ("postalCode", "postalCode"), ("country", "addressCountry"),
                                    ]), syntax: .jsonLD))
                    ])
            }
        }
        return .node(node)
    }

    /// An organization named `name`, with an IATA code where given.
    static func organization(_ type: String, name: String?, code: String? = nil) -> SchemaValue? {
        guard name != nil || code != nil else { return nil }
        var properties: [SchemaProperty] = []
        if let name { properties.append(text("name", name)) }
        if let code { properties.append(text("iataCode", code)) }
        return .node(SchemaNode(types: [type], properties: properties, syntax: .jsonLD))
    }

    /// Writes the kind's own fields into `node` as the schema.org properties they mean.
    static func fill(_ node: inout SchemaNode, kind: Reservation.Kind, from value: JSONValue) {
        func set(_ name: String, _ value: SchemaValue?) { if let value { node.set(name, [value]) } }
        func time(_ range: JSONValue?, _ field: String) -> SchemaValue? { range?[field]?.string.map { .text($0) } }
        switch kind {
        case .flight:
            let flight = value["flight"]
            var trip = SchemaNode(
                types: ["Flight"], properties: properties(of: flight, [("flightNumber", "flightNumber")]),
                syntax: .jsonLD)
            let airline = flight?["airline"]
            if let provider = organization(
                "Airline", name: airline?["name"]?.string, code: airline?["iataCode"]?.string)
            {
                trip.set("provider", [provider])
            }
            if let airport = place(flight?["departureAirport"], type: "Airport") {
                trip.set("departureAirport", [airport])
            }
            if let airport = place(flight?["arrivalAirport"], type: "Airport") { trip.set("arrivalAirport", [airport]) }
            for (field, property) in [
                ("departureTerminal", "departureTerminal"), ("departureGate", "departureGate"),
                ("arrivalTerminal", "arrivalTerminal"), ("arrivalGate", "arrivalGate"),
                ("boardingTime", "boardingTime"),
            ] {
                if let text = flight?[field]?.string { trip.set(property, [.text(text)]) }
            }
            if let start = time(flight?["flightDuration"], "startDate") { trip.set("departureTime", [start]) }
            if let end = time(flight?["flightDuration"], "endDate") { trip.set("arrivalTime", [end]) }
            if flight != nil { node.set("reservationFor", [.node(trip)]) }
        case .lodging:
            if case .node(var hotel)? = place(value["lodgingBusinessLocation"], type: "LodgingBusiness") {
                hotel.types = ["LodgingBusiness"]
                node.set("reservationFor", [.node(hotel)])
            }
            set("checkinTime", time(value["reservationDuration"], "startDate"))
            set("checkoutTime", time(value["reservationDuration"], "endDate"))
            if let adults = value["numberOfAdults"]?.string { node.set("numAdults", [.text(adults)]) }
            if let children = value["numberOfChildren"]?.string { node.set("numChildren", [.text(children)]) }
        case .restaurant:
            set("reservationFor", place(value["restaurantLocation"], type: "FoodEstablishment"))
            set("startTime", time(value["reservationDuration"], "startDate"))
            set("endTime", time(value["reservationDuration"], "endDate"))
            if let size = value["partySize"]?.string { node.set("partySize", [.text(size)]) }
        case .rentalCar:
            let car = value["rentalCar"]
            set("provider", organization("Organization", name: car?["rentalCompanyName"]?.string))
            var vehicle = SchemaNode(
                types: ["Car"], properties: properties(of: car, [("make", "brand"), ("model", "model")]),
                syntax: .jsonLD)
            let name = [car?["make"]?.string, car?["model"]?.string].compactMap { $0 }.joined(separator: " ")
            if !name.isEmpty {
                vehicle.set("name", [.text(name)])
            } else if let description = car?["rentalCarDescription"]?.string {
                vehicle.set("name", [.text(description)])
            }
            if car != nil { node.set("reservationFor", [.node(vehicle)]) }
            set("pickupLocation", place(value["pickupLocation"], type: "Place"))
            set("dropoffLocation", place(value["dropOffLocation"], type: "Place"))
            set("pickupTime", time(value["rentalDuration"], "startDate"))
            set("dropoffTime", time(value["rentalDuration"], "endDate"))
        case .train, .bus, .boat:
            let names = tripNames(kind)
            let trip = value[names.trip]
            var node2 = SchemaNode(types: [names.schemaTrip], syntax: .jsonLD)
            for (field, property) in names.fields {
                if let text = trip?[field]?.string { node2.set(property, [.text(text)]) }
            }
            if let provider = organization("Organization", name: trip?["provider"]?.string) {
                node2.set("provider", [provider])
            }
            if let from = place(trip?[names.departure], type: names.placeType) {
                node2.set(names.schemaDeparture, [from])
            }
            if let to = place(trip?[names.arrival], type: names.placeType) { node2.set(names.schemaArrival, [to]) }
            if let start = time(trip?["tripDuration"], "startDate") { node2.set("departureTime", [start]) }
            if let end = time(trip?["tripDuration"], "endDate") { node2.set("arrivalTime", [end]) }
            if trip != nil { node.set("reservationFor", [.node(node2)]) }
        case .event:
            let event = value["event"]
            var happening = SchemaNode(
                types: ["Event"], properties: properties(of: event, [("name", "name")]), syntax: .jsonLD)
            if event?["category"]?.string?.lowercased() == "movie" { happening.types = ["ScreeningEvent"] }
            if let venue = place(event?["location"], type: "Place") { happening.set("location", [venue]) }
            if let start = time(event?["eventDuration"], "startDate") { happening.set("startDate", [start]) }
            if let end = time(event?["eventDuration"], "endDate") { happening.set("endDate", [end]) }
            if event != nil { node.set("reservationFor", [.node(happening)]) }
            if let attendees = value["numberOfAttendees"]?.string { node.set("numSeats", [.text(attendees)]) }
        }
    }

    /// The field names of a train, bus or boat trip (`INTrainTrip`, `INBusTrip`, `INBoatTrip`) and the schema.org
    /// names they mean.
    static func tripNames(_ kind: Reservation.Kind) -> (
        trip: String, schemaTrip: String, departure: String, arrival: String, schemaDeparture: String,
        schemaArrival: String, placeType: String, fields: [(String, String)]
    ) {
        switch kind {
        case .train:
            (
                "trainTrip", "TrainTrip", "departureStationLocation", "arrivalStationLocation", "departureStation",
                "arrivalStation", "TrainStation",
                [
                    ("trainNumber", "trainNumber"), ("trainName", "trainName"),
                    ("departurePlatform", "departurePlatform"), ("arrivalPlatform", "arrivalPlatform"),
                ]
            )
        case .bus:
            (
                "busTrip", "BusTrip", "departureBusStopLocation", "arrivalBusStopLocation", "departureBusStop",
                "arrivalBusStop", "BusStation", [("busNumber", "busNumber"), ("busName", "busName")]
            )
        default:
            (
                "boatTrip", "BoatTrip", "departureBoatTerminalLocation", "arrivalBoatTerminalLocation",
                "departureBoatTerminal", "arrivalBoatTerminal", "BoatTerminal",
                [("boatName", "name"), ("boatNumber", "tripNumber")]
            )
        }
    }

    /// The donation field path a schema.org property path of the resolved item stands for
    /// (`reservationFor.departureAirport.iataCode` → `.flight.departureAirport.iataCode`).
    static func donationPath(_ schemaPath: String, kind: Reservation.Kind) -> String {
        guard !schemaPath.isEmpty else { return "" }
        var prefixes: [(String, String)] = [
            ("reservationId", "itemReference"), ("reservationNumber", "reservationNumber"),
            ("reservationStatus", "reservationStatus"), ("underName.name", "reservationHolderName"),
            ("underName", "reservationHolderName"), ("url", "url"),
            ("modifiedTime", "modifiedTime"), ("bookingTime", "bookingTime"),
        ]
        switch kind {
        case .flight:
            prefixes += [
                ("reservationFor.provider", "flight.airline"),
                ("reservationFor.departureTime", "flight.flightDuration.startDate"),
                ("reservationFor.arrivalTime", "flight.flightDuration.endDate"), ("reservationFor", "flight"),
            ]
        case .lodging:
            prefixes += [
                ("reservationFor", "lodgingBusinessLocation"), ("checkinTime", "reservationDuration.startDate"),
                ("checkoutTime", "reservationDuration.endDate"),
            ]
        case .restaurant:
            prefixes += [
                ("reservationFor", "restaurantLocation"), ("startTime", "reservationDuration.startDate"),
                ("endTime", "reservationDuration.endDate"),
            ]
        case .rentalCar:
            prefixes += [
                ("provider.name", "rentalCar.rentalCompanyName"), ("provider", "rentalCar.rentalCompanyName"),
                ("reservationFor.rentalCompany", "rentalCar.rentalCompanyName"), ("reservationFor", "rentalCar"),
                ("dropoffLocation", "dropOffLocation"), ("pickupTime", "rentalDuration.startDate"),
                ("dropoffTime", "rentalDuration.endDate"),
            ]
        case .train, .bus, .boat:
            let names = tripNames(kind)
            prefixes += [
                ("reservationFor.\(names.schemaDeparture)", "\(names.trip).\(names.departure)"),
                ("reservationFor.\(names.schemaArrival)", "\(names.trip).\(names.arrival)"),
                ("reservationFor.departureTime", "\(names.trip).tripDuration.startDate"),
                ("reservationFor.arrivalTime", "\(names.trip).tripDuration.endDate"),
            ]
            prefixes += names.fields.map { ("reservationFor.\($0.1)", "\(names.trip).\($0.0)") }
            prefixes.append(("reservationFor", names.trip))
        case .event:
            prefixes += [
                ("reservationFor.startDate", "event.eventDuration.startDate"),
                ("reservationFor.endDate", "event.eventDuration.endDate"), ("reservationFor", "event"),
            ]
        }
        var path = schemaPath
        for (schema, donation) in prefixes.sorted(by: { $0.0.count > $1.0.count })
        where path == schema || path.hasPrefix(schema + ".") || path.hasPrefix(schema + "[") {
            path = donation + path.dropFirst(schema.count)
            break
        }
        let renamed = path.split(separator: ".", omittingEmptySubsequences: false).map { segment -> String in
            switch segment {
            case "streetAddress": "street"
            case "addressLocality": "city"
            case "addressRegion": "state"
            case "addressCountry": "country"
            default: String(segment)
            }
        }
        return "." + renamed.joined(separator: ".")
    }
}
