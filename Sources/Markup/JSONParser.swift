internal import MailMessage

/// A strict RFC 8259 JSON parser over UTF-8 bytes, iterative so that input cannot drive its stack.
///
/// Arrays and objects are kept on explicit stacks, so depth costs heap, never call stack, and the
/// depth is bounded by `maxDepth` anyway. Strings longer than `maxStringLength` bytes are checked
/// but not kept (`JSONValue.oversizedString`). `parse(_:)` accepts nothing beyond RFC 8259.
///
/// `parseLeniently(_:)` is the reading `JSONLDRecovery` uses on a block that failed: it also takes the
/// separators real senders get wrong, none of which changes a value, and notes each with its offset:
/// a comma missing between two members or elements, a comma doubled or before the first element, a
/// comma before a closing bracket, and a raw control character inside a string (kept as it is, as
/// Python's `json.loads(strict=False)` does).
struct JSONParser {
    struct Failure: Error, Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            case syntax
            case tooDeep
        }

        var kind: Kind
        /// The byte offset in the input where parsing stopped.
        var offset: Int
        var reason: String
    }

    /// A separator `parseLeniently(_:)` took that RFC 8259 does not allow, at a byte offset of its input.
    struct Leniency: Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            /// No comma between two members or elements; read as if there were one.
            case missingComma
            /// A comma after another comma or right after `[`/`{`; skipped.
            case extraComma
            /// A comma before `]` or `}`; skipped.
            case trailingComma
            /// A raw control character (a newline, a tab) inside a string; kept in the value.
            case controlCharacter
        }

        var kind: Kind
        var offset: Int
    }

    /// Nesting limit for arrays and objects; a value at the top level has depth 0, `[1]` has depth 1.
    var maxDepth: Int
    /// Strings (decoded, in UTF-8 bytes) longer than this become `.oversizedString`.
    var maxStringLength: Int

    /// Parses exactly one JSON value, with optional whitespace around it.
    func parse(_ input: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, Failure> {
        var reader = Reader(input: input, maxDepth: maxDepth, maxStringLength: maxStringLength, isLenient: false)
        do {
            return .success(try reader.document())
        } catch {
            return .failure(error)
        }
    }

    /// Parses `bytes` (see `parse(_:)`).
    func parse(_ bytes: [UInt8]) -> Result<JSONValue, Failure> {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    /// Parses exactly one JSON value like `parse(_:)`, also taking missing, doubled and trailing commas and
    /// raw control characters in strings; returns the value and what was taken, in input order.
    func parseLeniently(_ input: UnsafeBufferPointer<UInt8>) -> Result<(JSONValue, [Leniency]), Failure> {
        var reader = Reader(input: input, maxDepth: maxDepth, maxStringLength: maxStringLength, isLenient: true)
        do {
            let value = try reader.document()
            return .success((value, reader.leniencies))
        } catch {
            return .failure(error)
        }
    }
}

extension JSONParser {
    /// The parser's cursor and stacks. Values of open containers wait on `values`; the names of open
    /// objects' members on `keys`; `frames` says where each open container's values start.
    private struct Reader {
        private struct Frame {
            var isObject: Bool
            var valueStart: Int
            var keyStart: Int
        }

        let input: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        let maxStringLength: Int
        /// Whether the separators `JSONParser.Leniency` names are taken (noted in `leniencies`).
        let isLenient: Bool
        var index = 0
        /// What was taken, the first `maxLeniencies` of it (hostile input can have a million commas).
        private(set) var leniencies: [Leniency] = []
        static let maxLeniencies = 1000
        private var frames: [Frame] = []
        private var values: [JSONValue] = []
        private var keys: [JSONValue] = []
        private var scratch: [UInt8] = []

        init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int, maxStringLength: Int, isLenient: Bool) {
            self.input = input
            self.maxDepth = maxDepth
            self.maxStringLength = maxStringLength
            self.isLenient = isLenient
        }

        mutating func document() throws(Failure) -> JSONValue {
            // Each turn reads one value, then hands it to the open containers, closing those that end.
            // The lenient branches sit only where the strict reading would throw.
            outer: while true {
                guard var value = try scalarOrOpen() else { continue }  // a container was opened
                while let frame = frames.last {
                    values.append(value)
                    skipWhitespace()
                    guard index < input.count else { throw failure("unexpected end inside an array or object") }
                    let closer = frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    let byte = input[index]
                    if byte == UInt8(ascii: ",") {
                        let comma = index
                        index += 1
                        skipWhitespace()
                        if isLenient {
                            skipExtraCommas()
                            if index < input.count, input[index] == closer {
                                note(.trailingComma, comma)
                                index += 1
                                value = close()
                                continue
                            }
                        }
                        if frame.isObject { try memberName() }
                        continue outer
                    }
                    guard byte == closer else {
                        if isLenient, frame.isObject ? byte == UInt8(ascii: "\"") : startsValue(byte) {
                            note(.missingComma, index)
                            if frame.isObject { try memberName() }
                            continue outer
                        }
                        throw failure(frame.isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                    }
                    index += 1
                    value = close()
                }
                skipWhitespace()
                guard index == input.count else { throw failure("unexpected data after the JSON value") }
                return value
            }
        }

        private mutating func note(_ kind: Leniency.Kind, _ offset: Int) {
            if leniencies.count < Self.maxLeniencies { leniencies.append(Leniency(kind: kind, offset: offset)) }
        }

        /// Lenient: skips commas where a value or member name is expected, noting each.
        private mutating func skipExtraCommas() {
            while index < input.count, input[index] == UInt8(ascii: ",") {
                note(.extraComma, index)
                index += 1
                skipWhitespace()
            }
        }

        /// Whether `byte` can start a JSON value.
        private func startsValue(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "-"), UInt8(ascii: "t"),
                UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return false
            }
        }

        /// Reads a scalar, or an empty container, and returns it; or opens a container and returns nil.
        private mutating func scalarOrOpen() throws(Failure) -> JSONValue? {
            skipWhitespace()
            if isLenient, !frames.isEmpty { skipExtraCommas() }
            guard index < input.count else { throw failure("unexpected end, expected a value") }
            switch input[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = input[index] == UInt8(ascii: "{")
                guard frames.count < maxDepth else {
                    throw Failure(kind: .tooDeep, offset: index, reason: "nesting deeper than \(maxDepth)")
                }
                index += 1
                skipWhitespace()
                if index < input.count, input[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index += 1
                    return isObject ? .object([]) : .array([])
                }
                frames.append(Frame(isObject: isObject, valueStart: values.count, keyStart: keys.count))
                if isObject { try memberName() }
                return nil
            case UInt8(ascii: "\""):
                return try string()
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number()
            default:
                throw failure("unexpected character, expected a value")
            }
        }

        /// Reads `"name" :` and leaves the name on `keys`.
        private mutating func memberName() throws(Failure) {
            if isLenient { skipExtraCommas() }
            guard index < input.count, input[index] == UInt8(ascii: "\"") else {
                throw failure("expected a member name in double quotes")
            }
            keys.append(try string())
            skipWhitespace()
            guard index < input.count, input[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
        }

        /// Pops the innermost container and returns it as a value.
        private mutating func close() -> JSONValue {
            let frame = frames.removeLast()
            defer {
                values.removeSubrange(frame.valueStart...)
                keys.removeSubrange(frame.keyStart...)
            }
            guard frame.isObject else { return .array(Array(values[frame.valueStart...])) }
            var members: [JSONMember] = []
            members.reserveCapacity(values.count - frame.valueStart)
            for (key, value) in zip(keys[frame.keyStart...], values[frame.valueStart...]) {
                members.append(JSONMember(key: key, value: value))
            }
            return .object(members)
        }

        private mutating func skipWhitespace() {
            while index < input.count {
                switch input[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private mutating func literal(_ word: StaticString) throws(Failure) {
            let count = word.utf8CodeUnitCount
            guard input.count - index >= count else { throw failure("unexpected end in a literal") }
            let start = word.utf8Start
            for offset in 0..<count where input[index + offset] != start[offset] {
                throw failure("invalid literal")
            }
            index += count
        }

        /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as written.
        private mutating func number() throws(Failure) -> JSONValue {
            let start = index
            if input[index] == UInt8(ascii: "-") { index += 1 }
            guard index < input.count, isDigit(input[index]) else { throw failure("invalid number") }
            if input[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                skipDigits()
            }
            if index < input.count, input[index] == UInt8(ascii: ".") {
                index += 1
                guard index < input.count, isDigit(input[index]) else { throw failure("invalid number fraction") }
                skipDigits()
            }
            if index < input.count, input[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < input.count, input[index] == UInt8(ascii: "+") || input[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < input.count, isDigit(input[index]) else { throw failure("invalid number exponent") }
                skipDigits()
            }
            if index - start > maxStringLength { return .oversizedString(byteCount: index - start) }
            return .number(String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self))
        }

        private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        private mutating func skipDigits() {
            while index < input.count, isDigit(input[index]) { index += 1 }
        }

        /// Reads a string starting at its opening quote (RFC 8259 §7).
        private mutating func string() throws(Failure) -> JSONValue {
            index += 1
            let start = index
            // Fast path: no escapes, the bytes are the value.
            while index < input.count {
                let byte = input[index]
                if byte == UInt8(ascii: "\"") {
                    let end = index
                    index += 1
                    if end - start > maxStringLength { return .oversizedString(byteCount: end - start) }
                    return .string(String(decoding: UnsafeBufferPointer(rebasing: input[start..<end]), as: UTF8.self))
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 {
                    guard isLenient else { throw failure("raw control character in a string") }
                    note(.controlCharacter, index)
                }
                index += 1
            }
            guard index < input.count else {
                throw Failure(kind: .syntax, offset: start - 1, reason: "unterminated string")
            }
            // Slow path: decode escapes into `scratch`, stop keeping bytes past the limit.
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<index]))
            var count = scratch.count
            while index < input.count {
                let byte = input[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    if count > maxStringLength { return .oversizedString(byteCount: count) }
                    return .string(String(decoding: scratch, as: UTF8.self))
                }
                if byte < 0x20 {
                    guard isLenient else { throw failure("raw control character in a string") }
                    note(.controlCharacter, index)
                }
                if byte != UInt8(ascii: "\\") {
                    count += 1
                    if count <= maxStringLength { scratch.append(byte) }
                    index += 1
                    continue
                }
                let decoded = try escape()
                let width = UTF8.width(decoded)
                count += width
                if count <= maxStringLength { appendUTF8(decoded, width: width) }
            }
            throw Failure(kind: .syntax, offset: start - 1, reason: "unterminated string")
        }

        private mutating func appendUTF8(_ scalar: Unicode.Scalar, width: Int) {
            let value = scalar.value
            switch width {
            case 1:
                scratch.append(UInt8(value))
            case 2:
                scratch.append(UInt8(0xC0 | value >> 6))
                scratch.append(UInt8(0x80 | value & 0x3F))
            case 3:
                scratch.append(UInt8(0xE0 | value >> 12))
                scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
                scratch.append(UInt8(0x80 | value & 0x3F))
            default:
                scratch.append(UInt8(0xF0 | value >> 18))
                scratch.append(UInt8(0x80 | value >> 12 & 0x3F))
                scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
                scratch.append(UInt8(0x80 | value & 0x3F))
            }
        }

        /// Reads one escape sequence at a backslash; a lone surrogate becomes U+FFFD.
        private mutating func escape() throws(Failure) -> Unicode.Scalar {
            guard index + 1 < input.count else { throw failure("unterminated escape") }
            let letter = input[index + 1]
            index += 2
            switch letter {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let first = try hex4()
                if (0xD800...0xDBFF).contains(first), index + 1 < input.count, input[index] == UInt8(ascii: "\\"),
                    input[index + 1] == UInt8(ascii: "u")
                {
                    let mark = index
                    index += 2
                    let second = try hex4()
                    if (0xDC00...0xDFFF).contains(second) {
                        let scalar = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                        return Unicode.Scalar(scalar) ?? "\u{FFFD}"
                    }
                    index = mark  // not a pair: the second escape is read on its own
                }
                return Unicode.Scalar(first) ?? "\u{FFFD}"
            default:
                index -= 2
                throw failure("invalid escape sequence")
            }
        }

        private mutating func hex4() throws(Failure) -> UInt32 {
            guard input.count - index >= 4 else { throw failure("incomplete \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = input[index].hexDigitValue else { throw failure("invalid hex digit in a \\u escape") }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        private func failure(_ reason: String) -> Failure {
            Failure(kind: .syntax, offset: index, reason: reason)
        }
    }
}
