internal import Glibc

/// A byte scan that finds the `<script type="application/ld+json">` elements of a document without
/// libxml2, for the common document that carries only JSON-LD, or nothing at all: `MarkupExtractor`'s
/// fast path. It answers nil — read the document with libxml2 — wherever its reading and libxml2's
/// might differ, so that what it finds is exactly what `HTMLDocument` would give the JSON-LD reader.
///
/// It tokenizes the way libxml2 2.9's HTML parser does (`HTMLparser.c`: `htmlParseContentInternal`,
/// `htmlParseStartTag`, `htmlParseScript`, `htmlParseComment`), on the UTF-8 that `HTMLInput` made:
///
/// - Only `script` and `style` hold raw text, up to the first `</script` or `</style` in any case
///   (libxml2 in recovery mode); `title`, `textarea`, `noscript`, `template`, `xmp`, `plaintext` hold
///   elements, as in libxml2 (not as in the HTML standard). `<!--` starts a comment that ends at the first
///   `-->`; `<!DOCTYPE` a declaration that ends at `>`; any other `<!` is text, as in libxml2.
/// - Tag and attribute names are ASCII case-insensitive; values quoted either way or unquoted (up to a
///   blank or `>`) or missing; only the first `type` of a start tag counts. `type` is read as
///   `HTMLDocument.isJSONLD` reads it (parameters and whitespace).
///
/// It gives up (nil) on: any attribute whose name starts with `item` (Microdata); a start tag of a quoted or forwarded
/// part (`QuoteMarker`, with the same functions) and any text that could hold a "-----Original Message-----" line
/// (`ForwardSeparator`: two hyphens followed by a phrase, or by a character reference, or by a phrase's first letters
/// up to the end of the text run); an attribute value that `QuoteMarker` or the script test reads and that holds a
/// character reference; a processing instruction; a bogus tag, attribute or end tag (`</ x>`, `<a "b">`, `</a b>`), one
/// cut off at the end, a name of 100 bytes or more; a comment that starts `<!-->` or `<!--->`, ends `--!>` or does not
/// end; a raw-text element that does not end, ends in `</script` followed by anything but `>` (after blanks), starts
/// with `</` or `<` and a letter (where libxml2 reads a tag), or is written `<script/>`; a JSON-LD script holding
/// characters libxml2 drops (C0 controls but tab, line feed and carriage return; U+FFFE, U+FFFF); a start tag with more
/// than half the attribute limit; and nesting that could come near the element depth limit (an upper bound of libxml2's
/// depth: every start tag but the void ones and `/>` opens an element, an end tag closes only the innermost, when it
/// names it, plus the few elements libxml2 implies).
enum JSONLDScriptScanner {
    /// The byte ranges of the JSON-LD scripts' text in document order, or nil when the document must be
    /// read by libxml2.
    static func scripts(in bytes: UnsafeBufferPointer<UInt8>, configuration: MarkupExtractor.Configuration)
        -> [Range<Int>]?
    {
        var scanner = Scanner(bytes: bytes, configuration: configuration)
        return scanner.run() ? scanner.scripts : nil
    }

    /// The tokenizer: libxml2 2.9's reading of tags, comments, declarations and raw text, with the scan for
    /// scripts on top (`HTMLIndexScanner` reads with its helpers too).
    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let count: Int
        let maxAttributes: Int
        /// libxml2's depth may exceed `open.count` by the elements it implies (html, head or body, p).
        let maxOpen: Int
        var scripts: [Range<Int>] = []
        /// The elements open in the bound of libxml2's tree: name start and length.
        var open: [(start: Int, length: Int)] = []
        var separator = SeparatorWatch()
        /// A NUL-terminated copy of an attribute value or element name, for `QuoteMarker`.
        var scratch: [UInt8] = []
        var nameScratch: [UInt8] = []

        init(bytes: UnsafeBufferPointer<UInt8>, configuration: MarkupExtractor.Configuration) {
            self.bytes = bytes
            count = bytes.count
            maxAttributes = configuration.maxAttributesPerElement / 2
            maxOpen = configuration.maxElementDepth - 8
            open.reserveCapacity(64)
        }

        /// Scans the whole document; false when libxml2 must read it.
        mutating func run() -> Bool {
            guard let base = bytes.baseAddress else { return true }
            var index = 0
            while index < count {
                let next = memchr(base + index, Int32(UInt8(ascii: "<")), count - index)
                let open = next.map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) - base } ?? count
                guard separator.feed(bytes, index..<open) else { return false }
                guard open < count else { return true }
                guard open + 1 < count else { return separator.feed(bytes, open..<count) }
                let byte = bytes[open + 1]
                if byte == UInt8(ascii: "!") {
                    if open + 3 < count, bytes[open + 2] == UInt8(ascii: "-"), bytes[open + 3] == UInt8(ascii: "-") {
                        guard let end = commentEnd(from: open + 4) else { return false }
                        index = end
                    } else if matchesUpper(open + 2, "DOCTYPE") {
                        guard let end = doctypeEnd(from: open + 9) else { return false }
                        index = end
                    } else {
                        // libxml2 reads `<` as text and goes on (`<![endif]>`, `<![CDATA[`).
                        guard separator.feed(bytes, open..<open + 1) else { return false }
                        index = open + 1
                    }
                } else if byte == UInt8(ascii: "/") {
                    guard let end = endTag(from: open + 2) else { return false }
                    index = end
                } else if isLetter(byte) {
                    guard let end = startTag(from: open + 1) else { return false }
                    index = end
                } else if byte == UInt8(ascii: "?") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") {
                    return false  // a processing instruction, or a name libxml2 looks at before reading `<` as text
                } else {
                    guard separator.feed(bytes, open..<open + 1) else { return false }
                    index = open + 1
                }
            }
            return true
        }

        // MARK: Comments and declarations

        /// The index after a comment whose content starts at `start`, or nil (see the type's comment).
        func commentEnd(from start: Int) -> Int? {
            if start < count, bytes[start] == UInt8(ascii: ">") { return nil }
            if start + 1 < count, bytes[start] == UInt8(ascii: "-"), bytes[start + 1] == UInt8(ascii: ">") {
                return nil
            }
            var index = start
            while index + 2 < count {
                guard let found = find(UInt8(ascii: "-"), from: index) else { return nil }
                guard found + 2 < count else { return nil }
                if bytes[found + 1] == UInt8(ascii: "-") {
                    if bytes[found + 2] == UInt8(ascii: ">") { return found + 3 }
                    if bytes[found + 2] == UInt8(ascii: "!"), found + 3 < count, bytes[found + 3] == UInt8(ascii: ">") {
                        return nil
                    }
                }
                index = found + 1
            }
            return nil
        }

        /// The index after a `<!DOCTYPE …>` whose rest starts at `start`: the first `>`, when the quotes
        /// before it pair up.
        func doctypeEnd(from start: Int) -> Int? {
            guard let close = find(UInt8(ascii: ">"), from: start) else { return nil }
            var double = 0
            var single = 0
            for index in start..<close {
                if bytes[index] == UInt8(ascii: "\"") { double += 1 }
                if bytes[index] == UInt8(ascii: "'") { single += 1 }
                if bytes[index] == UInt8(ascii: "<") { return nil }
            }
            return double % 2 == 0 && single % 2 == 0 && (double == 0 || single == 0) ? close + 1 : nil
        }

        // MARK: Tags

        /// Reads an end tag whose name starts at `start` (after `</`): the index after it, or nil.
        mutating func endTag(from start: Int) -> Int? {
            guard start < count, isLetter(bytes[start]) else { return nil }
            let nameEnd = self.nameEnd(from: start)
            guard nameEnd - start < 100 else { return nil }
            var index = nameEnd
            while index < count, isBlank(bytes[index]) { index += 1 }
            guard index < count, bytes[index] == UInt8(ascii: ">") else { return nil }
            if let last = open.last, sameName(last.start, last.length, start, nameEnd - start) { open.removeLast() }
            return index + 1
        }

        /// Reads a start tag whose name starts at `start` (after `<`), and a raw-text element's content
        /// and end tag: the index after them, or nil.
        mutating func startTag(from start: Int) -> Int? {
            let nameEnd = self.nameEnd(from: start)
            let nameLength = nameEnd - start
            guard nameLength < 100 else { return nil }
            let isScript = equalsLower(start, nameLength, "script")
            let rawText = isScript || equalsLower(start, nameLength, "style")
            var type: Range<Int>?
            var attributes = 0
            var index = nameEnd
            var selfClosing = false
            while true {
                while index < count, isBlank(bytes[index]) { index += 1 }
                guard index < count else { return nil }
                let byte = bytes[index]
                if byte == UInt8(ascii: ">") {
                    index += 1
                    break
                }
                if byte == UInt8(ascii: "/"), index + 1 < count, bytes[index + 1] == UInt8(ascii: ">") {
                    index += 2
                    selfClosing = true
                    break
                }
                guard isNameStart(byte) else { return nil }
                attributes += 1
                guard attributes <= maxAttributes else { return nil }
                let attributeStart = index
                index = self.nameEnd(from: index)
                let attributeLength = index - attributeStart
                guard attributeLength < 100 else { return nil }
                var cursor = index
                while cursor < count, isBlank(bytes[cursor]) { cursor += 1 }
                var value: Range<Int>?
                if cursor < count, bytes[cursor] == UInt8(ascii: "=") {
                    cursor += 1
                    while cursor < count, isBlank(bytes[cursor]) { cursor += 1 }
                    guard cursor < count else { return nil }
                    let quote = bytes[cursor]
                    if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                        guard let close = find(quote, from: cursor + 1) else { return nil }
                        value = cursor + 1..<close
                        cursor = close + 1
                    } else {
                        let valueStart = cursor
                        while cursor < count, !isBlank(bytes[cursor]), bytes[cursor] != UInt8(ascii: ">") {
                            cursor += 1
                        }
                        value = valueStart..<cursor
                    }
                }
                index = cursor
                // What extraction reads from attributes: Microdata, the script's type, the quote markers.
                if attributeLength >= 4, matchesLower(attributeStart, "item") { return nil }
                if isScript, equalsLower(attributeStart, attributeLength, "type") {
                    guard type == nil, let value, !contains(UInt8(ascii: "&"), in: value) else { return nil }
                    type = value
                } else if let value,
                    !isQuoteMarkerFree(
                        element: start, nameLength, attribute: attributeStart, attributeLength, value: value)
                {
                    return nil
                }
            }
            if selfClosing {
                guard !rawText, !equalsLower(start, nameLength, "html"), !equalsLower(start, nameLength, "head"),
                    !equalsLower(start, nameLength, "body")
                else { return nil }
                return open.count < maxOpen ? index : nil
            }
            guard open.count < maxOpen else { return nil }
            if !isVoid(start, nameLength) { open.append((start, nameLength)) }
            guard rawText else { return index }
            // Raw text up to `</script` or `</style`, then that end tag.
            let content = index
            guard let (close, after) = rawTextEnd(from: content, script: isScript) else { return nil }
            guard separator.feed(bytes, content..<close) else { return nil }
            if isScript, let type, isJSONLD(type) {
                guard !hasDroppedCharacters(content..<close) else { return nil }
                scripts.append(content..<close)
            }
            open.removeLast()
            return after
        }

        /// The end of a `script`'s (`style`'s) raw text from `content`, just after its start tag, as
        /// `htmlParseScript` reads it: where `</script` (`</style`) starts, and the index after that end tag; nil
        /// where libxml2 would read a tag before the raw text, or the end tag is missing or malformed.
        func rawTextEnd(from content: Int, script: Bool) -> (close: Int, after: Int)? {
            let word: StaticString = script ? "script" : "style"
            if content + 1 < count, bytes[content] == UInt8(ascii: "<") {
                let next = bytes[content + 1]
                if next == UInt8(ascii: "/") || isLetter(next) || next == UInt8(ascii: "_") || next == UInt8(ascii: ":")
                {
                    guard next == UInt8(ascii: "/"), matchesLower(content + 2, word) else { return nil }
                }
            }
            var search = content
            while let found = find(UInt8(ascii: "<"), from: search) {
                if found + 1 < count, bytes[found + 1] == UInt8(ascii: "/"), matchesLower(found + 2, word) {
                    var after = found + 2 + word.utf8CodeUnitCount
                    while after < count, isBlank(bytes[after]) { after += 1 }
                    guard after < count, bytes[after] == UInt8(ascii: ">") else { return nil }
                    return (found, after + 1)
                }
                search = found + 1
            }
            return nil
        }

        /// Whether the attribute marks no quoted part (`QuoteMarker`, as `HTMLDocument`'s builder asks it).
        mutating func isQuoteMarkerFree(
            element: Int, _ elementLength: Int, attribute: Int, _ attributeLength: Int, value: Range<Int>
        ) -> Bool {
            // The attributes `QuoteMarker` reads, as libxml2 hands them over: lowercase and NUL-terminated.
            let name: StaticString
            switch attributeLength {
            case 2 where equalsLower(attribute, attributeLength, "id"): name = "id"
            case 4 where equalsLower(attribute, attributeLength, "type"): name = "type"
            case 5 where equalsLower(attribute, attributeLength, "class"): name = "class"
            case 5 where equalsLower(attribute, attributeLength, "style"): name = "style"
            case 11 where equalsLower(attribute, attributeLength, "data-marker"): name = "data-marker"
            default: return true
            }
            guard !contains(UInt8(ascii: "&"), in: value) else { return false }
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[value]))
            scratch.append(0)
            nameScratch.removeAll(keepingCapacity: true)
            for offset in 0..<elementLength { nameScratch.append(lower(bytes[element + offset])) }
            nameScratch.append(0)
            let marker = scratch.withUnsafeBufferPointer { value in
                nameScratch.withUnsafeBufferPointer { element -> QuoteMarker in
                    let value = value.baseAddress!
                    let element = element.baseAddress!
                    switch attributeLength {
                    case 2: return value[0] != 0 ? QuoteMarker.forID(value) : .none
                    case 4:
                        return QuoteMarker.host(element) == .blockquote ? QuoteMarker.forBlockquoteType(value) : .none
                    default: return QuoteMarker.forAttribute(name.utf8Start, value, of: element)
                    }
                }
            }
            return marker == .none
        }

        /// `HTMLDocument.isJSONLD` on the value at `range` (which holds no character reference).
        func isJSONLD(_ range: Range<Int>) -> Bool {
            var value = Array(UnsafeBufferPointer(rebasing: bytes[range]))
            value.append(0)
            return value.withUnsafeBufferPointer { HTMLDocument.isJSONLD($0.baseAddress!) }
        }

        /// Whether libxml2 would drop characters of the range (`IS_CHAR` false): C0 controls but tab,
        /// line feed and carriage return; U+FFFE and U+FFFF (the input is valid UTF-8 without NUL).
        func hasDroppedCharacters(_ range: Range<Int>) -> Bool {
            var index = range.lowerBound
            while index < range.upperBound {
                let byte = bytes[index]
                if byte < 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D { return true }
                if byte == 0xEF, index + 2 < range.upperBound, bytes[index + 1] == 0xBF,
                    bytes[index + 2] == 0xBE || bytes[index + 2] == 0xBF
                {
                    return true
                }
                index += 1
            }
            return false
        }

        // MARK: Bytes

        func find(_ byte: UInt8, from start: Int) -> Int? {
            guard start < count, let base = bytes.baseAddress,
                let found = memchr(base + start, Int32(byte), count - start)
            else { return nil }
            return UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
        }

        func contains(_ byte: UInt8, in range: Range<Int>) -> Bool {
            guard !range.isEmpty, let base = bytes.baseAddress else { return false }
            return memchr(base + range.lowerBound, Int32(byte), range.count) != nil
        }

        /// libxml2's `htmlParseHTMLName`: letters, digits, `:`, `-`, `_`, `.`.
        func nameEnd(from start: Int) -> Int {
            var index = start
            while index < count, isNameByte(bytes[index]) { index += 1 }
            return index
        }

        func sameName(_ first: Int, _ firstLength: Int, _ second: Int, _ secondLength: Int) -> Bool {
            guard firstLength == secondLength else { return false }
            for offset in 0..<firstLength where lower(bytes[first + offset]) != lower(bytes[second + offset]) {
                return false
            }
            return true
        }

        /// Whether the bytes at `start` begin with `word` (lowercase ASCII), in any case.
        func matchesLower(_ start: Int, _ word: StaticString) -> Bool {
            let length = word.utf8CodeUnitCount
            guard count - start >= length else { return false }
            for offset in 0..<length where lower(bytes[start + offset]) != word.utf8Start[offset] { return false }
            return true
        }

        func equalsLower(_ start: Int, _ length: Int, _ word: StaticString) -> Bool {
            length == word.utf8CodeUnitCount && matchesLower(start, word)
        }

        /// Whether the bytes at `start` begin with `word` (uppercase ASCII), in any case.
        func matchesUpper(_ start: Int, _ word: StaticString) -> Bool {
            let length = word.utf8CodeUnitCount
            guard count - start >= length else { return false }
            for offset in 0..<length where bytes[start + offset] & 0xDF != word.utf8Start[offset] { return false }
            return true
        }

        /// libxml2 2.9's empty elements (`html40ElementTable`), which it ends right after the start tag.
        func isVoid(_ start: Int, _ length: Int) -> Bool {
            switch length {
            case 2: return equalsLower(start, length, "br") || equalsLower(start, length, "hr")
            case 3: return equalsLower(start, length, "img") || equalsLower(start, length, "col")
            case 4:
                return equalsLower(start, length, "meta") || equalsLower(start, length, "link")
                    || equalsLower(start, length, "area") || equalsLower(start, length, "base")
            case 5:
                return equalsLower(start, length, "input") || equalsLower(start, length, "param")
                    || equalsLower(start, length, "frame")
            case 7: return equalsLower(start, length, "isindex")
            case 8: return equalsLower(start, length, "basefont")
            default: return false
            }
        }
    }

    /// Watches the document's text (as libxml2 reports it, with character references unread) for
    /// anything that could be a `ForwardSeparator`: two hyphens, then spaces, then a phrase. A character
    /// reference could be any character, so it counts as a hyphen, a space and a letter; characters
    /// libxml2 drops are passed over.
    struct SeparatorWatch {
        /// Hyphens (or references) seen in a row, and whether spaces followed two or more.
        private var hyphens = 0

        /// Feeds a run of text; false when a separator may be there.
        mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
            guard let base = bytes.baseAddress else { return true }
            var index = range.lowerBound
            let end = range.upperBound
            while index < end {
                if hyphens == 0 {
                    // Nothing pending: only a hyphen or a reference can start one.
                    var found = end
                    if let hyphen = memchr(base + index, Int32(UInt8(ascii: "-")), end - index) {
                        found = UnsafeRawPointer(hyphen).assumingMemoryBound(to: UInt8.self) - base
                    }
                    if let ampersand = memchr(base + index, Int32(UInt8(ascii: "&")), found - index) {
                        found = UnsafeRawPointer(ampersand).assumingMemoryBound(to: UInt8.self) - base
                    }
                    guard found < end else { return true }
                    index = found
                }
                let byte = bytes[index]
                if byte == UInt8(ascii: "-") {
                    hyphens += 1
                    index += 1
                } else if byte == UInt8(ascii: "&") {
                    if hyphens >= 2 { return false }
                    hyphens += 1
                    index += 1
                    // The reference's name or number is part of the one character it stands for.
                    while index < end, isReferenceByte(bytes[index]) { index += 1 }
                    if index < end, bytes[index] == UInt8(ascii: ";") { index += 1 }
                } else if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                    index += 1  // dropped by libxml2
                } else if byte == 0xEF, index + 2 < end, bytes[index + 1] == 0xBF,
                    bytes[index + 2] == 0xBE || bytes[index + 2] == 0xBF
                {
                    index += 3  // U+FFFE, U+FFFF: dropped by libxml2
                } else if hyphens >= 2 {
                    // After two hyphens: spaces (as `ForwardSeparator` skips them), then a phrase.
                    if byte == 0x20 || byte == 0x09 {
                        index += 1
                    } else if byte == 0xC2, index + 1 < end, bytes[index + 1] == 0xA0 {
                        index += 2
                    } else if isPhraseStart(byte) {
                        // "-- Madrid": no separator, when the text written there rules every phrase out.
                        guard Self.rulesOutPhrases(bytes, at: index, end: end) else { return false }
                        hyphens = 0
                        index += 1
                    } else {
                        hyphens = 0
                        index += 1
                    }
                } else {
                    hyphens = 0
                    index += 1
                }
            }
            return true
        }

        /// Whether the text at `start` is none of `ForwardSeparator.phrases` (compared as it compares them),
        /// judged on the bytes of this run alone: a run that ends, a character reference or a character
        /// libxml2 drops before a phrase is ruled out leaves the question open (false).
        private static func rulesOutPhrases(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, end: Int) -> Bool {
            for phrase in ForwardSeparator.phrases {
                var offset = 0
                while offset < phrase.count {
                    guard start + offset < end else { return false }
                    var byte = bytes[start + offset]
                    if byte == UInt8(ascii: "&") || byte == 0xEF
                        || (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D)
                    {
                        return false
                    }
                    if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
                    if byte != phrase[offset] { break }
                    offset += 1
                }
                if offset == phrase.count { return false }
            }
            return true
        }

        private func isReferenceByte(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "#") || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }

        /// The first letters of `ForwardSeparator.phrases`, in any case (ASCII letters are compared folded).
        private static let phraseStarts: [Bool] = {
            var table = [Bool](repeating: false, count: 256)
            for phrase in ForwardSeparator.phrases {
                guard let first = phrase.first else { continue }
                table[Int(first)] = true
                if first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z") { table[Int(first & 0xDF)] = true }
            }
            return table
        }()

        private func isPhraseStart(_ byte: UInt8) -> Bool { Self.phraseStarts[Int(byte)] }
    }
}

@inline(__always)
func lower(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
}

@inline(__always)
func isBlank(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}

@inline(__always)
func isLetter(_ byte: UInt8) -> Bool {
    (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
}

@inline(__always)
func isNameStart(_ byte: UInt8) -> Bool {
    isLetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
}

@inline(__always)
func isNameByte(_ byte: UInt8) -> Bool {
    isNameStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
}
