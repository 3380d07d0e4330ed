package import Reservations

/// What the store keeps of an admitted reservation, as the payload's canonical JSON: the typed
/// model (for calendars), the normalized schema.org object (for `reservations show`), and what admission dropped from
/// it and why (a link it does not keep).
package struct StoredPayload: Codable, Sendable, Hashable {
    /// One warning kept with the reservation: a stable code at a property path (`markup.url-not-https` at
    /// `reservationFor.url`).
    package struct Warning: Codable, Sendable, Hashable {
        package var code: String
        package var path: String

        package init(code: String, path: String) {
            self.code = code
            self.path = path
        }
    }

    package var reservation: Reservation
    package var markup: JSONValue
    /// Absent when there is none, so a payload without warnings is the same bytes as before they existed.
    package var warnings: [Warning]?

    package init(reservation: Reservation, markup: JSONValue, warnings: [Warning] = []) {
        self.reservation = reservation
        self.markup = markup
        self.warnings = warnings.isEmpty ? nil : warnings
    }
}
