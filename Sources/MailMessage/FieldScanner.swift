/// A cursor over the bytes of a structured header value, with the lexical pieces RFC 5322 §3.2
/// and RFC 2045 §5.1 share: whitespace, comments, quoted strings. Every method moves forward or
/// stays put, and each loop is bounded by the input's length, so hostile values cannot hang it.
struct FieldScanner {
    let bytes: ArraySlice<UInt8>
    var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    var isAtEnd: Bool { index >= bytes.endIndex }
    var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    mutating func advance() { if index < bytes.endIndex { index += 1 } }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == .space || byte == .tab || byte == .carriageReturn || byte == .lineFeed
    }

    /// Skips whitespace and comments (CFWS, RFC 5322 §3.2.2). Returns the text of the last comment
    /// skipped, if any: an address written `jdoe@example.com (John Doe)` names its owner there.
    @discardableResult
    mutating func skipCFWS() -> [UInt8]? {
        var lastComment: [UInt8]? = nil
        while let byte = current {
            if FieldScanner.isWhitespace(byte) {
                index += 1
            } else if byte == UInt8(ascii: "(") {
                lastComment = comment()
            } else {
                break
            }
        }
        return lastComment
    }

    /// Reads a comment starting at `(`, nested comments included (their parentheses kept); an
    /// unterminated comment runs to the end. Returns its text without the outer parentheses.
    mutating func comment() -> [UInt8] {
        var text = [UInt8]()
        var depth = 0
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "("):
                if depth > 0 { text.append(byte) }
                depth += 1
            case UInt8(ascii: ")"):
                depth -= 1
                if depth == 0 { return text }
                text.append(byte)
            case .backslash:
                if let escaped = current {
                    text.append(escaped)
                    index += 1
                }
            default:
                text.append(byte)
            }
        }
        return text
    }

    /// Reads a quoted string starting at `"` (RFC 5322 §3.2.4): quoted pairs unescaped, folding
    /// removed. An unterminated string runs to the end.
    mutating func quotedString() -> [UInt8] {
        var text = [UInt8]()
        index += 1  // the opening quote
        while let byte = current {
            index += 1
            switch byte {
            case .quotationMark:
                return text
            case .backslash:
                if let escaped = current {
                    text.append(escaped)
                    index += 1
                }
            case .carriageReturn, .lineFeed:
                continue
            default:
                text.append(byte)
            }
        }
        return text
    }

    /// Reads bytes while `predicate` holds.
    mutating func run(while predicate: (UInt8) -> Bool) -> ArraySlice<UInt8> {
        let start = index
        while let byte = current, predicate(byte) { index += 1 }
        return bytes[start..<index]
    }
}
