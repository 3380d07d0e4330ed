internal import Glibc

/// A byte scan that finds start tags with too many attributes before libxml2 sees them.
///
/// libxml2 2.9 checks each new attribute of a start tag against all earlier ones (`htmlParseStartTag`),
/// so one tag with a hundred thousand distinct attributes takes minutes. This scan tokenizes the
/// way libxml2 2.9's HTML parser does, closely enough to over-count rather than under-count:
/// comments end at the first `-->` or `--!>` (`<!-->` and `<!--->` end at once); `<!…>`, `<?…>` and
/// end tags end at the next `>`; a start tag opens at `<` and an ASCII letter and ends at `>` or
/// `/>` outside quoted values; an attribute name is at most 100 bytes (libxml2 continues a longer
/// one as another attribute); `script` and `style` content runs to the next `</script` or `</style`.
/// The input must be the UTF-8 that libxml2 will parse (see `HTMLInput`).
enum StartTagScanner {
    /// The offset of the first start tag with more than `limit` attributes, or nil.
    static func firstTagExceeding(_ limit: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var index = 0
        while index < count {
            // Data: jump to the next '<'.
            guard let found = memchr(base + index, Int32(UInt8(ascii: "<")), count - index) else { return nil }
            let open = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            index = open + 1
            guard index < count else { return nil }
            let next = bytes[index]
            if next == UInt8(ascii: "!") {
                if index + 2 < count, bytes[index + 1] == UInt8(ascii: "-"), bytes[index + 2] == UInt8(ascii: "-") {
                    index = commentEnd(bytes, from: index + 3)
                } else {
                    index = after(UInt8(ascii: ">"), in: bytes, from: index)
                }
            } else if next == UInt8(ascii: "?") {
                index = after(UInt8(ascii: ">"), in: bytes, from: index)
            } else if next == UInt8(ascii: "/") {
                index += 1
                if index < count, isNameStart(bytes[index]) { index = after(UInt8(ascii: ">"), in: bytes, from: index) }
            } else if isLetter(next) {
                let tag = startTag(bytes, from: index)
                if tag.attributes > limit { return open }
                index = tag.end
                if let rawText = tag.rawText { index = rawTextEnd(bytes, from: index, name: rawText) }
            }
        }
        return nil
    }

    /// Reads a start tag from the byte after `<`: its end, attribute count, and raw-text name if any.
    private static func startTag(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (
        end: Int, attributes: Int, rawText: StaticString?
    ) {
        let count = bytes.count
        var index = start
        while index < count, isNameByte(bytes[index]), index - start < 100 { index += 1 }
        let rawText: StaticString? =
            matches(bytes, start, index, "script") ? "script" : matches(bytes, start, index, "style") ? "style" : nil
        var attributes = 0
        while true {
            while index < count, isBlank(bytes[index]) { index += 1 }
            guard index < count else { return (count, attributes, nil) }
            let byte = bytes[index]
            if byte == UInt8(ascii: ">") { return (index + 1, attributes, rawText) }
            if byte == UInt8(ascii: "/"), index + 1 < count, bytes[index + 1] == UInt8(ascii: ">") {
                return (index + 2, attributes, nil)
            }
            guard isNameStart(byte) else {
                // Not an attribute: libxml2 skips to the next blank or the end of the tag.
                while index < count, !isBlank(bytes[index]), bytes[index] != UInt8(ascii: ">"),
                    !(bytes[index] == UInt8(ascii: "/") && index + 1 < count && bytes[index + 1] == UInt8(ascii: ">"))
                {
                    index += 1
                }
                continue
            }
            attributes += 1
            let nameStart = index
            while index < count, isNameByte(bytes[index]), index - nameStart < 100 { index += 1 }
            var cursor = index
            while cursor < count, isBlank(bytes[cursor]) { cursor += 1 }
            guard cursor < count, bytes[cursor] == UInt8(ascii: "=") else { continue }
            cursor += 1
            while cursor < count, isBlank(bytes[cursor]) { cursor += 1 }
            guard cursor < count else { return (count, attributes, nil) }
            let quote = bytes[cursor]
            if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                index = after(quote, in: bytes, from: cursor + 1)
            } else {
                index = cursor
                while index < count, !isBlank(bytes[index]), bytes[index] != UInt8(ascii: ">") { index += 1 }
            }
        }
    }

    /// Whether `bytes[start..<end]` is `word` (lowercase ASCII), ignoring ASCII case.
    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ word: StaticString)
        -> Bool
    {
        guard end - start == word.utf8CodeUnitCount else { return false }
        for offset in 0..<(end - start) where bytes[start + offset] | 0x20 != word.utf8Start[offset] { return false }
        return true
    }

    /// The index after a comment whose content starts at `start` (after `<!--`).
    private static func commentEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let count = bytes.count
        if start < count, bytes[start] == UInt8(ascii: ">") { return start + 1 }
        if start + 1 < count, bytes[start] == UInt8(ascii: "-"), bytes[start + 1] == UInt8(ascii: ">") {
            return start + 2
        }
        var index = start
        while index < count {
            index = after(UInt8(ascii: ">"), in: bytes, from: index)
            let close = index - 1
            guard close < count, bytes[close] == UInt8(ascii: ">") else { return count }
            if close - 2 >= start, bytes[close - 1] == UInt8(ascii: "-"), bytes[close - 2] == UInt8(ascii: "-") {
                return index
            }
            if close - 3 >= start, bytes[close - 1] == UInt8(ascii: "!"), bytes[close - 2] == UInt8(ascii: "-"),
                bytes[close - 3] == UInt8(ascii: "-")
            {
                return index
            }
        }
        return count
    }

    /// The index after the next `</name` (ASCII case-insensitive) at or after `start`.
    private static func rawTextEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, name: StaticString) -> Int {
        let count = bytes.count
        let length = name.utf8CodeUnitCount
        var index = start
        while index < count {
            let open = after(UInt8(ascii: "<"), in: bytes, from: index) - 1
            guard open < count, bytes[open] == UInt8(ascii: "<") else { return count }
            index = open + 1
            guard index < count, bytes[index] == UInt8(ascii: "/"), count - (index + 1) >= length else { continue }
            // Like libxml2 in recovery mode, `</script` ends the raw text whatever follows it.
            if matches(bytes, index + 1, index + 1 + length, name) { return open }
        }
        return count
    }

    /// The index after the next `byte` at or after `start`, or `count` when there is none.
    private static func after(_ byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard start < bytes.count, let base = bytes.baseAddress,
            let found = memchr(base + start, Int32(byte), bytes.count - start)
        else { return bytes.count }
        return UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base + 1
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    /// libxml2's `htmlParseHTMLName`: a letter, `_`, `:` or `.` first, then also digits and `-`.
    private static func isNameStart(_ byte: UInt8) -> Bool {
        isLetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
    }
}
