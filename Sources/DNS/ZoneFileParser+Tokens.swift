extension ZoneFileParser {
    /// Splits zone-file text into entries (RFC 1035 §5.1): `;` starts a comment outside quotes,
    /// `(` … `)` continue an entry over line ends, `"…"` is one token that may hold spaces and `;`.
    static func entries(_ text: [UInt8]) throws(ZoneFileError) -> [Entry] {
        var entries: [Entry] = []
        var current: Entry? = nil
        var line = 1
        var openedOnLine = 0
        var lineStartsBlank = false
        var index = 0
        let count = text.count

        func finish() {
            if let entry = current, !entry.tokens.isEmpty { entries.append(entry) }
            current = nil
        }
        func add(_ token: Token) {
            if current == nil { current = Entry(line: line, ownerOmitted: lineStartsBlank) }
            current?.tokens.append(token)
        }

        lineStartsBlank = count > 0 && (text[0] == UInt8(ascii: " ") || text[0] == UInt8(ascii: "\t"))
        while index < count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "\n"):
                if openedOnLine == 0 { finish() }
                line += 1
                index += 1
                lineStartsBlank =
                    index < count && (text[index] == UInt8(ascii: " ") || text[index] == UInt8(ascii: "\t"))
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: ";"):
                while index < count, text[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "("):
                guard openedOnLine == 0 else {
                    throw ZoneFileError(
                        code: .unbalancedParentheses, line: line,
                        reason: "'(' inside parentheses (line \(openedOnLine))")
                }
                if current == nil { current = Entry(line: line, ownerOmitted: lineStartsBlank) }
                openedOnLine = line
                index += 1
            case UInt8(ascii: ")"):
                guard openedOnLine != 0 else {
                    throw ZoneFileError(code: .unbalancedParentheses, line: line, reason: "')' without '('")
                }
                openedOnLine = 0
                index += 1
            case UInt8(ascii: "\""):
                let startLine = line
                index += 1
                var bytes: [UInt8] = []
                while true {
                    guard index < count, text[index] != UInt8(ascii: "\n") else {
                        throw ZoneFileError(
                            code: .unterminatedString, line: startLine,
                            reason: "a quoted string has no closing quote on its line")
                    }
                    let character = text[index]
                    if character == UInt8(ascii: "\"") {
                        index += 1
                        break
                    }
                    if character == UInt8(ascii: "\\") {
                        bytes.append(try escape(text, at: &index, line: line))
                    } else {
                        bytes.append(character)
                        index += 1
                    }
                }
                add(Token(bytes: bytes, quoted: true, escaped: false))
            default:
                var bytes: [UInt8] = []
                var escaped = false
                while index < count {
                    let character = text[index]
                    if character == UInt8(ascii: " ") || character == UInt8(ascii: "\t")
                        || character == UInt8(ascii: "\r") || character == UInt8(ascii: "\n")
                        || character == UInt8(ascii: ";") || character == UInt8(ascii: "(")
                        || character == UInt8(ascii: ")") || character == UInt8(ascii: "\"")
                    {
                        break
                    }
                    if character == UInt8(ascii: "\\") {
                        bytes.append(try escape(text, at: &index, line: line))
                        escaped = true
                    } else {
                        bytes.append(character)
                        index += 1
                    }
                }
                add(Token(bytes: bytes, quoted: false, escaped: escaped))
            }
        }
        guard openedOnLine == 0 else {
            throw ZoneFileError(
                code: .unbalancedParentheses, line: openedOnLine,
                reason: "'(' is never closed before the end of the file")
        }
        finish()
        return entries
    }

    /// Decodes `\X` (X itself) or `\DDD` (the byte with decimal value DDD ≤ 255) at `index`, RFC 1035 §5.1.
    private static func escape(_ text: [UInt8], at index: inout Int, line: Int) throws(ZoneFileError) -> UInt8 {
        let start = index + 1
        guard start < text.count, text[start] != UInt8(ascii: "\n") else {
            throw ZoneFileError(code: .invalidEscape, line: line, reason: "'\\' at the end of a line escapes nothing")
        }
        guard isDigit(text[start]) else {
            index = start + 1
            return text[start]
        }
        guard start + 2 < text.count, isDigit(text[start + 1]), isDigit(text[start + 2]) else {
            throw ZoneFileError(
                code: .invalidEscape, line: line, reason: "a '\\' followed by a digit needs three digits (\\DDD)")
        }
        let value =
            Int(text[start] - UInt8(ascii: "0")) * 100 + Int(text[start + 1] - UInt8(ascii: "0")) * 10
            + Int(text[start + 2] - UInt8(ascii: "0"))
        guard value <= 255 else {
            throw ZoneFileError(code: .invalidEscape, line: line, reason: "\\\(value) is more than 255")
        }
        index = start + 3
        return UInt8(value)
    }
}
