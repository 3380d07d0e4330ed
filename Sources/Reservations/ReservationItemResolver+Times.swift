internal import Foundation
import Markup

/// Times (MARKUP.md, "Times"): offsets kept as given; a missing offset resolved from the place the
/// time belongs to (an airport by IATA code, else a country with a single zone); sanity checks in UTC.
extension ReservationItemResolver {
    /// What a date without a time of day means for a property.
    enum DateOnlyPolicy {
        /// Meaningful as it is (a hotel stay, an all-day event).
        case accept
        /// Accepted as an all-day entry, with a warning (a trip whose sender gives only the day).
        case warn
        /// Not enough (a table booking needs its time).
        case refuse
    }

    /// Reads the datetime `name` of `node` (at `path`), resolving a missing offset from `place`.
    /// Writes the resolved value back into the normalized item when the zone was inferred.
    mutating func readTime(
        _ node: SchemaNode?, _ name: String, path: String, required: Bool,
        zoneFrom place: (node: SchemaNode?, path: String)?, dateOnly: DateOnlyPolicy
    ) -> ReservationTime? {
        let fullPath = Self.join(path, name)
        guard let written = text(node, name, path: path) else {
            if required { missing(fullPath, "give an ISO 8601 datetime with its UTC offset") }
            return nil
        }
        guard let value = LocalDateTime(parsing: written) else {
            error(
                .invalidDateTime, fullPath,
                "\(fullPath) is not an ISO 8601 date or datetime; write it like 2027-03-04T20:15:00-08:00")
            return nil
        }
        let original = written.trimmingWhitespace()
        var time = ReservationTime(
            original: original, resolved: original, isDateOnly: value.isDateOnly, localDate: value.dateText,
            localTime: value.timeText, zone: .floating, instant: nil, utcOffsetSeconds: nil, timeZoneIdentifier: nil)

        if value.isDateOnly {
            time.resolved = value.dateText
            switch dateOnly {
            case .accept: break
            case .warn:
                warn(.dateOnly, fullPath, "\(fullPath) gives a date without a time; it is kept as an all-day entry. Give the time and offset")
            case .refuse:
                error(.dateOnly, fullPath, "\(fullPath) gives a date without a time; give the time and UTC offset")
            }
            return time
        }

        if let offset = value.offsetSeconds {
            time.zone = .given
            time.utcOffsetSeconds = offset
            let instant = Date(timeIntervalSince1970: Double(value.wallClockSeconds - offset) + value.fractionalSeconds)
            time.instant = instant
            if let place { checkOffset(offset, at: instant, of: place, path: fullPath, written: original) }
            return time
        }

        // No offset: find the zone of the place.
        let severity: Diagnostic.Severity = required && missingIsError ? .error : .warning
        guard let place else {
            diagnostics.append(
                Diagnostic(
                    severity, .missingTimeZone, path: fullPath,
                    "\(fullPath) has no UTC offset and no place to infer a zone from; write the offset (2027-03-04T20:15:00-08:00)"
                ))
            return time
        }
        switch zone(of: place.node, path: place.path) {
        case .failure(let reason):
            diagnostics.append(
                Diagnostic(
                    severity, .missingTimeZone, path: fullPath,
                    "\(fullPath) has no UTC offset and \(reason); write the offset (2027-03-04T20:15:00-08:00)"))
            return time
        case .success(let (identifier, source)):
            guard let timeZone = TimeZone(identifier: identifier) else {
                diagnostics.append(
                    Diagnostic(
                        severity, .missingTimeZone, path: fullPath,
                        "\(fullPath) has no UTC offset and the zone \(identifier) of \(source) is unknown here; write the offset"))
                return time
            }
            let (offset, exists) = Self.offset(of: timeZone, atWallClock: value.wallClockSeconds)
            time.zone = .inferred
            time.timeZoneIdentifier = identifier
            time.utcOffsetSeconds = offset
            time.instant = Date(timeIntervalSince1970: Double(value.wallClockSeconds - offset) + value.fractionalSeconds)
            time.resolved = value.dateText + "T" + (value.timeText ?? "00:00:00") + LocalDateTime.offsetText(offset)
            root.setText(time.resolved, at: fullPath.split(separator: ".").map(String.init)[...])
            warn(
                .timeZoneInferred, fullPath,
                "\(fullPath) has no UTC offset; \(identifier) (\(LocalDateTime.offsetText(offset))) was inferred from \(source). Write the offset")
            if !exists {
                warn(
                    .nonexistentLocalTime, fullPath,
                    "\(fullPath) names a local time skipped by a daylight-saving change in \(identifier); it was read as \(time.resolved)")
            }
            return time
        }
    }

    /// Warns (`time.offset-mismatch`) when the written offset is not the offset of the place's zone at
    /// that instant; the written instant stays. A place whose zone cannot be found is not checked.
    mutating func checkOffset(
        _ offset: Int, at instant: Date, of place: (node: SchemaNode?, path: String), path: String, written: String
    ) {
        // The common case (the zone is unknown, or agrees) builds no text.
        guard let identifier = knownZone(of: place.node), let timeZone = TimeZone(identifier: identifier) else { return }
        let expected = timeZone.secondsFromGMT(for: instant)
        guard expected != offset, case .success(let (_, source)) = zone(of: place.node, path: place.path) else { return }
        let local = LocalDateTime.offsetText(expected)
        warn(
            .offsetMismatch, path,
            "\(path) \(written) has the UTC offset \(LocalDateTime.offsetText(offset)), but \(identifier) (from \(source)) "
                + "is at \(local) then; the written instant was kept. If the time is local there, write it with \(local)")
    }

    /// The IANA zone `zone(of:path:)` finds for a place, without describing where it came from.
    func knownZone(of place: SchemaNode?) -> String? {
        guard let place else { return nil }
        if let code = place.looseText("iataCode"), let zone = directory.zone(forAirport: code) { return zone }
        guard let country = place.child("address")?.looseText("addressCountry"),
            let code = directory.countryCode(for: country)
        else { return nil }
        let zones = directory.zones(forCountry: code)
        return zones.count == 1 ? zones[0] : nil
    }

    /// The IANA zone of a place and a description of where it came from, or why none was found.
    func zone(of place: SchemaNode?, path: String) -> Result<(String, String), ZoneFailure> {
        guard let place else { return .failure(ZoneFailure("\(path) is not given")) }
        var reasons: [String] = []
        if let code = place.looseText("iataCode")?.uppercased() {
            if let zone = directory.zone(forAirport: code) { return .success((zone, "\(path) \(code)")) }
            reasons.append("airport \(code) at \(path).iataCode is not in the airport table")
        }
        let address = place.child("address")
        if let country = address?.looseText("addressCountry") {
            guard let code = directory.countryCode(for: country) else {
                reasons.append("\(path).address.addressCountry is not a recognized country")
                return .failure(ZoneFailure(reasons.joined(separator: " and ")))
            }
            let zones = directory.zones(forCountry: code)
            if zones.count == 1 { return .success((zones[0], "\(path).address.addressCountry \(code)")) }
            reasons.append(
                zones.isEmpty
                    ? "no zone is known for \(path).address.addressCountry \(code)"
                    : "\(path).address.addressCountry \(code) has \(zones.count) time zones")
        } else if reasons.isEmpty {
            reasons.append("\(path) has no iataCode or address.addressCountry to infer a zone from")
        }
        return .failure(ZoneFailure(reasons.joined(separator: " and ")))
    }

    struct ZoneFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The UTC offset of `timeZone` at a wall-clock time (seconds as if UTC), and whether that
    /// local time exists. An ambiguous time (clocks set back) takes its first occurrence; a skipped
    /// one (clocks set forward) takes the offset before the change, as RFC 5545 §3.3.5 does.
    static func offset(of timeZone: TimeZone, atWallClock wallClock: Int) -> (Int, Bool) {
        func offset(atUTC seconds: Int) -> Int { timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds))) }
        let before = offset(atUTC: wallClock - 86_400)
        let after = offset(atUTC: wallClock + 86_400)
        let candidates = before == after ? [before] : [max(before, after), min(before, after)]
        for candidate in candidates where offset(atUTC: wallClock - candidate) == candidate {
            return (candidate, true)
        }
        let current = offset(atUTC: wallClock - before)
        if offset(atUTC: wallClock - current) == current { return (current, true) }
        return (before, false)
    }

    /// An arrival not after its departure (MARKUP.md, "Times"): a warning when it is at most 24 hours
    /// before (an overnight flight written with the wrong date or offset, the date line), and the
    /// reservation stays; an error when it is more than 24 hours before, which no journey is. Compared
    /// as instants when both are known; else a date alone may arrive one day "before" (the date line);
    /// else wall clocks, allowing the 26 hours zones can differ by.
    mutating func checkArrival(
        _ departure: ReservationTime?, _ arrival: ReservationTime?, arrivalPath: String, departurePath: String
    ) {
        guard let departure, let arrival else { return }
        let earlyBy: Double
        let allowance: Double
        if let start = departure.instant, let end = arrival.instant {
            earlyBy = start.timeIntervalSince(end)
            allowance = 86_400
        } else if departure.isDateOnly || arrival.isDateOnly {
            guard let start = LocalDateTime(parsing: departure.localDate), let end = LocalDateTime(parsing: arrival.localDate)
            else { return }
            earlyBy = Double(start.wallClockSeconds - end.wallClockSeconds)
            guard earlyBy > 0 else { return }  // the same day is not before
            allowance = 86_400
        } else {
            guard let start = LocalDateTime(parsing: departure.wallClockKey), let end = LocalDateTime(parsing: arrival.wallClockKey)
            else { return }
            earlyBy = Double(start.wallClockSeconds - end.wallClockSeconds)
            allowance = 86_400 + 26 * 3600
        }
        guard earlyBy >= 0 else { return }
        let hours = (earlyBy / 3600 * 10).rounded() / 10
        if earlyBy > allowance {
            error(
                .arrivalImpossible, arrivalPath,
                "\(arrivalPath) (\(arrival.resolved)) is \(hours) hours before \(departurePath) (\(departure.resolved)), "
                    + "more than a day: no journey does that. Correct the times")
        } else {
            warn(
                .arrivalBeforeDeparture, arrivalPath,
                "\(arrivalPath) (\(arrival.resolved)) is not after \(departurePath) (\(departure.resolved)); kept as "
                    + "written. Check the dates and UTC offsets")
        }
    }

    /// Reports `code` at `laterPath` unless `later` is after `earlier`: compared as instants when
    /// both are known, else by wall-clock date (and time when both have one).
    mutating func checkOrder(
        _ earlier: ReservationTime?, _ later: ReservationTime?, laterPath: String, earlierPath: String,
        code: Diagnostic.Code
    ) {
        guard let earlier, let later else { return }
        let inOrder: Bool
        if let start = earlier.instant, let end = later.instant {
            inOrder = end > start
        } else if earlier.isDateOnly || later.isDateOnly {
            inOrder = later.localDate >= earlier.localDate
        } else {
            inOrder = later.wallClockKey > earlier.wallClockKey
        }
        if !inOrder {
            error(code, laterPath, "\(laterPath) (\(later.resolved)) is not after \(earlierPath) (\(earlier.resolved)); correct the times")
        }
    }
}
