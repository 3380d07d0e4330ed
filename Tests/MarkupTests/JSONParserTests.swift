import Testing

@testable import Markup

@Suite("JSON parser (RFC 8259)")
struct JSONParserTests {
    let parser = JSONParser(maxDepth: 64, maxStringLength: 1000)

    private func parse(_ text: String) -> Result<JSONValue, JSONParser.Failure> {
        parser.parse(Array(text.utf8))
    }

    @Test(arguments: [
        ("0", JSONValue.number("0")),
        ("-12.50e+3", .number("-12.50e+3")),
        ("2.50", .number("2.50")),
        ("true", .bool(true)),
        (" null ", .null),
        (#""a\"b\\c\/d\n\u00e9""#, .string("a\"b\\c/d\né")),
        (#""\ud83d\ude00""#, .string("😀")),
        (#""\ud800x""#, .string("\u{FFFD}x")),  // a lone surrogate
        ("[]", .array([])),
        ("{}", .object([])),
        ("[1, [2, [3]]]", .array([.number("1"), .array([.number("2"), .array([.number("3")])])])),
    ])
    func validValues(text: String, expected: JSONValue) throws {
        #expect(try parse(text).get() == expected)
    }

    @Test func objectsKeepMemberOrderAndDuplicates() throws {
        let value = try parse(#"{"b": 1, "a": {"x": []}, "b": 2}"#).get()
        guard case .object(let members) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(members.map(\.name) == ["b", "a", "b"])
        #expect(
            members.map(\.value) == [
                .number("1"), .object([JSONMember(key: .string("x"), value: .array([]))]), .number("2"),
            ])
    }

    @Test(arguments: [
        ("", 0), ("[1,]", 3), ("{\"a\":1,}", 7), ("[1 2]", 3), ("{'a': 1}", 1), ("01", 1), ("1.", 2), ("-", 1),
        ("\"a\nb\"", 2), ("\"abc", 0), ("tru", 0), ("[1] x", 4), ("{\"a\" 1}", 5), ("\"\\x\"", 1), ("\"\\u12G4\"", 5),
        ("// comment\n{}", 0),
    ])
    func invalidInputFailsAtItsPosition(text: String, offset: Int) {
        guard case .failure(let failure) = parse(text) else {
            Issue.record("\(text.debugDescription) parsed")
            return
        }
        #expect(failure.kind == .syntax)
        #expect(failure.offset == offset, "\(text.debugDescription): \(failure.reason)")
    }

    @Test func depthIsLimited() {
        let limited = JSONParser(maxDepth: 3, maxStringLength: 100)
        #expect((try? limited.parse(Array("[[[1]]]".utf8)).get()) != nil)
        guard case .failure(let failure) = limited.parse(Array("[[[[1]]]]".utf8)) else {
            Issue.record("depth 4 accepted")
            return
        }
        #expect(failure.kind == .tooDeep)
        #expect(failure.offset == 3)
    }

    @Test func aMillionOpenBracketsFailWithoutRecursion() {
        let text = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        guard case .failure(let failure) = parser.parse(text) else {
            Issue.record("accepted")
            return
        }
        #expect(failure.kind == .tooDeep)
    }

    @Test func longStringsAreMeasuredNotKept() throws {
        let short = JSONParser(maxDepth: 8, maxStringLength: 4)
        #expect(
            try short.parse(Array(#"["abcd", "abcde", "a\u0062cde", 123456]"#.utf8)).get()
                == .array([
                    .string("abcd"), .oversizedString(byteCount: 5), .oversizedString(byteCount: 5),
                    .oversizedString(byteCount: 6),
                ]))
    }
}
