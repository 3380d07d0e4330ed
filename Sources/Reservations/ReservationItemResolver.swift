import Markup

/// Resolves one reservation item: folds aliases into the normal form, reads the typed model,
/// checks the required properties and times, and collects per-property diagnostics
/// (MARKUP.md, "Normal form", "Required properties", "Times").
///
/// Works on a canonicalized copy of the item (schema.org IRIs stripped, `@id` references
/// replaced, depth already bounded by `ReservationResolver`), so nothing here recurses on input.
struct ReservationItemResolver {
    let kind: Reservation.Kind
    let directory: TimeZoneDirectory
    /// The item being normalized; becomes the normalized JSON-LD object.
    var root: SchemaNode
    var diagnostics: [Diagnostic] = []
    var reservation: Reservation
    /// Whether missing required properties are errors (false for a cancellation, which needs only
    /// its reservation id to act on).
    var missingIsError = true
    /// `reservationNumber` when the item also gives a different `reservationId`: the booking's number
    /// (the container reference), the `reservationId` then being this part's own (the item reference).
    var bookingNumber: String?

    init(kind: Reservation.Kind, root: SchemaNode, directory: TimeZoneDirectory) {
        self.kind = kind
        self.root = root
        self.directory = directory
        reservation = Reservation(kind: kind)
    }

    // MARK: Diagnostics

    mutating func warn(_ code: Diagnostic.Code, _ path: String, _ message: String) {
        diagnostics.append(Diagnostic(.warning, code, path: path, message))
    }

    mutating func error(_ code: Diagnostic.Code, _ path: String, _ message: String) {
        diagnostics.append(Diagnostic(.error, code, path: path, message))
    }

    /// Reports a missing required property: an error, or a warning on a cancellation.
    mutating func missing(_ path: String, _ hint: String) {
        let message = "\(path) is required for a \(kind.schemaType)" + (hint.isEmpty ? "" : ": \(hint)")
        diagnostics.append(Diagnostic(missingIsError ? .error : .warning, .missingProperty, path: path, message))
    }

    static func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : path + "." + name }

    // MARK: Resolution

    /// Runs every step; the result's `reservation` is always set (possibly incomplete).
    mutating func resolve() -> Reservation {
        foldCommonAliases()
        foldKindAliases()
        readCommon()
        if reservation.isMinimalCancellation { return reservation }
        switch kind {
        case .flight: readFlight()
        case .train, .bus, .boat: readTrip()
        case .rentalCar: readRentalCar()
        case .lodging: readLodging()
        case .restaurant: readRestaurant()
        case .event: readEvent()
        }
        readTickets()
        return reservation
    }

    // MARK: Aliases (MARKUP.md, "Normal form")

    /// Renames `from` to `to` on `node` when `to` is absent, reporting the alias at `path`.
    mutating func rename(_ from: String, to: String, in node: inout SchemaNode, path: String, note: String = "") {
        guard node.has(from) else { return }
        let values = node.remove(from)
        let fromPath = Self.join(path, from)
        let toPath = Self.join(path, to)
        if node.has(to) {
            if Set(values) != Set(node.values(to)) {
                warn(.conflictingValues, fromPath, "\(fromPath) and \(toPath) differ; \(toPath) was used. Give only \(to)")
            }
            return
        }
        node.set(to, values)
        warn(.alias, fromPath, "\(fromPath) was read as \(toPath)\(note); write \(to)")
    }

    /// Turns text given for an item into an item of `type` named by the text.
    mutating func coerceToItem(_ name: String, type: String, in node: inout SchemaNode, path: String) {
        let values = node.values(name)
        guard values.contains(where: { $0.text != nil }) else { return }
        let itemPath = Self.join(path, name)
        node.set(
            name,
            values.map { value in
                guard let text = value.text else { return value }
                return .node(
                    SchemaNode(
                        types: [type], properties: [SchemaProperty(name: "name", values: [.text(text)])],
                        syntax: node.syntax))
            })
        warn(.textForItem, itemPath, "\(itemPath) is text; it was read as a \(type) with that name. Give a \(type) item")
    }

    /// Turns text that is a code (`"SFO"` for an airport, `"UA"` for an airline) into an item of
    /// `type` with that `iataCode`, on `reservationFor`.
    mutating func coerceCodeToItem(
        _ name: String, type: String, in node: inout SchemaNode, isCode: (String) -> Bool
    ) {
        let values = node.values(name)
        guard let text = values.first?.text, isCode(text.uppercased()) else { return }
        let code = text.uppercased()
        let item = SchemaNode(
            types: [type], properties: [SchemaProperty(name: "iataCode", values: [.text(code)])], syntax: node.syntax)
        node.set(name, [.node(item)] + values.dropFirst())
        let path = "reservationFor." + name
        warn(.textForItem, path, "\(path) is text; it was read as a \(type) with iataCode \(code). Give a \(type) item")
    }

    /// `rename` on the item itself (through a copy: `root` cannot be passed inout to a mutating method).
    mutating func renameInRoot(_ from: String, to: String) {
        var node = root
        rename(from, to: to, in: &node, path: "")
        root = node
    }

    /// `coerceToItem` on the item itself.
    mutating func coerceInRoot(_ name: String, type: String) {
        var node = root
        coerceToItem(name, type: type, in: &node, path: "")
        root = node
    }

    mutating func foldCommonAliases() {
        // Both given and different: the booking's number and this part's own id (MARKUP.md, "Identity").
        if root.has("reservationNumber"), root.has("reservationId"),
            let number = text(root, "reservationNumber", path: ""), let id = text(root, "reservationId", path: ""),
            number != id
        {
            bookingNumber = number
        } else {
            renameInRoot("reservationNumber", to: "reservationId")
        }
        // `ReservationResolver` makes one item per reserved thing: `reservationFor` holds one here.
        coerceInRoot("reservationFor", type: "Thing")
        coerceInRoot("underName", type: "Person")
        var composedName = false
        root.updateChild("underName") { person in
            if !person.has("name"), let given = person.looseText("givenName") {
                let full = [given, person.looseText("familyName")].compactMap { $0 }.joined(separator: " ")
                person.set("name", [.text(full)])
                composedName = true
            }
        }
        if composedName {
            warn(.alias, "underName.givenName", "underName.givenName and familyName were read as underName.name; write name")
        }
        // Gmail puts each passenger's name on the ticket only (multi-passenger train bookings).
        if !root.has("underName") {
            let names = root.children("reservedTicket").compactMap { $0.looseText("underName") }
            if let first = names.first, names.allSatisfy({ $0 == first }) {
                root.set(
                    "underName",
                    [
                        .node(
                            SchemaNode(
                                types: ["Person"], properties: [SchemaProperty(name: "name", values: [.text(first)])],
                                syntax: root.syntax))
                    ])
                warn(.alias, "reservedTicket.underName", "reservedTicket.underName was read as underName.name; write underName")
            }
        }
    }

    mutating func foldKindAliases() {
        var forNode = root.child("reservationFor")
        let hasFor = forNode != nil
        if var item = forNode {
            if let type = item.types.first, let folded = SchemaVocabulary.foldedReservedItemType(type, kind: kind) {
                item.types[0] = folded
                warn(.alias, "reservationFor", "reservationFor @type \(type) was read as \(folded)")
            }
            if let type = item.types.first, type != "Thing",
                !SchemaVocabulary.expectedReservedItemTypes(kind).contains(type)
            {
                let expected = SchemaVocabulary.expectedReservedItemTypes(kind).sorted().joined(separator: " or ")
                warn(.unexpectedType, "reservationFor", "reservationFor is a \(type); a \(kind.schemaType) reserves a \(expected)")
            }
            switch kind {
            case .flight:
                rename("airline", to: "provider", in: &item, path: "reservationFor")
                coerceCodeToItem("provider", type: "Airline", in: &item, isCode: Self.isAirlineCode)
                coerceToItem("provider", type: "Airline", in: &item, path: "reservationFor")
                coerceCodeToItem("departureAirport", type: "Airport", in: &item, isCode: Self.isAirportCode)
                coerceCodeToItem("arrivalAirport", type: "Airport", in: &item, isCode: Self.isAirportCode)
                if !item.has("provider"), let airline = root.child("provider"), airline.has("iataCode") {
                    item.set("provider", [.node(airline)])
                    warn(.alias, "provider", "provider was read as reservationFor.provider; put the airline there")
                }
                coerceToItem("departureAirport", type: "Airport", in: &item, path: "reservationFor")
                coerceToItem("arrivalAirport", type: "Airport", in: &item, path: "reservationFor")
            case .train:
                rename("trainCompany", to: "provider", in: &item, path: "reservationFor")
                coerceToItem("provider", type: "Organization", in: &item, path: "reservationFor")
                coerceToItem("departureStation", type: "TrainStation", in: &item, path: "reservationFor")
                coerceToItem("arrivalStation", type: "TrainStation", in: &item, path: "reservationFor")
            case .bus:
                rename("busCompany", to: "provider", in: &item, path: "reservationFor")
                coerceToItem("provider", type: "Organization", in: &item, path: "reservationFor")
                coerceToItem("departureBusStop", type: "BusStation", in: &item, path: "reservationFor")
                coerceToItem("arrivalBusStop", type: "BusStation", in: &item, path: "reservationFor")
                for stop in ["departureBusStop", "arrivalBusStop"] {
                    var folded = false
                    item.updateChild(stop) { station in
                        if let index = station.types.firstIndex(of: "BusStop") {
                            station.types[index] = "BusStation"
                            folded = true
                        }
                    }
                    if folded {
                        warn(.alias, "reservationFor.\(stop)", "reservationFor.\(stop) @type BusStop was read as BusStation")
                    }
                }
            case .boat:
                coerceToItem("provider", type: "Organization", in: &item, path: "reservationFor")
                coerceToItem("departureBoatTerminal", type: "BoatTerminal", in: &item, path: "reservationFor")
                coerceToItem("arrivalBoatTerminal", type: "BoatTerminal", in: &item, path: "reservationFor")
            case .rentalCar:
                if item.has("rentalCompany") {
                    if root.has("provider") {
                        item.remove("rentalCompany")
                    } else {
                        root.set("provider", item.remove("rentalCompany"))
                        warn(.alias, "reservationFor.rentalCompany", "reservationFor.rentalCompany was read as provider; write provider")
                    }
                }
            case .restaurant:
                for (from, to) in [("startDate", "startTime"), ("endDate", "endTime")] where item.has(from) {
                    let values = item.remove(from)
                    if root.has(to) { continue }
                    root.set(to, values)
                    warn(.alias, "reservationFor.\(from)", "reservationFor.\(from) was read as \(to); write \(to) on the reservation")
                }
            case .event:
                coerceToItem("location", type: "Place", in: &item, path: "reservationFor")
            case .lodging:
                break
            }
            forNode = item
        }
        if hasFor, let forNode { root.set("reservationFor", [.node(forNode)]) }

        switch kind {
        case .lodging:
            renameInRoot("checkinDate", to: "checkinTime")
            renameInRoot("checkoutDate", to: "checkoutTime")
        case .rentalCar:
            coerceInRoot("provider", type: "Organization")
            coerceInRoot("pickupLocation", type: "Place")
            coerceInRoot("dropoffLocation", type: "Place")
        default:
            break
        }
    }

    // MARK: Reading values

    /// The single text value of `name` on `node`: warns when several different values are given,
    /// and reads an item's `name` when an item is given for text.
    mutating func text(_ node: SchemaNode?, _ name: String, path: String) -> String? {
        guard let node else { return nil }
        let values = node.values(name)
        // The path and the set of values only when they can be needed: this runs for every text a reservation
        // reads, and most have one value and no warning.
        var found: String?
        for value in values {
            switch value {
            case .text(let text):
                if !text.isEmpty, found == nil { found = text }
            case .node(let item):
                if found == nil, let text = item.looseText("name") ?? item.id {
                    found = text
                    if name != "addressCountry" {
                        let fullPath = Self.join(path, name)
                        warn(.itemForText, fullPath, "\(fullPath) is an item; its name was used. Give text")
                    }
                }
            }
        }
        if values.count > 1 {
            let distinct = Set(values.compactMap { $0.text ?? $0.node?.looseText("name") })
            if distinct.count > 1 {
                let fullPath = Self.join(path, name)
                warn(
                    .multipleValues, fullPath, "\(fullPath) has \(distinct.count) different values; the first was used")
            }
        }
        return found
    }

    mutating func readCommon() {
        let id = text(root, "reservationId", path: "")
        if let bookingNumber {
            reservation.reservationId = bookingNumber
            reservation.containerReference = bookingNumber
            reservation.itemReference = id
        } else {
            reservation.reservationId = id
        }

        let statusValues = root.values("reservationStatus")
        if let value = statusValues.first {
            let written = value.text ?? value.node?.id ?? value.node?.looseText("name") ?? ""
            if let (status, isShort) = SchemaVocabulary.status(written) {
                reservation.status = status
                root.set("reservationStatus", [.text(status.schemaIRI)])
                if isShort {
                    warn(.alias, "reservationStatus", "reservationStatus \(SchemaVocabulary.localName(written)) was read as \(status.schemaIRI); write that")
                }
            } else {
                error(
                    .unknownStatus, "reservationStatus",
                    "reservationStatus is not one of ReservationConfirmed, ReservationCancelled, ReservationPending, ReservationHold")
            }
        }

        let isCancellation = reservation.status == .cancelled && reservation.reservationId != nil
        missingIsError = !isCancellation
        // A cancellation that names its part (a reservationId besides the booking's number) cancels that
        // part only, not the whole booking.
        reservation.isMinimalCancellation = isCancellation && !root.has("reservationFor") && bookingNumber == nil

        if reservation.reservationId == nil {
            missingIsError = true
            missing("reservationId", "give the booking number (reservationId)")
        }
        if statusValues.isEmpty {
            missing("reservationStatus", "give https://schema.org/ReservationConfirmed (or Cancelled, Pending, Hold)")
        }
        reservation.modifiedTime = readTime(root, "modifiedTime", path: "", required: false, zoneFrom: nil, dateOnly: .accept)
        reservation.url = text(root, "url", path: "")
        if reservation.isMinimalCancellation { return }

        let person = root.child("underName")
        reservation.underName = text(person, "name", path: "underName")
        if reservation.underName == nil { missing("underName.name", "give the name of the person the reservation is for") }
        if !root.has("reservationFor") { missing("reservationFor", "give the reserved item") }
        reservation.name = text(root.child("reservationFor"), "name", path: "reservationFor")
    }
}
