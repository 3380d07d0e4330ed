/// What is cleaned from a JSON-LD block that is not valid JSON before `JSONLDRecovery` reads it
/// (MARKUP.md "Finding the markup"): what senders wrap around or leave in their JSON, and nothing
/// that would need guessing or evaluating.
///
/// - The `<!-- -->` and `<![CDATA[ ]]>` wrappers (also as `//<![CDATA[`, `/*<![CDATA[*/`) and a byte
///   order mark at the ends, and JavaScript comments (`// …` to the end of the line, `/* … */`) outside
///   strings anywhere, become spaces: offsets in the cleaned text are offsets in the block.
/// - HTML entities are decoded only when the whole block is entity-escaped (it has `&quot;` and no raw
///   `"`): a template escaped it for HTML. Then offsets are those of the decoded text, and say so.
///
/// Everything else real senders get wrong (commas, raw control characters, several values, text after
/// the value) is taken while reading, by `JSONParser.parseLeniently(_:)` and `JSONLDRecovery`.
enum JSONLDRepair {
    /// One cleaning step, for the warning's message.
    enum Step: Hashable, Sendable {
        /// A comment or CDATA wrapper at one end (`<!--`, `<![CDATA[`, `-->`, …) or a byte order mark.
        case wrapper(offset: Int)
        /// A JavaScript comment outside strings.
        case comment(offset: Int)
        /// The whole block was entity-escaped and was decoded.
        case entities
    }

    /// The cleaned text and the steps taken, in order.
    struct Cleaned {
        var text: [UInt8]
        var steps: [Step]
        /// True when entities were decoded: offsets then refer to the decoded text.
        var decodedEntities: Bool { steps.contains(.entities) }
    }

    static func clean(_ input: [UInt8]) -> Cleaned {
        var steps: [Step] = []
        var text = input
        blankEnds(&text, steps: &steps)
        if isEntityEscaped(text) {
            text = decodeEntities(text)
            steps.append(.entities)
            blankEnds(&text, steps: &steps)
        }
        blankComments(&text, steps: &steps)
        return Cleaned(text: text, steps: steps)
    }

    // MARK: Wrappers

    private static let openers: [[UInt8]] = ["/*<![CDATA[*/", "//<![CDATA[", "<![CDATA[", "//<!--", "<!--"].map {
        Array($0.utf8)
    }
    private static let closers: [[UInt8]] = ["/*]]>*/", "//]]>", "]]>", "//-->", "-->"].map { Array($0.utf8) }

    /// Blanks wrappers at both ends, as often as they nest (a few times at most), and a byte order mark.
    private static func blankEnds(_ text: inout [UInt8], steps: inout [Step]) {
        var start = 0
        var end = text.count
        if text.starts(with: [0xEF, 0xBB, 0xBF]) {
            blank(&text, 0..<3)
            steps.append(.wrapper(offset: 0))
            start = 3
        }
        var changed = true
        while changed {
            changed = false
            while start < end, text[start].isASCIIWhitespace { start += 1 }
            while end > start, text[end - 1].isASCIIWhitespace { end -= 1 }
            for opener in openers where hasPrefix(text, start, end, opener) {
                blank(&text, start..<start + opener.count)
                steps.append(.wrapper(offset: start))
                start += opener.count
                changed = true
                break
            }
            for closer in closers where hasSuffix(text, start, end, closer) {
                blank(&text, end - closer.count..<end)
                steps.append(.wrapper(offset: end - closer.count))
                end -= closer.count
                changed = true
                break
            }
        }
    }

    private static func blank(_ text: inout [UInt8], _ range: Range<Int>) {
        for index in range { text[index] = 0x20 }
    }

    private static func hasPrefix(_ input: [UInt8], _ start: Int, _ end: Int, _ prefix: [UInt8]) -> Bool {
        end - start >= prefix.count && input[start..<start + prefix.count].elementsEqual(prefix)
    }

    private static func hasSuffix(_ input: [UInt8], _ start: Int, _ end: Int, _ suffix: [UInt8]) -> Bool {
        end - start >= suffix.count && input[end - suffix.count..<end].elementsEqual(suffix)
    }

    // MARK: Comments

    /// Blanks `// …` (to the end of the line) and `/* … */` outside strings; an unclosed `/*` runs to
    /// the end. Strings are told apart as JSON does (a `"` not escaped by a backslash ends one).
    private static func blankComments(_ text: inout [UInt8], steps: inout [Step]) {
        var inString = false
        var escaped = false
        var index = 0
        let count = text.count
        while index < count {
            let byte = text[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "/"), index + 1 < count,
                text[index + 1] == UInt8(ascii: "/") || text[index + 1] == UInt8(ascii: "*")
            {
                let start = index
                if text[index + 1] == UInt8(ascii: "/") {
                    while index < count, text[index] != 0x0A, text[index] != 0x0D { index += 1 }
                } else {
                    index += 2
                    while index < count, !(text[index - 1] == UInt8(ascii: "*") && text[index] == UInt8(ascii: "/")
                        && index - 1 > start + 1)
                    {
                        index += 1
                    }
                    index = min(index + 1, count)
                }
                blank(&text, start..<index)
                if steps.count < JSONLDRecovery.maxNoted { steps.append(.comment(offset: start)) }
                continue
            }
            index += 1
        }
    }

    // MARK: Entities

    /// Entity-escaped: the block has no raw double quote but has an escaped one.
    private static func isEntityEscaped(_ text: [UInt8]) -> Bool {
        guard !text.contains(UInt8(ascii: "\"")) else { return false }
        return contains(text, "&quot;") || contains(text, "&#34;") || contains(text, "&#x22;")
            || contains(text, "&#X22;")
    }

    private static func contains(_ text: [UInt8], _ needle: StaticString) -> Bool {
        let pattern = Array(UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount))
        guard text.count >= pattern.count else { return false }
        for start in 0...(text.count - pattern.count) where text[start] == pattern[0] {
            if text[start..<start + pattern.count].elementsEqual(pattern) { return true }
        }
        return false
    }

    private static let namedEntities: [String: Unicode.Scalar] = [
        "quot": "\"", "amp": "&", "lt": "<", "gt": ">", "apos": "'", "nbsp": "\u{A0}",
    ]

    /// Decodes `&quot; &amp; &lt; &gt; &apos; &nbsp;` and numeric references; leaves anything else as is.
    private static func decodeEntities(_ text: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            let byte = text[index]
            guard byte == UInt8(ascii: "&"),
                let semicolon = text[index..<min(text.count, index + 12)].firstIndex(of: UInt8(ascii: ";")),
                let scalar = entity(text[(index + 1)..<semicolon])
            else {
                output.append(byte)
                index += 1
                continue
            }
            output.append(contentsOf: String(Character(scalar)).utf8)
            index = semicolon + 1
        }
        return output
    }

    private static func entity(_ name: ArraySlice<UInt8>) -> Unicode.Scalar? {
        guard let first = name.first else { return nil }
        guard first == UInt8(ascii: "#") else { return namedEntities[String(decoding: name, as: UTF8.self)] }
        let digits = name.dropFirst()
        let value: UInt32?
        if let x = digits.first, x | 0x20 == UInt8(ascii: "x") {
            value = UInt32(String(decoding: digits.dropFirst(), as: UTF8.self), radix: 16)
        } else {
            value = UInt32(String(decoding: digits, as: UTF8.self), radix: 10)
        }
        return value.flatMap(Unicode.Scalar.init)
    }
}
