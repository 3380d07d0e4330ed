package import Reservations

/// What the store keeps of an admitted reservation, as the payload's canonical JSON: the typed
/// model (for calendars) and the normalized schema.org object (for `reservations show`).
package struct StoredPayload: Codable, Sendable, Hashable {
    package var reservation: Reservation
    package var markup: JSONValue

    package init(reservation: Reservation, markup: JSONValue) {
        self.reservation = reservation
        self.markup = markup
    }
}
