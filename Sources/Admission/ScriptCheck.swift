/// Detects labels that mix writing systems, the shape of homograph attacks (`pаypal` with a
/// Cyrillic а). A simplified UTS #39 "highly restrictive" check: one script per label, plus the
/// combinations real languages use (Han with Hiragana and Katakana; Han with Hangul; Han with Bopomofo).
enum ScriptCheck {
    enum Script: String {
        case common, latin, greek, cyrillic, armenian, hebrew, arabic, devanagari, bengali, tamil, thai,
             georgian, hangul, hiragana, katakana, han, bopomofo, other
    }

    /// Code point ranges of the scripts seen in domain names. Common covers digits, hyphen and
    /// combining marks (which inherit their base's script).
    static let ranges: [(ClosedRange<UInt32>, Script)] = [
        (0x30...0x39, .common), (0x2D...0x2D, .common), (0x5F...0x5F, .common),
        (0x41...0x5A, .latin), (0x61...0x7A, .latin), (0xC0...0x24F, .latin), (0x1E00...0x1EFF, .latin),
        (0x2C60...0x2C7F, .latin), (0xA720...0xA7FF, .latin), (0xAB30...0xAB6F, .latin), (0xFF21...0xFF5A, .latin),
        (0x300...0x36F, .common), (0xB7...0xB7, .common),
        (0x370...0x3FF, .greek), (0x1F00...0x1FFF, .greek),
        (0x400...0x52F, .cyrillic), (0x1C80...0x1C8F, .cyrillic), (0x2DE0...0x2DFF, .cyrillic), (0xA640...0xA69F, .cyrillic),
        (0x530...0x58F, .armenian), (0x590...0x5FF, .hebrew),
        (0x600...0x6FF, .arabic), (0x750...0x77F, .arabic), (0x8A0...0x8FF, .arabic),
        (0x900...0x97F, .devanagari), (0x980...0x9FF, .bengali), (0xB80...0xBFF, .tamil), (0xE00...0xE7F, .thai),
        (0x10A0...0x10FF, .georgian), (0x1100...0x11FF, .hangul), (0x3130...0x318F, .hangul), (0xAC00...0xD7AF, .hangul),
        (0x3040...0x309F, .hiragana), (0x30A0...0x30FF, .katakana), (0x31F0...0x31FF, .katakana),
        (0x3100...0x312F, .bopomofo), (0x3400...0x4DBF, .han), (0x4E00...0x9FFF, .han), (0xF900...0xFAFF, .han),
        (0x20000...0x2FA1F, .han), (0x3005...0x3007, .han), (0x30FC...0x30FC, .common),
    ]

    static func script(of scalar: Unicode.Scalar) -> Script {
        let value = scalar.value
        // ASCII that is not a letter (digits, punctuation, space) belongs to no script; the
        // host-name check refuses what is not allowed.
        if value < 0x80 && !((0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)) { return .common }
        for (range, script) in ranges where range.contains(value) { return script }
        return .other
    }

    static let allowedCombinations: [Set<Script>] = [
        [.han, .hiragana, .katakana], [.han, .hangul], [.han, .bopomofo],
    ]

    /// A description of the scripts mixed in `label`, or nil when it is fine.
    static func mixedScripts(in label: Substring) -> String? {
        var scripts = Set<Script>()
        for scalar in label.unicodeScalars {
            let script = script(of: scalar)
            if script != .common { scripts.insert(script) }
        }
        guard scripts.count > 1 else { return nil }
        if allowedCombinations.contains(where: { scripts.isSubset(of: $0) }) { return nil }
        return scripts.map(\.rawValue).sorted().joined(separator: " and ")
    }
}
