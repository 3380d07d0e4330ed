package import Foundation

/// The `Date:` field's date-time (RFC 5322 §3.3), including the obsolete forms of §4.3 that real mail still uses:
/// a two- or three-digit year, alphabetic zones (`GMT`, `UT`, `EST`, ...), missing seconds, comments and folding
/// whitespace. `-0000` (§3.3: the zone is unknown) and unknown zone names read as UTC, as §4.3 says for the latter.
package enum MessageDate {
    /// The instant `text` names, or nil when it is not an RFC 5322 date-time.
    package static func parse(_ text: String) -> Date? {
        // Comments (CFWS) out, commas and runs of whitespace to single spaces.
        var cleaned = ""
        var depth = 0
        for character in text {
            switch character {
            case "(": depth += 1
            case ")": depth = max(0, depth - 1)
            default:
                guard depth == 0 else { continue }
                cleaned.append(character == "," || character.isWhitespace ? " " : character)
            }
        }
        var tokens = cleaned.split(separator: " ").map(String.init)
        guard !tokens.isEmpty else { return nil }
        // [day-of-week ","]
        if let first = tokens.first, Int(first) == nil, dayNames.contains(first.lowercased().prefix(3).description) {
            tokens.removeFirst()
        }
        guard tokens.count >= 4, let day = Int(tokens[0]), (1...31).contains(day),
            let month = monthNames.firstIndex(of: tokens[1].lowercased().prefix(3).description),
            tokens[2].allSatisfy(\.isNumber), var year = Int(tokens[2])
        else { return nil }
        // §4.3: two digits are 19xx from 50, 20xx below; three digits add 1900.
        if tokens[2].count == 2 { year += year < 50 ? 2000 : 1900 } else if tokens[2].count == 3 { year += 1900 }
        let time = tokens[3].split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(time.count), let hour = Int(time[0]), let minute = Int(time[1]),
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = time.count == 3 ? Int(time[2]) : 0
        guard let second, (0...60).contains(second) else { return nil }
        let offset = tokens.count > 4 ? zoneOffset(tokens[4]) : 0
        guard let offset else { return nil }

        var components = DateComponents()
        components.year = year
        components.month = month + 1
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = min(second, 59)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        guard let local = calendar.date(from: components), calendar.component(.day, from: local) == day else {
            return nil
        }
        return local.addingTimeInterval(TimeInterval(-offset))
    }

    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Seconds east of UTC for `+hhmm`/`-hhmm` or an obsolete zone name (§4.3); nil when malformed.
    static func zoneOffset(_ zone: String) -> Int? {
        if let sign = zone.first, sign == "+" || sign == "-" {
            let digits = zone.dropFirst()
            guard digits.count == 4, digits.allSatisfy(\.isNumber), let value = Int(digits) else { return nil }
            let hours = value / 100
            let minutes = value % 100
            guard minutes < 60 else { return nil }
            return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
        }
        let named: [String: Int] = [
            "ut": 0, "gmt": 0, "z": 0, "edt": -4, "est": -5, "cdt": -5, "cst": -6, "mdt": -6, "mst": -7, "pdt": -7,
            "pst": -8,
        ]
        guard zone.allSatisfy(\.isLetter) else { return nil }
        return (named[zone.lowercased()] ?? 0) * 3600
    }
}
