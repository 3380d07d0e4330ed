import Foundation
import Markup
import Reservations
import TestSupport
import Testing

/// `CanonicalJSONEncoder` against Foundation's `JSONEncoder` with the same options, byte for byte: stored payloads
/// are compared as bytes and webhook signatures cover them, so "the same JSON" is not enough.
@Suite("Canonical JSON: the same bytes as Foundation's JSONEncoder")
struct CanonicalJSONEncoderTests {
    static let strategies: [CanonicalJSONEncoder.DateEncoding] = [.deferredToDate, .millisecondsSince1970, .iso8601]

    /// Both encoders' output, and that they agree; nil when Foundation refuses the value (then so must this one).
    @discardableResult
    static func expectSame<Value: Encodable>(
        _ value: Value, dates: CanonicalJSONEncoder.DateEncoding = .deferredToDate,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String? {
        let encoder = CanonicalJSONEncoder(dateEncoding: dates)
        let reference = try? encoder.foundationEncoder.encode(value)
        let fast = try? encoder.encode(value)
        #expect(fast == reference.map { Array($0) }, "\(String(decoding: reference ?? Data(), as: UTF8.self))",
            sourceLocation: sourceLocation)
        return reference.map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: strings

    /// Every ASCII byte, both sides of the escaping rules: controls, `"`, `\`, `/`, DEL.
    @Test(arguments: 0...0x7F)
    func everyASCIICharacterAlone(code: Int) {
        let text = String(UnicodeScalar(UInt8(code)))
        Self.expectSame(text)
        Self.expectSame(["k" + text + "k": text + "x" + text])
        Self.expectSame(JSONValue.object([text: .string("a" + text)]))
    }

    @Test(arguments: [
        "", "plain", "https://example.com/a/b?c=d&e=f#g", "quote \" backslash \\ slash / tab \t end",
        "line\nreturn\r\u{08}\u{0C}\u{00}\u{1F}\u{7F}", "café", "cafe\u{301}", "日本語のテキスト", "emoji 🚆✈️👩‍👩‍👧",
        "\u{2028}\u{2029}\u{FEFF}", "\u{10FFFF}", "ends with backslash\\", "\\u0041 is not unescaped",
        String(repeating: "long ", count: 2000) + "\u{1}",
    ])
    func strings(text: String) {
        Self.expectSame(text)
        Self.expectSame([text])
        Self.expectSame(JSONValue.string(text))
        Self.expectSame(JSONValue.object([text: .array([.string(text), .null])]))
    }

    // MARK: numbers

    static let sampleDoubles: [Double] = [
        0, -0.0, 1, -1, 0.5, -0.5, 0.1, 0.2 + 0.1, 1.0 / 3, 2.0 / 3, 100, 1e15, 1e15 + 0.5, 1e16, 1e16 + 2, Double(Int64(9_007_199_254_740_993)),
        Double(Int64(123_456_789_012_345_678)), 1e21, 1e22, 1e100, 1e300, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, .leastNormalMagnitude, -.leastNonzeroMagnitude, 1e-5, 1e-6, 1e-7, 0.0001, 0.00001234,
        1.5e-300, 59.334_591, 18.063_24, -122.419_416, 48.858_370_2, 2.294_481_3, 720_000_000.123, 7.25e8, -3.0e-9,
        Double(Int64.max), Double(Int64.min), 4_503_599_627_370_496.5, 12.0, 12.5e3,
    ]

    @Test(arguments: sampleDoubles)
    func doubles(value: Double) {
        Self.expectSame(value)
        Self.expectSame([value, -value])
        Self.expectSame(Numbers(double: value, float: Float(value)))
    }

    @Test func integersAtTheirLimits() {
        Self.expectSame(
            Integers(
                int: .min, int8: .min, int16: .min, int32: .min, int64: .min, uint: .max, uint8: .max, uint16: .max,
                uint32: .max, uint64: .max))
        Self.expectSame(
            Integers(int: .max, int8: .max, int16: .max, int32: .max, int64: .max, uint: 0, uint8: 0, uint16: 0, uint32: 0, uint64: 0))
        Self.expectSame([Int.min, -1, 0, 1, 9, 10, 99, 100, Int.max])
        Self.expectSame([Int64.min, Int64.max])
        Self.expectSame([UInt64.max, 0])
        Self.expectSame([Int8.min, Int8.max])
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func aNonFiniteNumberIsRefusedLikeFoundationRefusesIt(value: Double) {
        #expect(Self.expectSame(value) == nil)
        #expect(Self.expectSame(Numbers(double: value, float: 1)) == nil)
        #expect(throws: EncodingError.self) { try CanonicalJSONEncoder().encode(["a": [value]]) }
    }

    // MARK: dates

    static let sampleDates: [Date] = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSince1970: 1_790_000_060),
        Date(timeIntervalSince1970: 1_790_000_060.123), Date(timeIntervalSince1970: 1_790_000_060.999_9),
        Date(timeIntervalSince1970: -1.5), Date(timeIntervalSince1970: -86_400 * 365 * 100), Date(timeIntervalSince1970: 0.001),
        Date(timeIntervalSince1970: 253_402_300_799), Date(timeIntervalSince1970: 1_700_000_000.000_1),
    ]

    @Test(arguments: strategies)
    func dates(strategy: CanonicalJSONEncoder.DateEncoding) {
        for date in Self.sampleDates {
            Self.expectSame(date, dates: strategy)
            Self.expectSame(Dated(at: date, maybe: date, never: nil, all: [date, date]), dates: strategy)
            Self.expectSame(["at": date], dates: strategy)
        }
    }

    // MARK: shapes

    @Test func membersComeSortedWhateverOrderTheyAreWrittenIn() throws {
        let text = try #require(Self.expectSame(Unsorted(zebra: 1, apple: "a", Mango: [3, 2], _under: nil, a10: true, a9: false)))
        #expect(text == #"{"Mango":[3,2],"a10":true,"a9":false,"apple":"a","zebra":1}"#)
        Self.expectSame(Unsorted(zebra: -1, apple: "", Mango: [], _under: Unsorted.Inner(b: 1, a: [:]), a10: false, a9: true))
        Self.expectSame([Unsorted.Inner(b: 2, a: ["y": [1], "x": [], "é": [3], "e\u{301}z": [4], "Z": [5]])])
    }

    @Test func explicitNullsDuplicateKeysAndEmptyValues() {
        Self.expectSame(Explicit())
        Self.expectSame([Explicit(), Explicit()])
        Self.expectSame(Nothing())
        Self.expectSame(["a": Nothing()])
        Self.expectSame([Nothing()])
        Self.expectSame(Wrapper(value: Nothing()))
        Self.expectSame([String: Int]())
        Self.expectSame([Int]())
        Self.expectSame([[Int]]([[], [1], []]))
        Self.expectSame(Optional<Int>.none)
        Self.expectSame([1: "int keys", 20: "sorted as text", 3: "x"])
        Self.expectSame(Kind.train)
    }

    @Test func whatFoundationWritesItsOwnWayGoesThroughFoundation() throws {
        Self.expectSame(Special(data: Data([0, 1, 2, 250]), url: URL(string: "https://example.com/a b?q=1")!, decimal: Decimal(string: "12.50")!))
        Self.expectSame(Nested(a: 1, inner: "x"))
        Self.expectSame([Nested(a: 2, inner: "y/\"z\"")])
    }

    // MARK: generated JSON values

    @Test(arguments: 0..<200)
    func generatedJSONValues(seed: UInt64) {
        var random = Generator(seed: seed)
        let value = random.value(depth: 0)
        Self.expectSame(value)
        Self.expectSame(Wrapper(value: value))
        Self.expectSame([value, value])
        // The convenience the rest of the gateway calls writes the same bytes.
        #expect(Array(value.jsonData()) == (try? Array(CanonicalJSONEncoder().foundationEncoder.encode(value))))
    }

    // MARK: the markup corpus, resolved

    static let corpusDirectory = CorpusComparison.corpusDirectory(
        packageRoot: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent())

    @Test(.enabled(if: corpusDirectory != nil, "shared/corpus/markup is absent"), arguments: CorpusComparison.cases(in: corpusDirectory))
    func everyCorpusCaseResolved(name: String) throws {
        let directory = try #require(Self.corpusDirectory).appendingPathComponent(name)
        let input = try #require(
            ["input.html", "input.eml"].map { directory.appendingPathComponent($0) }
                .first { FileManager.default.fileExists(atPath: $0.path) })
        let graph = MarkupExtractor().extract(html: [UInt8](try Data(contentsOf: input)))
        let resolutions = ReservationResolver().resolve(graph)
        for resolution in resolutions {
            Self.expectSame(resolution.normalized)
            for strategy in Self.strategies {
                Self.expectSame(resolution.reservation, dates: strategy)
                Self.expectSame(resolution, dates: strategy)
            }
        }
        Self.expectSame(resolutions)
    }
}

// MARK: - Fixtures

struct Numbers: Encodable {
    var double: Double
    var float: Float
}

struct Integers: Encodable {
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
}

struct Dated: Encodable {
    var at: Date
    var maybe: Date?
    var never: Date?
    var all: [Date]
}

struct Unsorted: Encodable {
    struct Inner: Encodable {
        var b: Int
        var a: [String: [Int]]
    }

    var zebra: Int
    var apple: String
    var Mango: [Int]  // swift-format-ignore: the capital sorts before lower case
    var _under: Inner?
    var a10: Bool
    var a9: Bool
}

/// Writes `null` explicitly and the same key twice (Foundation keeps the last).
struct Explicit: Encodable {
    enum Keys: String, CodingKey { case b, a, c }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode("first", forKey: .b)
        try container.encodeNil(forKey: .c)
        try container.encode(1, forKey: .a)
        try container.encode("second", forKey: .b)
        var again = encoder.container(keyedBy: Keys.self)
        try again.encode([true], forKey: .a)
    }
}

/// Encodes nothing at all.
struct Nothing: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

struct Wrapper<Value: Encodable>: Encodable {
    var value: Value
}

enum Kind: String, Encodable { case train }

struct Special: Encodable {
    var data: Data
    var url: URL
    var decimal: Decimal
}

/// Uses a nested container, which the fast path hands to Foundation.
struct Nested: Encodable {
    enum Keys: String, CodingKey { case a, inner }
    enum InnerKeys: String, CodingKey { case value }
    var a: Int
    var inner: String
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        try container.encode(a, forKey: .a)
        try nested.encode(inner, forKey: .value)
    }
}

/// Seeded JSON values of every shape.
struct Generator {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1) }

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    static let pieces: [String] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{00}", "\u{01}", "\u{08}", "\u{0C}", "\u{1B}", "\u{1F}",
        "\u{7F}", "é", "e\u{301}", "ß", "日", "🚆", "\u{2028}", "\u{FFFD}", "@", "@type", "http://schema.org/", "<b>",
        "&amp;", "12", "-3.5e+7",
    ]

    mutating func string() -> String {
        (0..<below(8)).map { _ in Self.pieces[below(Self.pieces.count)] }.joined()
    }

    mutating func value(depth: Int) -> JSONValue {
        switch below(depth > 3 ? 4 : 6) {
        case 0: return .null
        case 1: return .bool(below(2) == 0)
        case 2, 3: return .string(string())
        case 4: return .array((0..<below(5)).map { _ in value(depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<below(7) { members[string()] = value(depth: depth + 1) }
            return .object(members)
        }
    }
}

/// `JSONValue(parsing:)` against `JSONDecoder` reading a `JSONValue`: the same value, or a refusal from both.
@Suite("JSONValue parsing: the same value as JSONDecoder")
struct JSONValueParsingTests {
    static func expectSame(_ text: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let reference = try? JSONDecoder().decode(JSONValue.self, from: Data(text))
        let parsed = try? JSONValue(parsing: text)
        #expect(parsed == reference, "\(String(decoding: text, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    @Test(arguments: 0..<200)
    func generatedValuesWrittenEveryWay(seed: UInt64) throws {
        var random = Generator(seed: seed)
        let value = random.value(depth: 0)
        Self.expectSame(Array(value.jsonData()))
        Self.expectSame(Array(value.jsonData(prettyPrinted: true)))
        Self.expectSame(Array(try JSONEncoder().encode(value)))  // slashes escaped, keys in any order
        #expect(try JSONValue(parsing: value.jsonData()) == value)
    }

    @Test(arguments: [
        "0", "-0", "1", "-1", "12", "1.5", "-1.25", "1e3", "1E3", "1e+3", "1e-3", "2.5e-7", "123456789012345678901234567890",
        "1e15", "999999999999999", "1000000000000000", "0.1", "3.0", "-0.0", "1e308", "4.9e-324", "1.7976931348623157e308",
        "[1,2.50,-3e2]", "{\"n\":59.334591,\"m\":-122.419416}",
    ])
    func numbers(text: String) {
        Self.expectSame(Array(text.utf8))
    }

    @Test(arguments: [
        #""\u0041\u00e9\u65e5\ud83d\ude86""#, #""\/\"\\\b\f\n\r\t""#, #"{"a":1,"a":2}"#, " \t\r\n[ true , false , null ] ",
        #"{"":{}}"#, "[[[[[]]]]]", #""é""#, "[1,]", #"{"a":1 , }"#, #"{"a":[1,],"b":{"c":2,},}"#,
    ])
    func validText(text: String) {
        Self.expectSame(Array(text.utf8))
    }

    @Test(arguments: [
        "", " ", "[", "]", "{", "{\"a\"}", "{\"a\":}", "{a:1}", "[1,,]", "[,]", "{,}", "[,1]", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud83d\"", "\"\\ude86\"", "\"a\u{01}b\"", "[1] 2", "'a'", "1e999", "NaN", "[1 2]",
    ])
    func invalidTextIsRefusedByBoth(text: String) {
        #expect((try? JSONValue(parsing: Array(text.utf8))) == nil)
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))) == nil)
    }

    @Test func invalidUTF8IsRefused() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect((try? JSONValue(parsing: bytes)) == nil)
    }

    @Test func anObjectsMembersAreFoundWithoutReadingThem() throws {
        let text = Data(#" {"markup":{"a":[1,"}"]},"reservation":{"k":"v\"}"},"x":null} "#.utf8)
        let ranges = try JSONValue.memberRanges(of: text)
        #expect(Set(ranges.keys) == ["markup", "reservation", "x"])
        #expect(String(decoding: text[try #require(ranges["markup"])], as: UTF8.self) == #"{"a":[1,"}"]}"#)
        #expect(String(decoding: text[try #require(ranges["reservation"])], as: UTF8.self) == #"{"k":"v\"}"}"#)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.memberRanges(of: Data("[1]".utf8)) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.memberRanges(of: Data(#"{"a":1"#.utf8)) }
    }
}
