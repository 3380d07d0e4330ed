package import Foundation

/// A date or datetime of a reservation, kept as the sender wrote it and as resolved
/// (MARKUP.md, "Times"): the offset as given, or the zone inferred from the place it belongs to.
package struct ReservationTime: Codable, Sendable, Hashable {
    /// Where the UTC offset came from.
    package enum Zone: String, Codable, Sendable, Hashable {
        /// The value carried its own offset (`-07:00`, `Z`).
        case given
        /// No offset was written; it was taken from the place's IANA zone (`timeZoneIdentifier`).
        case inferred
        /// A date alone (an all-day value), or a time whose zone could not be found.
        case floating
    }

    /// The value exactly as written (trimmed).
    package var original: String
    /// The value to publish: as given when it had an offset, with the inferred offset appended
    /// when one was inferred (`2027-03-04T20:15:00-08:00`), the date alone for an all-day value.
    package var resolved: String
    /// True for a date without a time of day.
    package var isDateOnly: Bool
    /// The wall-clock date, `2027-03-04`.
    package var localDate: String
    /// The wall-clock time, `20:15:00`; nil for a date alone.
    package var localTime: String?
    /// Whether the offset was given, inferred, or is unknown.
    package var zone: Zone
    /// The instant, when the offset is known (given or inferred).
    package var instant: Date?
    /// Seconds east of UTC at that instant, when known.
    package var utcOffsetSeconds: Int?
    /// The IANA zone used when the offset was inferred (`America/Los_Angeles`).
    package var timeZoneIdentifier: String?

    package init(
        original: String, resolved: String, isDateOnly: Bool, localDate: String, localTime: String?, zone: Zone,
        instant: Date?, utcOffsetSeconds: Int?, timeZoneIdentifier: String?
    ) {
        self.original = original
        self.resolved = resolved
        self.isDateOnly = isDateOnly
        self.localDate = localDate
        self.localTime = localTime
        self.zone = zone
        self.instant = instant
        self.utcOffsetSeconds = utcOffsetSeconds
        self.timeZoneIdentifier = timeZoneIdentifier
    }

    /// True when the offset was taken from the place rather than written by the sender.
    package var isZoneInferred: Bool { zone == .inferred }

    /// `2027-03-04 20:15-08:00` or `2027-03-04`: short, for one-line summaries.
    package var shortText: String {
        guard let localTime else { return localDate }
        let hourMinute = String(localTime.prefix(5))
        let offset = utcOffsetSeconds.map { LocalDateTime.offsetText($0) } ?? ""
        return localDate + " " + hourMinute + offset
    }

    /// The wall clock as one sortable string (`2027-03-04T20:15:00`, or the date alone).
    var wallClockKey: String { localTime.map { localDate + "T" + $0 } ?? localDate }
}
