import Foundation

/// Whether the name on a booking (schema.org `underName`) can be the owner's: a booking clearly made for someone else
/// is never accepted automatically (issue 16).
///
/// "Clearly" is the point: the comparison forgives what booking systems do to names and flags only names that cannot
/// be the same person's.
/// - Case, accents and letter forms do not matter (`JOSÉ GARCÍA` is `Jose Garcia`, `Müller` is `Mueller`, `Øster` is
///   `Oster`), nor do titles (`Mr`, `Ms`, `Dr`, ... also glued to the given name the airline way: `LOVELACE/ADAMRS`),
///   punctuation, hyphens or apostrophes (`Jean-Luc`, `O'Brien`).
/// - Order does not matter (`Lovelace, Ada`; `LOVELACE/ADA`).
/// - An initial stands for any name it begins (`A. Lovelace`, `Ada L.`).
/// - A shorter name is the same when each of its parts is a different part of the longer one (`Ada` or `Lovelace`
///   for `Ada King Lovelace`); otherwise the names differ (`Ada Smith`, `Bob Lovelace` are not `Ada Lovelace`).
/// - Names in scripts other than Latin are not compared (a transliteration may differ in any letter): never "clearly
///   not" the owner's.
package enum OwnerName {
    /// `name` with surrounding white space removed and inner runs of it made one space.
    package static func trimmed(_ name: String) -> String {
        name.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// True when `name` is clearly none of `names`; false when `names` is empty (the owner's name is unknown).
    package static func isClearlyNot(_ name: String, anyOf names: [String]) -> Bool {
        guard !names.isEmpty else { return false }
        return !names.contains { mayBeSame(name, $0) }
    }

    /// Whether `a` and `b` may name the same person (see the type's rules).
    package static func mayBeSame(_ a: String, _ b: String) -> Bool {
        guard let x = parts(a), let y = parts(b), !x.isEmpty, !y.isEmpty else { return true }
        let (short, long) = x.count <= y.count ? (x, y) : (y, x)
        return assign(short[...], to: long, used: Set())
    }

    /// Whether every part of `parts` matches a different part of `long` (a small backtracking search: names have few
    /// parts).
    private static func assign(_ parts: ArraySlice<String>, to long: [String], used: Set<Int>) -> Bool {
        guard let first = parts.first else { return true }
        for (index, candidate) in long.enumerated() where !used.contains(index) && matches(first, candidate) {
            if assign(parts.dropFirst(), to: long, used: used.union([index])) { return true }
        }
        return false
    }

    /// Two parts match when equal, when one is an initial of the other, when equal once German umlauts written out
    /// (`ue`) are folded, or when one is the other with a title glued on (`adamrs`).
    static func matches(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        if a.count == 1, b.hasPrefix(a) { return true }
        if b.count == 1, a.hasPrefix(b) { return true }
        if foldUmlauts(a) == foldUmlauts(b) { return true }
        for title in gluedTitles {
            if a.hasSuffix(title), a.count > title.count + 1, String(a.dropLast(title.count)) == b { return true }
            if b.hasSuffix(title), b.count > title.count + 1, String(b.dropLast(title.count)) == a { return true }
        }
        return false
    }

    /// The name's parts, folded to lower-case ASCII letters, titles removed; nil when it has letters outside the Latin
    /// script (not comparable).
    static func parts(_ name: String) -> [String]? {
        let folded = name.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
        var parts: [String] = []
        var current = ""
        for character in folded {
            if let mapped = letterForms[character] {
                current += mapped
            } else if character.isLetter {
                guard character.isASCII else { return nil }
                current.append(character)
            } else if apostrophes.contains(character) {
                continue
            } else if !current.isEmpty {
                parts.append(current)
                current = ""
            }
        }
        if !current.isEmpty { parts.append(current) }
        return parts.filter { !titles.contains($0) }
    }

    static func foldUmlauts(_ part: String) -> String {
        part.replacingOccurrences(of: "ae", with: "a").replacingOccurrences(of: "oe", with: "o")
            .replacingOccurrences(of: "ue", with: "u")
    }

    /// Letters that are not a base letter plus an accent, written the way names are transliterated.
    static let letterForms: [Character: String] = [
        "ß": "ss", "ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ħ": "h",
    ]
    static let apostrophes: Set<Character> = ["'", "’", "ʼ", "`"]
    /// Forms of address booking systems add to names.
    static let titles: Set<String> = [
        "mr", "mrs", "ms", "miss", "mstr", "master", "mx", "dr", "prof", "sir", "madam", "mme", "mlle", "herr", "frau",
        "sr", "sra", "srta", "inf", "chd",
    ]
    /// Titles airlines glue to the given name (`ADAMRS`), longest first.
    static let gluedTitles = ["miss", "mstr", "mrs", "mr", "ms", "dr"]
}
