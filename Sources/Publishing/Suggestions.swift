package import Foundation
package import Reservations
package import Store

/// What is relevant to an owner at one moment (issue 17): check-ins open now, check-ins opening and departures within
/// the next hours, reservations starting today; each with its action and the URL to open.
package struct Suggestion: Codable, Sendable, Hashable {
    package enum Reason: String, Codable, Sendable, Hashable, CaseIterable {
        /// A check-in action's window holds the moment.
        case checkInOpen = "check-in-open"
        /// A check-in window opens within the horizon.
        case checkInOpensSoon = "check-in-opens-soon"
        /// A flight, train, bus, boat or rental starts within the horizon.
        case departureSoon = "departure-soon"
        /// It starts today (in the zone of its start) and is not over, and none of the above says so already.
        case startsToday = "starts-today"
    }

    package var reason: Reason
    /// The instant the suggestion is about: the window's opening or end, the departure, the start.
    package var time: String
    package var action: ReservationAction?
    /// What to open: the action's link, else the reservation's page.
    package var url: String?
    package var reservation: ReservationView

    /// How far ahead check-ins and departures are suggested, unless asked otherwise: six hours.
    package static let defaultHorizon: TimeInterval = 6 * 3600

    /// The suggestions for `records` (one owner's) at `instant`, soonest first. Only confirmed items count.
    package static func suggestions(
        for records: [StoredReservation], at instant: Date, horizon: TimeInterval = defaultHorizon
    ) -> [Suggestion] {
        var found: [(Date, Suggestion)] = []
        for stored in records where stored.status == .confirmed {
            guard let reservation = StoredPayload.reservation(stored: stored.payload) else { continue }
            let view = ReservationView(stored)
            let page = reservation.url ?? view.open?.url
            func add(_ reason: Reason, _ time: Date, _ action: ReservationAction?) {
                found.append(
                    (
                        time,
                        Suggestion(
                            reason: reason, time: ReservationAction.isoText(time), action: action,
                            url: action?.url ?? page,
                            reservation: view)
                    ))
            }
            let checkIns = (reservation.actions ?? []).filter { $0.type == .checkIn }
            var said = false
            for action in checkIns {
                if action.isValid(at: instant) {
                    add(.checkInOpen, action.validUntilDate ?? action.validFromDate ?? instant, action)
                    said = true
                } else if let opens = action.validFromDate, opens > instant,
                    opens <= instant.addingTimeInterval(horizon)
                {
                    add(.checkInOpensSoon, opens, action)
                    said = true
                }
            }
            guard let start = reservation.startTime, let startInstant = start.instant ?? dayStart(start) else {
                continue
            }
            let travels: Set<Reservation.Kind> = [.flight, .train, .bus, .boat, .rentalCar]
            if travels.contains(reservation.kind), start.instant != nil, startInstant >= instant,
                startInstant <= instant.addingTimeInterval(horizon)
            {
                add(.departureSoon, startInstant, checkIns.first)
                said = true
            }
            // Starting today, and not over yet: a flight that landed is no longer worth a word, a hotel still is.
            let over = (reservation.endTime?.instant ?? start.instant).map { $0 <= instant } ?? false
            if !said, !over, start.localDate == localDate(of: instant, offset: start.utcOffsetSeconds ?? 0) {
                add(.startsToday, startInstant, reservation.actions?.first)
            }
        }
        return found.sorted { $0.0 == $1.0 ? $0.1.reservation.id < $1.1.reservation.id : $0.0 < $1.0 }.map(\.1)
    }

    /// `2027-03-04` for `instant` at `offset` seconds east of UTC.
    static func localDate(of instant: Date, offset: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offset) ?? TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(parts.year ?? 1970)-\(two(parts.month))-\(two(parts.day))"
    }

    /// Midnight UTC of a date-only start, to order it among the others.
    static func dayStart(_ time: ReservationTime) -> Date? {
        try? Date(time.localDate + "T00:00:00Z", strategy: .iso8601)
    }
}
