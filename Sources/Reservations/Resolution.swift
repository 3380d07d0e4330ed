package import Markup

/// What resolution made of one reservation item found in a document: the typed reservation,
/// whether it meets the acceptance bar, why not, and its normalized schema.org object.
///
/// `admissible` is true exactly when no diagnostic is an error. An item whose data contradicts
/// itself is still resolved and returned, with the problem as a diagnostic: an arrival up to a day
/// before its departure (as in some published samples, and overnight flights written with the
/// wrong offset) is a warning and the item stays admissible; an arrival more than a day before its
/// departure, a checkout before the check-in, are errors, and the item is not admissible.
package struct Resolution: Sendable, Hashable, Codable {
    /// The typed reservation; nil for a reservation type the gateway does not handle (`TaxiReservation`).
    package var reservation: Reservation?
    /// True when the item is a handled reservation and no diagnostic is an error.
    package var admissible: Bool
    /// Per-property diagnostics, in the order found.
    package var diagnostics: [Diagnostic]
    /// The normalized schema.org JSON-LD object: canonical names and types, `reservationStatus` as
    /// `https://schema.org/Reservation…`, datetimes as given or resolved.
    package var normalized: JSONValue
    /// The syntax the item was written in (the first, when the same item came in both).
    package var syntax: SchemaNode.Syntax
    /// What the item says about the message it came in: whether it is about one step of the booking.
    package var scope: Scope { Scope(kind: reservation?.kind, normalized: normalized) }

    package init(
        reservation: Reservation?, diagnostics: [Diagnostic], normalized: JSONValue, syntax: SchemaNode.Syntax
    ) {
        self.reservation = reservation
        self.diagnostics = diagnostics
        self.normalized = normalized
        self.syntax = syntax
        admissible = reservation != nil && !diagnostics.contains { $0.severity == .error }
    }

    /// Signs that a reservation item belongs to a message about one step of a booking rather than the
    /// booking as a whole (`BookingListing`).
    package struct Scope: Sendable, Hashable, Codable {
        /// A boarding pass: a flight reservation with `boardingGroup`, `passengerSequenceNumber`,
        /// `securityScreening`, `passengerPriorityStatus` or a `ticketToken` (the boarding pass's barcode).
        package var isBoardingPass = false
        /// A check-in prompt: `checkinUrl`, or a `CheckInAction` among the item's `potentialAction`s.
        package var promptsCheckIn = false

        package init(isBoardingPass: Bool = false, promptsCheckIn: Bool = false) {
            self.isBoardingPass = isBoardingPass
            self.promptsCheckIn = promptsCheckIn
        }

        static let boardingPassProperties = [
            "boardingGroup", "passengerSequenceNumber", "securityScreening", "passengerPriorityStatus", "ticketToken",
        ]

        /// Reads the signs from an item's normalized object.
        init(kind: Reservation.Kind?, normalized: JSONValue) {
            func items(_ value: JSONValue?) -> [JSONValue] {
                switch value {
                case .array(let elements)?: elements
                case let value?: [value]
                case nil: []
                }
            }
            if kind == .flight {
                isBoardingPass = Self.boardingPassProperties.contains { normalized[$0] != nil }
                    || items(normalized["reservedTicket"]).contains { $0["ticketToken"] != nil }
            }
            promptsCheckIn = [normalized, normalized["reservationFor"] ?? .null].contains { node in
                node["checkinUrl"] != nil
                    || items(node["potentialAction"]).contains { $0["@type"] == .string("CheckInAction") }
            }
        }
    }

    /// Recomputes `admissible` after diagnostics were added.
    mutating func updateAdmissibility() {
        admissible = reservation != nil && !diagnostics.contains { $0.severity == .error }
    }

    /// The object `gateway extract --json` prints for this item: the normalized schema.org object
    /// plus `kind`, `containerReference`, `itemReference`, `admissible` and `diagnostics`
    /// (each `{"severity", "code", "path", "message"}`). Encode with `jsonData()` for sorted keys.
    package var jsonObject: JSONValue {
        var members: [String: JSONValue] = [:]
        if case .object(let normalizedMembers) = normalized { members = normalizedMembers }
        members["kind"] = reservation.map { .string($0.kind.rawValue) } ?? .null
        members["containerReference"] = reservation?.containerReference.map { .string($0) } ?? .null
        members["itemReference"] = reservation?.itemReference.map { .string($0) } ?? .null
        members["admissible"] = .bool(admissible)
        members["diagnostics"] = .array(
            diagnostics.map { diagnostic in
                .object([
                    "severity": .string(diagnostic.severity.rawValue),
                    "code": .string(diagnostic.code.rawValue),
                    "path": .string(diagnostic.path),
                    "message": .string(diagnostic.message),
                ])
            })
        return .object(members)
    }
}
