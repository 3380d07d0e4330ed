package import Foundation
internal import MailMessage

extension JSONValue {
    /// A refusal of ``init(parsing:)``: what was wrong and at which byte.
    package struct ParseError: Error, Sendable, CustomStringConvertible {
        package var offset: Int
        package var reason: String
        package var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// The value of the JSON text `bytes` (RFC 8259), read directly rather than through `JSONDecoder` and
    /// ``init(from:)``: the same value, without a `DecodingError` made and dropped for every shape a member is not.
    /// Numbers become their text as ``init(from:)`` makes it. Read as `JSONDecoder` reads: of duplicate keys the
    /// first is kept, and one trailing comma in an array or object is allowed.
    /// - Throws: ``ParseError`` when `bytes` is not one JSON value.
    package init(parsing bytes: some Collection<UInt8>) throws(ParseError) {
        let result: Result<JSONValue, ParseError> =
            bytes.withContiguousStorageIfAvailable { Self.parseWhole($0) } ?? Array(bytes).withUnsafeBufferPointer {
                Self.parseWhole($0)
            }
        self = try result.get()
    }

    /// The members of the JSON object `bytes` as byte ranges of their values (relative to `bytes.startIndex`),
    /// without reading the values: for taking one member of a large document. Of duplicate keys the first is kept.
    /// - Throws: ``ParseError`` when `bytes` is not one JSON object.
    package static func memberRanges(of bytes: Data) throws(ParseError) -> [String: Range<Int>] {
        let result: Result<[String: Range<Int>], ParseError> = bytes.withUnsafeBytes { raw in
            var parser = JSONParser(raw.bindMemory(to: UInt8.self))
            do throws(ParseError) {
                let members = try parser.memberRanges()
                return .success(members)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func parseWhole(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, ParseError> {
        var parser = JSONParser(buffer)
        do throws(ParseError) {
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.position == buffer.count else { throw parser.error("text after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    /// The text ``init(from:)`` keeps for a number: an integer's digits, else Swift's shortest form of the double.
    static func numberText(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// A recursive-descent reader over a buffer of UTF-8.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// As deep as `JSONDecoder` reads.
    static let maximumDepth = 512

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    func error(_ reason: String) -> JSONValue.ParseError {
        JSONValue.ParseError(offset: position, reason: reason)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func expect(_ byte: UInt8) throws(JSONValue.ParseError) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else {
            throw error("expected '\(Character(UnicodeScalar(byte)))'")
        }
        position += 1
    }

    /// The next byte after whitespace, not consumed.
    mutating func peek() throws(JSONValue.ParseError) -> UInt8 {
        skipWhitespace()
        guard position < bytes.count else { throw error("unexpected end") }
        return bytes[position]
    }

    mutating func value(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nested too deeply") }
        switch try peek() {
        case UInt8(ascii: "{"):
            position += 1
            var members: [String: JSONValue] = [:]
            if try peek() == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                try expect(UInt8(ascii: "\""))
                let key = try stringBody()
                try expect(UInt8(ascii: ":"))
                let member = try value(depth: depth + 1)
                if members[key] == nil { members[key] = member }
                let next = try peek()
                position += 1
                if next == UInt8(ascii: "}") || (next == UInt8(ascii: ",") && closes(UInt8(ascii: "}"))) {
                    return .object(members)
                }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' or '}'") }
            }
        case UInt8(ascii: "["):
            position += 1
            var items: [JSONValue] = []
            if try peek() == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                let next = try peek()
                position += 1
                if next == UInt8(ascii: "]") || (next == UInt8(ascii: ",") && closes(UInt8(ascii: "]"))) {
                    return .array(items)
                }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' or ']'") }
            }
        case UInt8(ascii: "\""):
            position += 1
            return .string(try stringBody())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return .string(JSONValue.numberText(try number()))
        }
    }

    /// Whether `close` comes next (after a comma: `JSONDecoder` allows one trailing comma), consuming it when it does.
    mutating func closes(_ close: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == close else { return false }
        position += 1
        return true
    }

    mutating func literal(_ word: StaticString) throws(JSONValue.ParseError) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count,
            memcmp(bytes.baseAddress! + position, word.utf8Start, count) == 0
        else { throw error("expected \(word)") }
        position += count
    }

    /// A number's value (RFC 8259 §6 grammar).
    mutating func number() throws(JSONValue.ParseError) -> Double {
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                position += 1
            }
            return position - first
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0 else { throw error("expected a value") }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") { throw error("a number with a leading zero") }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw error("expected digits after '.'") }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { throw error("expected digits in the exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw error("a number out of range") }
        return value
    }

    /// A string's contents after its opening quote, through its closing quote.
    mutating func stringBody() throws(JSONValue.ParseError) -> String {
        let start = position
        // Most strings have no escape: take their bytes as they are.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                guard let string = String(validating: text, as: UTF8.self) else { throw error("invalid UTF-8") }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw error("a control character in a string") }
            position += 1
        }
        var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: decoded, as: UTF8.self) else { throw error("invalid UTF-8") }
                return string
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate takes the low one after it.
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw error("a lone surrogate") }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("a lone surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("an invalid escape") }
                    decoded.append(contentsOf: String(Character(unicode)).utf8)
                default: throw error("an invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw error("a control character in a string") }
                decoded.append(byte)
            }
        }
        throw error("an unterminated string")
    }

    mutating func hex4() throws(JSONValue.ParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = bytes[position].hexDigitValue else { throw error("an invalid \\u escape") }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Passes over one value without keeping it.
    mutating func skipValue(depth: Int) throws(JSONValue.ParseError) {
        guard depth < Self.maximumDepth else { throw error("nested too deeply") }
        switch try peek() {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = bytes[position] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = close == UInt8(ascii: "}")
            position += 1
            if try peek() == close {
                position += 1
                return
            }
            while true {
                if isObject {
                    try expect(UInt8(ascii: "\""))
                    try skipStringBody()
                    try expect(UInt8(ascii: ":"))
                }
                try skipValue(depth: depth + 1)
                let next = try peek()
                position += 1
                if next == close || (next == UInt8(ascii: ",") && closes(close)) { return }
                guard next == UInt8(ascii: ",") else { throw error("expected ','") }
            }
        case UInt8(ascii: "\""):
            position += 1
            try skipStringBody()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try number()
        }
    }

    mutating func skipStringBody() throws(JSONValue.ParseError) {
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "\"") { return }
            if byte == UInt8(ascii: "\\") { position += 1 }
        }
        throw error("an unterminated string")
    }

    mutating func memberRanges() throws(JSONValue.ParseError) -> [String: Range<Int>] {
        try expect(UInt8(ascii: "{"))
        var members: [String: Range<Int>] = [:]
        if try peek() == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                try expect(UInt8(ascii: "\""))
                let key = try stringBody()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                let start = position
                try skipValue(depth: 1)
                if members[key] == nil { members[key] = start..<position }
                let next = try peek()
                position += 1
                if next == UInt8(ascii: "}") || (next == UInt8(ascii: ",") && closes(UInt8(ascii: "}"))) { break }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' or '}'") }
            }
        }
        skipWhitespace()
        guard position == bytes.count else { throw error("text after the object") }
        return members
    }
}
