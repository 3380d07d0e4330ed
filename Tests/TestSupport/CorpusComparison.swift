package import Foundation

/// The comparison rules of the markup conformance corpus (`shared/corpus/README.md`, "How to
/// compare"), on reservations in the corpus's flat form. Each test target makes the flat form of
/// what it found (a resolved `Reservation`, the JSON `gateway extract --json` prints) and compares here.
package enum CorpusComparison {
    /// One reservation in the corpus's flat comparison form: field name → text (absent = not given).
    package typealias Flat = [String: String]

    /// `shared/corpus/markup`, found beside the package root or above it (a worktree sits one level
    /// deeper than a clone); nil when absent.
    ///
    /// - Parameter packageRoot: the package's root directory.
    package static func corpusDirectory(packageRoot: URL) -> URL? {
        var directory = packageRoot
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("shared/corpus/markup")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue {
                return candidate
            }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// The case folders of a corpus directory, sorted; empty when there is none.
    package static func cases(in directory: URL?) -> [String] {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            return []
        }
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The fields of an expected entry: nulls dropped, addresses reduced to the two compared parts.
    package static func expected(_ object: [String: Any]) -> Flat {
        var flat: Flat = [:]
        for (key, value) in object {
            if let text = value as? String {
                flat[key] = text
            } else if key == "address", let address = value as? [String: Any] {
                for part in ["streetAddress", "addressLocality"] {
                    if let text = address[part] as? String { flat["address." + part] = text }
                }
            }
        }
        return flat
    }

    package static let timeFields: Set<String> = [
        "departureTime", "arrivalTime", "checkinTime", "checkoutTime", "startDate", "pickupTime", "dropoffTime",
    ]

    /// Whether `actual` satisfies every field `expected` gives; the failing fields otherwise.
    package static func mismatches(expected: Flat, actual: Flat) -> [String] {
        expected.keys.sorted().filter { key in
            guard let want = expected[key] else { return false }
            guard let have = actual[key] else { return true }
            if timeFields.contains(key) { return !sameTime(expected: want, actual: have) }
            return folded(want) != folded(have)
        }
    }

    /// Text compared HTML-unescaped and case-folded (whitespace folded too).
    package static func folded(_ text: String) -> String {
        htmlUnescaped(text).lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    package static func htmlUnescaped(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}"]
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let after = rest[rest.index(after: ampersand)...]
            if let semicolon = after.prefix(10).firstIndex(of: ";") {
                let entity = after[..<semicolon]
                var replacement: String?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    replacement = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if entity.hasPrefix("#") {
                    replacement = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
                } else {
                    replacement = named[String(entity)]
                }
                if let replacement {
                    result += replacement
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            result += "&"
            rest = after
        }
        return result + rest
    }

    /// Two datetimes with offsets: the same instant; otherwise the same wall clock; an expected
    /// date alone matches any time that day.
    package static func sameTime(expected: String, actual: String) -> Bool {
        let want = expected.trimmingCharacters(in: .whitespaces)
        let have = actual.trimmingCharacters(in: .whitespaces)
        if want.count == 10 { return have.hasPrefix(want) }
        if let wantInstant = instant(want), let haveInstant = instant(have) { return wantInstant == haveInstant }
        return wallClock(want) == wallClock(have)
    }

    /// The instant of a datetime that carries an offset, else nil.
    package static func instant(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
            [.withFullDate, .withTime, .withColonSeparatorInTime, .withTimeZone],
        ] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// `YYYY-MM-DDTHH:MM:SS` of a datetime, seconds defaulting to 00, offset dropped.
    package static func wallClock(_ text: String) -> String {
        var local = String(text.prefix(19)).replacingOccurrences(of: " ", with: "T")
        if local.count >= 16, local.count < 19 || !local.dropFirst(16).hasPrefix(":") {
            local = String(local.prefix(16)) + ":00"
        }
        return local
    }

    /// Matches expected entries to found ones one to one. Returns what is missing and what is extra.
    package static func compare(expected: [Flat], found: [(flat: Flat, syntax: String)]) -> (missing: [String], extra: [String]) {
        // The same reservation given in both JSON-LD and Microdata counts once.
        var distinct: [(flat: Flat, syntax: String)] = []
        for item in found where !distinct.contains(where: { $0.flat == item.flat && $0.syntax != item.syntax }) {
            distinct.append(item)
        }
        var unmatched = Array(distinct.indices)
        var missing: [String] = []
        for entry in expected {
            if let position = unmatched.firstIndex(where: { mismatches(expected: entry, actual: distinct[$0].flat).isEmpty }) {
                unmatched.remove(at: position)
            } else {
                let closest = distinct.map { mismatches(expected: entry, actual: $0.flat) }.min { $0.count < $1.count }
                missing.append("\(entry["type"] ?? "?") \(entry["reservationId"] ?? "?") \(entry["underName"] ?? ""): "
                    + "closest differs in \(closest ?? ["everything"])")
            }
        }
        let extra = unmatched.map { "\(distinct[$0].flat)" }
        return (missing, extra)
    }
}
