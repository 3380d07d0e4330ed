package import Foundation

/// Something the owner can do about a reservation, and when: checking in, or opening the booking in the sender's app
/// or page. Read from markup (`checkinUrl`, a `CheckInAction` in `potentialAction` with its `target`, `startTime` and
/// `endTime`) and from app donations (`INReservationAction`: its type, `validDuration` and user activity).
///
/// Kept in the stored payload with the reservation, so the calendar feed, suggestions and "show reservation" read it
/// without going back to the document.
package struct ReservationAction: Codable, Sendable, Hashable {
    /// What the action does (`INReservationActionType`; schema.org `CheckInAction`).
    package enum ActionType: String, Codable, Sendable, Hashable, CaseIterable {
        case checkIn
        /// Any other action an app donates (SiriKit's `unknown`).
        case other
    }

    /// Where the action came from.
    package enum Origin: String, Codable, Sendable, Hashable {
        case markup
        case donation
    }

    /// The user activity an app donates with an action (`NSUserActivity`): what the system hands back to open it.
    package struct UserActivity: Codable, Sendable, Hashable {
        package var activityType: String?
        package var title: String?
        package var webpageURL: String?

        package init(activityType: String? = nil, title: String? = nil, webpageURL: String? = nil) {
            self.activityType = activityType
            self.title = title
            self.webpageURL = webpageURL
        }
    }

    package var type: ActionType
    package var origin: Origin
    /// Where to do it: the markup's target or `checkinUrl`, the user activity's web page URL.
    package var url: String?
    package var userActivity: UserActivity?
    /// When it becomes valid (ISO 8601 with offset, as given or computed); nil: no start known.
    package var validFrom: String?
    /// When it stops being valid; nil: no end known.
    package var validUntil: String?
    /// True when the window is the airline convention (24 hours before departure until departure), not given.
    package var windowInferred: Bool

    package init(
        type: ActionType, origin: Origin, url: String? = nil, userActivity: UserActivity? = nil,
        validFrom: String? = nil,
        validUntil: String? = nil, windowInferred: Bool = false
    ) {
        self.type = type
        self.origin = origin
        self.url = url
        self.userActivity = userActivity
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.windowInferred = windowInferred
    }

    /// The instant the window opens, when known.
    package var validFromDate: Date? { validFrom.flatMap(Self.instant) }
    /// The instant the window closes, when known.
    package var validUntilDate: Date? { validUntil.flatMap(Self.instant) }

    /// True when the action may be taken at `instant`: inside its window (an open end counts as open).
    package func isValid(at instant: Date) -> Bool {
        if let start = validFromDate, instant < start { return false }
        if let end = validUntilDate, instant >= end { return false }
        return validFromDate != nil || validUntilDate != nil
    }

    /// How long before departure an airline opens check-in when it does not say: 24 hours.
    package static let inferredCheckInWindow: TimeInterval = 24 * 3600

    /// A check-in action of a flight without a window of its own gets the airline convention: from 24 hours before
    /// departure until departure, marked ``windowInferred``. Other actions and kinds are left as they are.
    package static func inferringWindows(_ actions: [ReservationAction], for reservation: Reservation)
        -> [ReservationAction]
    {
        actions.map { action in
            guard action.type == .checkIn, reservation.kind == .flight, action.validFrom == nil,
                action.validUntil == nil,
                let departure = reservation.startTime?.instant
            else { return action }
            var inferred = action
            inferred.validFrom = isoText(departure.addingTimeInterval(-inferredCheckInWindow))
            inferred.validUntil = isoText(departure)
            inferred.windowInferred = true
            return inferred
        }
    }

    /// The actions a reservation's normalized schema.org object carries: `checkinUrl` (on the reservation or, Gmail's
    /// way, on the flight), and each `CheckInAction` in `potentialAction` with its `target` (a URL or an `EntryPoint`'s
    /// `urlTemplate`) and `startTime`/`endTime`.
    package static func fromMarkup(_ normalized: JSONValue) -> [ReservationAction] {
        var actions: [ReservationAction] = []
        func items(_ value: JSONValue?) -> [JSONValue] {
            switch value {
            case .array(let elements)?: elements
            case let value?: [value]
            case nil: []
            }
        }
        for node in [normalized, normalized["reservationFor"] ?? .null] {
            for action in items(node["potentialAction"]) where action["@type"] == .string("CheckInAction") {
                let target = items(action["target"]).first
                let url = target?.string ?? target?["urlTemplate"]?.string ?? target?["url"]?.string
                let start = action["startTime"]?.string.flatMap(instant).map(isoText)
                let end = action["endTime"]?.string.flatMap(instant).map(isoText)
                actions.append(
                    ReservationAction(type: .checkIn, origin: .markup, url: url, validFrom: start, validUntil: end))
            }
            if let url = node["checkinUrl"]?.string, !actions.contains(where: { $0.url == url }) {
                actions.append(ReservationAction(type: .checkIn, origin: .markup, url: url))
            }
        }
        return actions
    }

    /// ISO 8601 in UTC, to the second (`2027-03-04T04:15:00Z`).
    package static func isoText(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// Reads an ISO 8601 date-time with an offset (or `Z`); nil otherwise.
    package static func instant(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = try? Date(trimmed, strategy: .iso8601) { return date }
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return try? fractional.parse(trimmed)
    }
}
