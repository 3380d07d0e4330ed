/// The schema.org names resolution needs: IRI prefixes, reservation types and the subtype
/// families folded into one normal form (MARKUP.md, "Normal form").
enum SchemaVocabulary {
    /// Prefixes that name the schema.org vocabulary (compared case-insensitively).
    private static let prefixes = [
        "https://schema.org/", "http://schema.org/", "https://www.schema.org/", "http://www.schema.org/", "schema:",
    ]

    /// `FlightReservation` for `http://schema.org/FlightReservation`, `https://schema.org/…`,
    /// `schema:…` or the bare name; the text unchanged (trimmed) for other vocabularies.
    static func localName(_ name: String) -> String {
        // Fast path: a bare name (no `:` of an IRI or prefix, nothing to trim).
        if !name.utf8.contains(0x3A), !name.needsWhitespaceFolding { return name }
        let trimmed = name.trimmingWhitespace()
        // By UTF-8 bytes: the prefixes are ASCII, and counting or dropping `Character`s walked the whole name's
        // grapheme breaks for every prefix tried (a tenth of resolution's time in perf, Microdata's `itemtype`s
        // being full IRIs).
        let bytes = trimmed.utf8
        for prefix in prefixes where bytes.count > prefix.utf8.count {
            guard bytes.prefix(prefix.utf8.count).elementsEqual(prefix.utf8, by: { asciiLower($0) == $1 }) else {
                continue
            }
            let start = bytes.index(bytes.startIndex, offsetBy: prefix.utf8.count)
            var end = bytes.endIndex
            while end > start, bytes[bytes.index(before: end)] == UInt8(ascii: "/") { end = bytes.index(before: end) }
            return String(Substring(bytes[start..<end]))
        }
        return trimmed
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    /// The kind of a reservation type.
    static let kindsByType: [String: Reservation.Kind] = Dictionary(
        uniqueKeysWithValues: Reservation.Kind.allCases.map { ($0.schemaType, $0) })

    /// The kind a generic `Reservation` has, from the type of its `reservationFor`.
    static func kind(ofReservedItemType type: String) -> Reservation.Kind? {
        switch type {
        case "Flight": return .flight
        case "TrainTrip": return .train
        case "BusTrip": return .bus
        case "BoatTrip": return .boat
        case "RentalCar", "Car", "Vehicle": return .rentalCar
        default:
            if lodgingTypes.contains(type) { return .lodging }
            if foodTypes.contains(type) { return .restaurant }
            if eventTypes.contains(type) { return .event }
            return nil
        }
    }

    /// Offers (schema.org `Offer` and its subtypes, and `Demand`): what they hold is offered, not held.
    static let offerTypes: Set<String> = ["Offer", "AggregateOffer", "OfferForLease", "OfferForPurchase", "Demand"]

    /// Properties whose values are offers whatever their type is written as.
    static let offerProperties: Set<String> = ["offers", "makesOffer", "seeks"]

    /// `LodgingBusiness` and the types folded into it.
    static let lodgingTypes: Set<String> = [
        "LodgingBusiness", "Hotel", "Hostel", "Motel", "Resort", "SkiResort", "BedAndBreakfast", "Campground",
        "VacationRental", "Accommodation", "Apartment", "House", "Room", "HotelRoom", "Suite",
    ]

    /// `FoodEstablishment` and the types folded into it.
    static let foodTypes: Set<String> = [
        "FoodEstablishment", "Restaurant", "CafeOrCoffeeShop", "Bakery", "BarOrPub", "Brewery", "Distillery",
        "FastFoodRestaurant", "IceCreamShop", "Winery",
    ]

    /// `Event` and the types folded into it (`ScreeningEvent` is kept: a movie).
    static let eventTypes: Set<String> = [
        "Event", "BusinessEvent", "ChildrensEvent", "ComedyEvent", "CourseInstance", "DanceEvent", "DeliveryEvent",
        "EducationEvent", "EventSeries", "ExhibitionEvent", "Festival", "FoodEvent", "Hackathon", "LiteraryEvent",
        "MusicEvent", "PublicationEvent", "BroadcastEvent", "OnDemandEvent", "SaleEvent", "ScreeningEvent",
        "SocialEvent", "SportsEvent", "TheaterEvent", "VisualArtsEvent",
    ]

    /// The normal form of a `reservationFor` type for a kind, or nil when it stays as written.
    static func foldedReservedItemType(_ type: String, kind: Reservation.Kind) -> String? {
        switch kind {
        case .lodging: return lodgingTypes.contains(type) && type != "LodgingBusiness" ? "LodgingBusiness" : nil
        case .restaurant: return foodTypes.contains(type) && type != "FoodEstablishment" ? "FoodEstablishment" : nil
        case .event:
            return eventTypes.contains(type) && type != "Event" && type != "ScreeningEvent" ? "Event" : nil
        default: return nil
        }
    }

    /// The `reservationFor` types a kind expects (after folding), for the unexpected-type warning.
    static func expectedReservedItemTypes(_ kind: Reservation.Kind) -> Set<String> {
        switch kind {
        case .flight: ["Flight"]
        case .train: ["TrainTrip", "Trip"]
        case .bus: ["BusTrip", "Trip"]
        case .boat: ["BoatTrip", "Trip"]
        case .rentalCar: ["RentalCar", "Car", "Vehicle", "Product"]
        case .lodging: ["LodgingBusiness"]
        case .restaurant: ["FoodEstablishment"]
        case .event: ["Event", "ScreeningEvent"]
        }
    }

    /// The status named by a `reservationStatus` value (IRI or bare, `Confirmed` or
    /// `ReservationConfirmed`), and whether it was written in a non-canonical short form.
    static func status(_ value: String) -> (status: Reservation.Status, isShortForm: Bool)? {
        switch localName(value).lowercased() {
        case "reservationconfirmed": (.confirmed, false)
        case "confirmed": (.confirmed, true)
        case "reservationcancelled": (.cancelled, false)
        case "cancelled", "canceled", "reservationcanceled": (.cancelled, true)
        case "reservationpending": (.pending, false)
        case "pending": (.pending, true)
        case "reservationhold": (.hold, false)
        case "hold": (.hold, true)
        default: nil
        }
    }
}

extension String {
    /// The string without leading and trailing ASCII whitespace, inner runs of whitespace folded
    /// to one space (Microdata text content is laid out by HTML, not meant verbatim).
    func trimmingWhitespace() -> String {
        guard needsWhitespaceFolding else { return self }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count)
        var pendingSpace = false
        for byte in utf8 {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(0x20) }
                pendingSpace = false
                result.append(byte)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Whether `trimmingWhitespace` would change the string: leading or trailing whitespace,
    /// whitespace other than a space, or two spaces in a row.
    var needsWhitespaceFolding: Bool {
        var previousWasSpace = true  // a leading space counts as a run
        for byte in utf8 {
            switch byte {
            case 0x20:
                if previousWasSpace { return true }
                previousWasSpace = true
            case 0x09, 0x0A, 0x0D, 0x0C:
                return true
            default:
                previousWasSpace = false
            }
        }
        return previousWasSpace && !isEmpty
    }
}
