/// The one narrow repair tried on a JSON-LD block that is not valid JSON (MARKUP.md "Finding the
/// markup"): the mistakes real senders make, and nothing that would need guessing or evaluating.
///
/// In this order: the `<!-- -->` and `<![CDATA[ ]]>` wrappers (also as `//<![CDATA[`, `/*<![CDATA[*/`)
/// and a trailing `;` are stripped from the ends; HTML entities are decoded only when the whole block
/// is entity-escaped (it has `&quot;` and no raw `"`); raw control characters inside strings are
/// escaped (`\n`, `\t`, `\u001F`); commas before `}` or `]` are dropped.
enum JSONLDRepair {
    /// What the repair changed, for the warning's message.
    enum Step: String, Hashable, Sendable {
        case wrapper = "stripped a comment or CDATA wrapper"
        case semicolon = "dropped a trailing ';'"
        case entities = "decoded HTML entities"
        case controlCharacters = "escaped raw control characters in strings"
        case trailingCommas = "dropped trailing commas"
    }

    /// The repaired text and the steps applied, or nil when no step applies (repair cannot help).
    static func repair(_ input: [UInt8]) -> (text: [UInt8], steps: [Step])? {
        var steps: [Step] = []
        var text = stripEnds(input, steps: &steps)
        if isEntityEscaped(text) {
            text = decodeEntities(text)
            steps.append(.entities)
            text = stripEnds(text, steps: &steps)
        }
        text = fixStrings(text, steps: &steps)
        return steps.isEmpty ? nil : (text, steps)
    }

    // MARK: Wrappers

    private static let openers: [[UInt8]] = ["/*<![CDATA[*/", "//<![CDATA[", "<![CDATA[", "//<!--", "<!--"].map {
        Array($0.utf8)
    }
    private static let closers: [[UInt8]] = ["/*]]>*/", "//]]>", "]]>", "//-->", "-->"].map { Array($0.utf8) }

    /// Strips wrappers and a trailing `;` from both ends, as often as they nest (a few times at most).
    private static func stripEnds(_ input: [UInt8], steps: inout [Step]) -> [UInt8] {
        var start = 0
        var end = input.count
        if input.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        var changed = true
        while changed {
            changed = false
            while start < end, input[start].isASCIIWhitespace { start += 1 }
            while end > start, input[end - 1].isASCIIWhitespace { end -= 1 }
            for opener in openers where hasPrefix(input, start, end, opener) {
                start += opener.count
                changed = true
                note(.wrapper, &steps)
                break
            }
            for closer in closers where hasSuffix(input, start, end, closer) {
                end -= closer.count
                changed = true
                note(.wrapper, &steps)
                break
            }
            if end > start, input[end - 1] == UInt8(ascii: ";") {
                end -= 1
                changed = true
                note(.semicolon, &steps)
            }
        }
        return Array(input[start..<end])
    }

    private static func hasPrefix(_ input: [UInt8], _ start: Int, _ end: Int, _ prefix: [UInt8]) -> Bool {
        end - start >= prefix.count && input[start..<start + prefix.count].elementsEqual(prefix)
    }

    private static func hasSuffix(_ input: [UInt8], _ start: Int, _ end: Int, _ suffix: [UInt8]) -> Bool {
        end - start >= suffix.count && input[end - suffix.count..<end].elementsEqual(suffix)
    }

    private static func note(_ step: Step, _ steps: inout [Step]) {
        if !steps.contains(step) { steps.append(step) }
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

    // MARK: Strings and commas

    /// One pass that knows where strings are: escapes control characters inside them, and drops a
    /// comma outside them when the next non-whitespace byte closes an array or object.
    private static func fixStrings(_ text: [UInt8], steps: inout [Step]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count + 16)
        var inString = false
        var escaped = false
        var index = 0
        let hex = Array("0123456789ABCDEF".utf8)
        while index < text.count {
            let byte = text[index]
            index += 1
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                } else if byte < 0x20 {
                    note(.controlCharacters, &steps)
                    switch byte {
                    case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                    case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                    case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                    default:
                        output.append(contentsOf: Array("\\u00".utf8))
                        output.append(hex[Int(byte >> 4)])
                        output.append(hex[Int(byte & 0x0F)])
                    }
                    continue
                }
                output.append(byte)
                continue
            }
            if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: ",") {
                var next = index
                while next < text.count, text[next].isASCIIWhitespace { next += 1 }
                if next < text.count, text[next] == UInt8(ascii: "}") || text[next] == UInt8(ascii: "]") {
                    note(.trailingCommas, &steps)
                    continue
                }
            }
            output.append(byte)
        }
        return output
    }
}
