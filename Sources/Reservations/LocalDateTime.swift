/// An ISO 8601 date or datetime as written in markup (schema.org `Date`/`DateTime`, ISO 8601:2004
/// §4.1.2.2 calendar dates, §4.2.2 times, §4.2.5 offsets): the wall-clock fields and the offset,
/// if one was given. Parsed byte by byte; anything else is refused.
///
/// Accepted: `2027-03-04`, `2027-03-04T20:15`, `…T20:15:00`, `…T20:15:00.250`, a space instead of
/// `T`, then optionally `Z`, `±hh:mm`, `±hhmm` or `±hh`.
struct LocalDateTime: Sendable, Hashable {
    var year: Int
    var month: Int
    var day: Int
    /// Nil for a date alone.
    var hour: Int?
    var minute: Int = 0
    var second: Int = 0
    /// The fraction of a second as written (digits after the point), empty when none.
    var fraction: String = ""
    /// Seconds east of UTC, when the value carries an offset.
    var offsetSeconds: Int?

    var isDateOnly: Bool { hour == nil }

    /// Parses `text`; nil when it is not an accepted ISO 8601 form or names an impossible date.
    init?(parsing text: String) {
        let bytes = Array(text.utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 || bytes[start] == 0x0A || bytes[start] == 0x0D {
            start += 1
        }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0A
            || bytes[end - 1] == 0x0D
        {
            end -= 1
        }
        guard end - start <= 64 else { return nil }
        var cursor = start

        func digits(_ count: Int) -> Int? {
            guard cursor + count <= end else { return nil }
            var value = 0
            for index in cursor..<(cursor + count) {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            cursor += count
            return value
        }
        func take(_ byte: UInt8) -> Bool {
            guard cursor < end, bytes[cursor] == byte else { return false }
            cursor += 1
            return true
        }

        guard let year = digits(4), take(0x2D), let month = digits(2), take(0x2D), let day = digits(2) else {
            return nil
        }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= LocalDateTime.daysIn(month: month, year: year)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        if cursor == end { return }

        guard cursor < end, bytes[cursor] == 0x54 || bytes[cursor] == 0x74 || bytes[cursor] == 0x20 else { return nil }
        cursor += 1
        guard let hour = digits(2), take(0x3A), let minute = digits(2), hour <= 23, minute <= 59 else { return nil }
        self.hour = hour
        self.minute = minute
        if take(0x3A) {
            guard let second = digits(2), second <= 60 else { return nil }
            self.second = min(second, 59)  // a leap second is read as :59
            if cursor < end, bytes[cursor] == 0x2E || bytes[cursor] == 0x2C {
                cursor += 1
                let fractionStart = cursor
                while cursor < end, bytes[cursor] >= 0x30, bytes[cursor] <= 0x39, cursor - fractionStart < 9 {
                    cursor += 1
                }
                guard cursor > fractionStart else { return nil }
                fraction = String(decoding: bytes[fractionStart..<cursor], as: UTF8.self)
            }
        }
        if cursor == end { return }

        if bytes[cursor] == 0x5A || bytes[cursor] == 0x7A {  // Z
            cursor += 1
            offsetSeconds = 0
        } else if bytes[cursor] == 0x2B || bytes[cursor] == 0x2D {
            let sign = bytes[cursor] == 0x2D ? -1 : 1
            cursor += 1
            guard let hours = digits(2) else { return nil }
            var minutes = 0
            if take(0x3A) {
                guard let value = digits(2) else { return nil }
                minutes = value
            } else if cursor < end {
                guard let value = digits(2) else { return nil }
                minutes = value
            }
            guard hours <= 18, minutes <= 59 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard cursor == end else { return nil }
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the civil date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count from 1970-01-01 (inverse of `daysFromCivil`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Seconds from 1970-01-01T00:00:00 to the wall-clock time, as if it were UTC.
    var wallClockSeconds: Int {
        LocalDateTime.daysFromCivil(year: year, month: month, day: day) * 86_400
            + (hour ?? 0) * 3600 + minute * 60 + second
    }

    /// The fraction of a second as a value in [0, 1).
    var fractionalSeconds: Double {
        fraction.isEmpty ? 0 : Double("0." + fraction) ?? 0
    }

    /// `2027-03-04`.
    var dateText: String {
        LocalDateTime.pad(year, 4) + "-" + LocalDateTime.pad(month, 2) + "-" + LocalDateTime.pad(day, 2)
    }

    /// `20:15:00` (with the fraction as written), or nil for a date alone.
    var timeText: String? {
        guard let hour else { return nil }
        return LocalDateTime.pad(hour, 2) + ":" + LocalDateTime.pad(minute, 2) + ":" + LocalDateTime.pad(second, 2)
            + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// `+01:00`, `-08:00`, `+00:00`.
    static func offsetText(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let magnitude = abs(seconds)
        return sign + pad(magnitude / 3600, 2) + ":" + pad((magnitude % 3600) / 60, 2)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
