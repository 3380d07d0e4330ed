/// Reads what can be read of a JSON-LD block that is not valid JSON (MARKUP.md "Finding the markup"):
/// every complete value in it, each repair noted with its offset, nothing invented.
///
/// Browsers never run a JSON-LD block, and other consumers read it with lenient parsers (extruct with
/// `json.loads(strict=False)` and a comment-stripping fallback). Real blocks hold several values one
/// after another, arrays with a comma missing or doubled between objects, text after the closing
/// bracket, comments and raw newlines in strings. The block, cleaned by `JSONLDRepair`, is split into
/// top-level values by bracket matching (strings told apart), each read with
/// `JSONParser.parseLeniently(_:)`:
///
/// - a value that reads is kept; the text between values (`;`, `,`, anything else) is dropped and
///   noted, text that is not a separator as dropped text;
/// - an array that does not read is split into its elements the same way, so one broken object
///   loses only itself; an object that does not read is dropped whole (its members cannot be told
///   apart without guessing), except that the items of its `@graph` array are read on their own;
/// - a value cut off at the end of the block (an unclosed bracket) is read as far as it is complete.
///
/// The work is linear in the block per level of arrays split, and at most `maxSplitDepth` levels are.
struct JSONLDRecovery {
    /// One thing taken or dropped, with its offset in the cleaned block.
    enum Repair: Hashable, Sendable {
        case cleaned(JSONLDRepair.Step)
        case lenient(JSONParser.Leniency)
        /// A `;` or `,` between two top-level values.
        case separator(offset: Int)
        /// A further value after the first at the top level of the block (or of a broken array).
        case anotherValue(offset: Int)
        /// Text that is not JSON between values, or after the last.
        case droppedText(Range<Int>)
    }

    struct Outcome {
        /// The values read, in block order.
        var values: [JSONValue] = []
        /// The repairs, the first `maxNoted` of them.
        private(set) var repairs: [Repair] = []
        /// Values that could not be read (whole objects, or the tail of a value cut off), the first
        /// `maxNoted`, and how many there were.
        private(set) var dropped: [Range<Int>] = []
        private(set) var droppedCount = 0
        /// Whether a value was dropped for nesting deeper than the parser's limit.
        var tooDeep = false

        mutating func note(_ repair: Repair) {
            if repairs.count < JSONLDRecovery.maxNoted { repairs.append(repair) }
        }

        mutating func drop(_ span: Range<Int>) {
            droppedCount += 1
            if dropped.count < JSONLDRecovery.maxNoted { dropped.append(span) }
        }
    }

    /// Levels of broken arrays split into their elements (a top-level array is level 1).
    static let maxSplitDepth = 8
    /// Repairs and dropped parts kept (a block of a million `;` must not make a million of them).
    static let maxNoted = 1000

    let parser: JSONParser
    let text: [UInt8]

    static func recover(_ cleaned: JSONLDRepair.Cleaned, parser: JSONParser) -> Outcome {
        let recovery = JSONLDRecovery(parser: parser, text: cleaned.text)
        var outcome = Outcome()
        for step in cleaned.steps { outcome.note(.cleaned(step)) }
        recovery.read(0..<cleaned.text.count, level: 0, into: &outcome)
        return outcome
    }

    // MARK: Splitting

    /// A piece of a range of the block at its top level.
    private enum Piece {
        /// A bracketed value from its opening bracket; `closed` is false when the block ends first.
        case value(Range<Int>, isArray: Bool, closed: Bool)
        /// A `;` or `,`.
        case separator(Int)
        /// A run of anything else that is not whitespace.
        case text(Range<Int>)
    }

    /// The pieces of `range`, in order, by one pass that matches brackets and skips strings.
    private func pieces(of range: Range<Int>) -> [Piece] {
        var pieces: [Piece] = []
        var index = range.lowerBound
        var textStart: Int?
        func endText(at end: Int) {
            if let start = textStart {
                pieces.append(.text(start..<end))
                textStart = nil
            }
        }
        while index < range.upperBound {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                endText(at: index)
                let (end, closed) = matchingEnd(from: index, limit: range.upperBound)
                pieces.append(.value(index..<end, isArray: byte == UInt8(ascii: "["), closed: closed))
                index = end
            case UInt8(ascii: ";"), UInt8(ascii: ","):
                endText(at: index)
                pieces.append(.separator(index))
                index += 1
            case 0x20, 0x09, 0x0A, 0x0D:
                endText(at: index)
                index += 1
            case UInt8(ascii: "\""):
                if textStart == nil { textStart = index }
                index = stringEnd(from: index, limit: range.upperBound)
            default:
                if textStart == nil { textStart = index }
                index += 1
            }
        }
        endText(at: index)
        return pieces
    }

    /// One past the bracket that closes the one at `start` (any kind closes any kind: the parser
    /// finds a mismatch), or `limit` and false when none does.
    private func matchingEnd(from start: Int, limit: Int) -> (Int, Bool) {
        var depth = 0
        var index = start
        while index < limit {
            switch text[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
                if depth == 0 { return (index, true) }
            case UInt8(ascii: "\""):
                index = stringEnd(from: index, limit: limit)
            default:
                index += 1
            }
        }
        return (limit, false)
    }

    /// One past the `"` that ends the string opening at `start`, or `limit`.
    private func stringEnd(from start: Int, limit: Int) -> Int {
        var index = start + 1
        while index < limit {
            switch text[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return limit
    }

    // MARK: Reading

    /// Reads the values of `range` into `outcome`; `level` counts the broken arrays split above it.
    /// Inside a split array, a comma missing, doubled or trailing between its elements is noted as the
    /// lenient parser would have.
    private func read(_ range: Range<Int>, level: Int, into outcome: inout Outcome) {
        var valuesHere = 0
        var separators: [Int] = []
        func noteCommas(beforeValueAt offset: Int?) {
            guard level > 0 else { return }
            if let offset, valuesHere > 0, separators.isEmpty {
                outcome.note(.lenient(JSONParser.Leniency(kind: .missingComma, offset: offset)))
            }
            let expected = offset != nil && valuesHere > 0 ? 1 : 0
            for comma in separators.dropFirst(expected) {
                let kind: JSONParser.Leniency.Kind = offset == nil ? .trailingComma : .extraComma
                outcome.note(.lenient(JSONParser.Leniency(kind: kind, offset: comma)))
            }
            separators = []
        }
        for piece in pieces(of: range) {
            switch piece {
            case .separator(let offset):
                if level == 0 { outcome.note(.separator(offset: offset)) } else { separators.append(offset) }
            case .text(let span):
                outcome.note(.droppedText(span))
            case .value(let span, let isArray, let closed):
                if valuesHere > 0, level == 0 { outcome.note(.anotherValue(offset: span.lowerBound)) }
                noteCommas(beforeValueAt: span.lowerBound)
                valuesHere += 1
                readValue(span, isArray: isArray, closed: closed, level: level, into: &outcome)
            }
        }
        noteCommas(beforeValueAt: nil)
    }

    private func readValue(_ span: Range<Int>, isArray: Bool, closed: Bool, level: Int, into outcome: inout Outcome) {
        let parsed = text.withUnsafeBufferPointer { buffer in
            parser.parseLeniently(UnsafeBufferPointer(rebasing: buffer[span]))
        }
        switch parsed {
        case .success(let (value, leniencies)):
            outcome.values.append(value)
            for var leniency in leniencies {
                leniency.offset += span.lowerBound
                outcome.note(.lenient(leniency))
            }
            return
        case .failure(let failure) where failure.kind == .tooDeep:
            outcome.tooDeep = true
            outcome.drop(span)
            return
        case .failure:
            break
        }
        guard level < Self.maxSplitDepth else {
            outcome.drop(span)
            return
        }
        if isArray {
            // A broken array: its elements one by one (between its brackets).
            let inner = (span.lowerBound + 1)..<(closed ? span.upperBound - 1 : span.upperBound)
            read(inner, level: level + 1, into: &outcome)
        } else if let graph = graphArray(in: span, closed: closed) {
            outcome.drop(span.lowerBound..<graph.lowerBound)
            let inner = (graph.lowerBound + 1)..<(graph.upperBound - 1)
            read(inner, level: level + 1, into: &outcome)
            if graph.upperBound < span.upperBound { outcome.drop(graph.upperBound..<span.upperBound) }
        } else {
            outcome.drop(span)
        }
    }

    /// The closed `[…]` value of a top-level `"@graph"` member of the object at `span`, if it has one.
    private func graphArray(in span: Range<Int>, closed: Bool) -> Range<Int>? {
        let key = Array("\"@graph\"".utf8)
        let limit = closed ? span.upperBound - 1 : span.upperBound
        var index = span.lowerBound + 1
        while index < limit {
            switch text[index] {
            case UInt8(ascii: "\""):
                let end = stringEnd(from: index, limit: limit)
                defer { index = end }
                guard end - index == key.count, text[index..<end].elementsEqual(key) else { continue }
                var next = end
                while next < limit, text[next].isASCIIWhitespace { next += 1 }
                guard next < limit, text[next] == UInt8(ascii: ":") else { continue }
                next += 1
                while next < limit, text[next].isASCIIWhitespace { next += 1 }
                guard next < limit, text[next] == UInt8(ascii: "[") else { continue }
                let (arrayEnd, arrayClosed) = matchingEnd(from: next, limit: limit)
                return arrayClosed ? next..<arrayEnd : nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                index = matchingEnd(from: index, limit: limit).0  // a member's value: not at the top level
            default:
                index += 1
            }
        }
        return nil
    }
}
