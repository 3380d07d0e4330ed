internal import CLibXML2
internal import Glibc

/// Builds `HTMLDocument`'s element index without libxml2, for the regular documents that carry Microdata (or
/// anything else `JSONLDScriptScanner` leaves to the parse): `MarkupExtractor`'s second fast path. It reads the
/// document with `JSONLDScriptScanner`'s tokenizer and replays the events libxml2 2.9's HTML parser would report
/// (`HTMLparser.c`: `htmlParseDocument`, `htmlParseContentInternal`, `htmlParseStartTag`, `htmlParseEndTag`,
/// `htmlParseCharData`, `htmlParseReference`, `htmlParseScript`) into the same `HTMLDocumentBuilder` the SAX
/// callbacks feed, at the input positions libxml2 would stand at, so the index — the misnesting, implied-end and
/// quote rules the builder applies included — is the one the parse gives. It models libxml2's stack of open
/// elements with its rules:
///
/// - a start tag first ends the open elements it closes (`htmlStartClose`, the innermost while it applies), then
///   implies `html`, `head` (before `script style meta link title base` at the top) or `body` (`htmlCheckImplied`);
///   the elements libxml2 2.9 knows as empty (`area base basefont br col frame hr img input isindex link meta
///   param`) and any `<x/>` end at once; `script` and `style` hold raw text up to `</script` or `</style`;
/// - an end tag ends the innermost open element of its name with those inside it, unless one of them ranks
///   above it (`htmlEndPriority`), and is otherwise ignored (reported to the builder as libxml2 reports it);
/// - text that is not blank (or any reference) outside any element, or directly in `html` or `head`, implies a
///   `p` (`htmlCheckParagraph`); leading blanks and those around the prologue's doctype and comments are not text;
/// - references: `&#…;` and `&#x…;` of a character libxml2 accepts, and the named references of HTML 4
///   (`htmlEntityLookup`) followed by `;`, are decoded in text and in attribute values; any other `&` is kept as
///   written, as libxml2 keeps it; a later duplicate of an attribute is dropped.
///
/// It gives up (nil) wherever its reading could differ: a C0 control character other than tab, line feed and
/// carriage return, U+FFFE or U+FFFF anywhere; a byte order mark; a processing instruction; whatever
/// `JSONLDScriptScanner`'s tokenizer gives up on (bogus or cut-off tags and attributes, names of 100 bytes or more,
/// odd comments, raw text that does not end as it expects); an element name longer than 16 bytes; a character
/// reference without `;` or of a character libxml2 refuses; a reference name followed by a non-ASCII byte; a
/// misplaced `html`, `head` or `body` start tag (which libxml2 discards); `<html/>`, `<head/>`, `<body/>`,
/// `<script/>`, `<style/>`; text of 990 bytes or more where a paragraph may be implied (libxml2 judges it in
/// chunks of 1,000), or an implied paragraph that ends an item's element; and nesting near the depth limit.
struct HTMLIndexScanner {
    /// The index of `bytes` (valid UTF-8 without NUL: `HTMLInput`), or nil when libxml2 must read it.
    static func document(in bytes: UnsafeBufferPointer<UInt8>, configuration: MarkupExtractor.Configuration)
        -> HTMLDocument?
    {
        guard !bytes.isEmpty, bytes.count < Int(Int32.max), isRegular(bytes) else { return nil }
        var scanner = HTMLIndexScanner(bytes: bytes, configuration: configuration)
        defer { scanner.release() }
        guard scanner.run() else { return nil }
        return HTMLDocument(finishing: &scanner.builder)
    }

    /// No character libxml2 drops or reads differently (C0 controls but tab, line feed and carriage return;
    /// U+FFFE, U+FFFF), and no byte order mark at the start (libxml2 would switch encodings on it).
    static func isRegular(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { return false }
        @inline(__always)
        func isRegular(at index: Int) -> Bool {
            let byte = base[index]
            if byte < 0x20 { return byte == 0x09 || byte == 0x0A || byte == 0x0D }
            return byte != 0xEF || index + 2 >= count || base[index + 1] != 0xBF
                || (base[index + 2] != 0xBE && base[index + 2] != 0xBF)
        }
        // Eight bytes at a time: only a word holding a byte below 0x20 or an 0xEF is looked at byte by byte.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        while index + 8 <= count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let below = (word &- ones &* 0x20) & ~word & highs
            let other = word ^ (ones &* 0xEF)
            let ef = (other &- ones) & ~other & highs
            var flagged = below | ef
            while flagged != 0 {  // the byte of each flag (a flag may be false, never missing)
                guard isRegular(at: index + flagged.trailingZeroBitCount >> 3) else { return false }
                flagged &= flagged &- 1
            }
            index += 8
        }
        while index < count {
            guard isRegular(at: index) else { return false }
            index += 1
        }
        return true
    }

    // MARK: State

    /// An element libxml2 has open.
    private struct Open {
        var tag: Int
        /// Interned, lowercase, NUL-terminated: the same name is the same pointer.
        var name: UnsafePointer<UInt8>
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let count: Int
    private var tokens: JSONLDScriptScanner.Scanner
    private let table = Tags.table
    fileprivate var builder: HTMLDocumentBuilder
    private let maxOpen: Int
    private let maxAttributes: Int
    /// libxml2's stack of open elements, innermost last.
    private var stack: [Open] = []
    /// libxml2's `ctxt->html`: 3 once a `head` was opened, 10 once a `body` was.
    private var htmlLevel = 1
    /// Names not among `Tags`' (custom elements, `o:p`), interned for this document.
    private var unknownNames: [Tags.Key: UnsafeMutablePointer<UInt8>] = [:]
    /// A start tag's attributes as libxml2 hands them over: lowercase names and decoded values, NUL-terminated.
    private var arena: [UInt8] = []
    private var attributeOffsets: [(name: Int, length: Int, value: Int)] = []
    private let pairs: UnsafeMutablePointer<UnsafePointer<UInt8>?>

    private init(bytes: UnsafeBufferPointer<UInt8>, configuration: MarkupExtractor.Configuration) {
        self.bytes = bytes
        count = bytes.count
        tokens = JSONLDScriptScanner.Scanner(bytes: bytes, configuration: configuration)
        builder = HTMLDocumentBuilder(scanning: bytes, maxElementDepth: configuration.maxElementDepth)
        builder.elements.reserveCapacity(bytes.count / 64)
        builder.text.reserveCapacity(bytes.count / 2)
        maxOpen = configuration.maxElementDepth - 4
        maxAttributes = configuration.maxAttributesPerElement
        pairs = .allocate(capacity: 2 * maxAttributes + 2)
        stack.reserveCapacity(64)
        arena.reserveCapacity(256)
    }

    private mutating func release() {
        pairs.deallocate()
        for (_, name) in unknownNames { name.deallocate() }
        unknownNames = [:]
    }

    // MARK: The document

    /// Reads the whole document into `builder`; false when libxml2 must read it.
    private mutating func run() -> Bool {
        guard var index = prologue() else { return false }
        while index < count {
            let open = tokens.find(UInt8(ascii: "<"), from: index) ?? count
            if open > index {
                guard text(index..<open) else { return false }
            }
            guard open < count else { break }
            let next = open + 1 < count ? bytes[open + 1] : 0
            if next == UInt8(ascii: "/") {
                guard let end = endTag(at: open) else { return false }
                index = end
            } else if isLetter(next) {
                guard let end = startTag(at: open) else { return false }
                index = end
            } else if next == UInt8(ascii: "!") {
                if tokens.matchesUpper(open + 2, "DOCTYPE") {
                    guard let end = tokens.doctypeEnd(from: open + 9) else { return false }
                    index = end
                } else if open + 3 < count, bytes[open + 2] == UInt8(ascii: "-"), bytes[open + 3] == UInt8(ascii: "-") {
                    guard let end = tokens.commentEnd(from: open + 4) else { return false }
                    index = end
                } else {
                    builder.text.append(UInt8(ascii: "<"))  // libxml2 reads it as text, with no implied paragraph
                    index = open + 1
                }
            } else if next == UInt8(ascii: "?") || next == UInt8(ascii: "_") || next == UInt8(ascii: ":") {
                return false
            } else {
                builder.text.append(UInt8(ascii: "<"))
                index = open + 1
            }
        }
        // The end of the input ends every open element (`htmlAutoCloseOnEnd`).
        while !stack.isEmpty { pop(at: count) }
        return true
    }

    /// `htmlParseDocument` before the content: blanks, comments, a doctype. The index after them, or nil.
    private mutating func prologue() -> Int? {
        var index = skipBlanks(from: 0)
        func comments(_ index: inout Int) -> Bool {
            while index + 1 < count, bytes[index] == UInt8(ascii: "<") {
                if bytes[index + 1] == UInt8(ascii: "?") { return false }
                guard index + 3 < count, bytes[index + 1] == UInt8(ascii: "!"), bytes[index + 2] == UInt8(ascii: "-"),
                    bytes[index + 3] == UInt8(ascii: "-")
                else { return true }
                guard let end = tokens.commentEnd(from: index + 4) else { return false }
                index = skipBlanks(from: end)
            }
            return true
        }
        guard comments(&index) else { return nil }
        if index + 1 < count, bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "!"),
            tokens.matchesUpper(index + 2, "DOCTYPE")
        {
            guard let end = tokens.doctypeEnd(from: index + 9) else { return nil }
            index = skipBlanks(from: end)
        }
        guard comments(&index) else { return nil }
        return index
    }

    private func skipBlanks(from start: Int) -> Int {
        var index = start
        while index < count, isBlank(bytes[index]) { index += 1 }
        return index
    }

    // MARK: Elements

    /// Opens an element (with `pairs`' attributes, or none); false at the depth limit's approach.
    private mutating func push(_ tag: Int, _ name: UnsafePointer<UInt8>, attributes: Bool) -> Bool {
        guard stack.count < maxOpen else { return false }
        builder.start(name, attributes ? pairs : nil)
        guard builder.stop == nil else { return false }
        stack.append(Open(tag: tag, name: name))
        if tag == Tags.head, htmlLevel < 3 { htmlLevel = 3 }
        if tag == Tags.body, htmlLevel < 10 { htmlLevel = 10 }
        return true
    }

    /// Ends the innermost open element, libxml2's cursor standing at `cursor`.
    private mutating func pop(at cursor: Int) {
        let open = stack.removeLast()
        builder.scanCursor = cursor
        builder.libxml2Ended(open.name)
    }

    /// `htmlAutoClose`: ends the open elements a start tag of `tag` closes, innermost first.
    private mutating func autoClose(by tag: Int, at cursor: Int) {
        while let top = stack.last, table.closes(old: top.tag, new: tag) { pop(at: cursor) }
    }

    /// `htmlCheckImplied`: opens the `html`, `head` or `body` a start tag of `tag` implies.
    private mutating func implyElements(for tag: Int) -> Bool {
        guard tag != Tags.html else { return true }
        if stack.isEmpty {
            guard push(Tags.html, table.pointers[Tags.html], attributes: false) else { return false }
        }
        if tag == Tags.body || tag == Tags.head { return true }
        if stack.count <= 1, Tags.isHeadContent(tag) {
            guard htmlLevel < 3 else { return true }
            return push(Tags.head, table.pointers[Tags.head], attributes: false)
        }
        guard tag != Tags.noframes, tag != Tags.frame, tag != Tags.frameset, htmlLevel < 10 else { return true }
        if stack.contains(where: { $0.tag == Tags.body || $0.tag == Tags.head }) { return true }
        return push(Tags.body, table.pointers[Tags.body], attributes: false)
    }

    /// `htmlCheckParagraph`, for text at `cursor`: outside any element, or in `html` or `head`, text implies a `p`.
    private mutating func implyParagraph(at cursor: Int) -> Bool {
        if let top = stack.last, top.tag != Tags.html, top.tag != Tags.head { return true }
        while let top = stack.last, table.closes(old: top.tag, new: Tags.p) {
            // Where libxml2's cursor stands here depends on how it chunked the text: an item ended here is left to it.
            guard let index = builder.stack.last else { return false }
            let flags = builder.elements[index].flags
            guard !flags.contains(.itemscope), !flags.contains(.itemprop) else { return false }
            pop(at: cursor)
        }
        guard implyElements(for: Tags.p) else { return false }
        return push(Tags.p, table.pointers[Tags.p], attributes: false)
    }

    /// Reads a start tag at `open` (its `<`) and, for `script` and `style`, the raw text and end tag after it.
    /// The index after them, or nil.
    private mutating func startTag(at open: Int) -> Int? {
        let nameStart = open + 1
        let nameEnd = tokens.nameEnd(from: nameStart)
        guard let (tag, name) = intern(nameStart, nameEnd - nameStart) else { return nil }
        autoClose(by: tag, at: open)
        guard implyElements(for: tag) else { return nil }
        // libxml2 discards a misplaced html, head or body start tag (and then the matching end tag).
        if tag == Tags.html, !stack.isEmpty { return nil }
        if tag == Tags.head, stack.count != 1 { return nil }
        if tag == Tags.body, stack.contains(where: { $0.tag == Tags.body }) { return nil }
        guard let (end, selfClosing, attributeCount) = attributes(from: nameEnd, element: tag) else { return nil }
        if selfClosing, tag == Tags.html || tag == Tags.head || tag == Tags.body || Tags.isRawText(tag) {
            return nil
        }
        let pushed = arena.withUnsafeBufferPointer { arena -> Bool in
            let base = arena.baseAddress!
            for (number, offsets) in attributeOffsets.enumerated() {
                pairs[2 * number] = UnsafePointer(base + offsets.name)
                pairs[2 * number + 1] = offsets.value < 0 ? nil : UnsafePointer(base + offsets.value)
            }
            pairs[2 * attributeCount] = nil
            pairs[2 * attributeCount + 1] = nil
            return push(tag, name, attributes: attributeCount > 0)
        }
        guard pushed else { return nil }
        if selfClosing || table.isEmpty(tag) {
            pop(at: end)
            return end
        }
        guard Tags.isRawText(tag) else { return end }
        return rawText(from: end, length: nameEnd - nameStart)
    }

    /// Reads a start tag's attributes from `start` (after its name) into `arena` and `attributeOffsets`, as
    /// `htmlParseStartTag` reads them: the index after the tag, whether it ended `/>`, how many were kept.
    private mutating func attributes(from start: Int, element: Int) -> (Int, Bool, Int)? {
        // Emptied only now and then: `removeAll` per tag costs more than the bytes it frees.
        if arena.count > 1 << 16 { arena.removeAll(keepingCapacity: true) }
        if !attributeOffsets.isEmpty { attributeOffsets.removeAll(keepingCapacity: true) }
        var attributesRead = 0
        var index = skipBlanks(from: start)
        while true {
            guard index < count else { return nil }
            let byte = bytes[index]
            if byte == UInt8(ascii: ">") { return (index + 1, false, attributeOffsets.count) }
            if byte == UInt8(ascii: "/"), index + 1 < count, bytes[index + 1] == UInt8(ascii: ">") {
                return (index + 2, true, attributeOffsets.count)
            }
            guard isNameStart(byte) else { return nil }
            // More than the limit (`StartTagScanner` counts every one, duplicates too) is left to the parse's path.
            attributesRead += 1
            guard attributesRead <= maxAttributes else { return nil }
            let nameStart = index
            let nameEnd = tokens.nameEnd(from: index)
            guard nameEnd - nameStart < 100 else { return nil }
            let arenaStart = arena.count
            arena.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd]))
            arena.append(0)
            for offset in arenaStart..<arenaStart + (nameEnd - nameStart) where arena[offset] &- 0x41 < 26 {
                arena[offset] |= 0x20  // libxml2 lowercases names
            }
            var cursor = skipBlanks(from: nameEnd)
            var value = -1
            if cursor < count, bytes[cursor] == UInt8(ascii: "=") {
                cursor = skipBlanks(from: cursor + 1)
                guard cursor < count else { return nil }
                let quote = bytes[cursor]
                let valueRange: Range<Int>
                if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                    guard let close = tokens.find(quote, from: cursor + 1) else { return nil }
                    valueRange = cursor + 1..<close
                    cursor = close + 1
                } else {
                    let valueStart = cursor
                    while cursor < count, !isBlank(bytes[cursor]), bytes[cursor] != UInt8(ascii: ">") { cursor += 1 }
                    guard cursor < count else { return nil }
                    valueRange = valueStart..<cursor
                }
                value = arena.count
                guard Self.decode(bytes, valueRange, into: &arena) else { return nil }
                arena.append(0)
            }
            index = skipBlanks(from: cursor)
            // libxml2 keeps the first of two attributes of one name.
            let nameLength = nameEnd - nameStart
            let duplicate = attributeOffsets.contains { earlier in
                earlier.length == nameLength
                    && (0..<nameLength).allSatisfy { arena[earlier.name + $0] == arena[arenaStart + $0] }
            }
            if !duplicate {
                attributeOffsets.append((arenaStart, nameLength, value))
            }
        }
    }

    /// The raw text of a `script` or `style` from `start` up to `</script` (`</style`), as `htmlParseScript` reads
    /// it, and that end tag: the index after it, or nil.
    private mutating func rawText(from start: Int, length: Int) -> Int? {
        guard let (close, after) = tokens.rawTextEnd(from: start, script: length == 6) else { return nil }
        builder.text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<close]))
        pop(at: after)
        return after
    }

    /// Reads an end tag at `open` (its `<`): the index after it, or nil.
    private mutating func endTag(at open: Int) -> Int? {
        let nameStart = open + 2
        guard nameStart < count, isLetter(bytes[nameStart]) else { return nil }
        let nameEnd = tokens.nameEnd(from: nameStart)
        let end = skipBlanks(from: nameEnd)
        guard end < count, bytes[end] == UInt8(ascii: ">") else { return nil }
        guard let (tag, name) = intern(nameStart, nameEnd - nameStart) else { return nil }
        let after = end + 1
        guard let position = stack.lastIndex(where: { $0.name == name }) else {
            builder.scanCursor = after
            builder.unmatchedEndTag(name)  // libxml2's "Unexpected end tag"
            return after
        }
        // A misplaced end tag may end only elements of lower or equal priority (`htmlAutoCloseOnClose`).
        let priority = table.priority(tag)
        for inner in stack[(position + 1)...] where table.priority(inner.tag) > priority { return after }
        while stack.count > position { pop(at: after) }
        return after
    }

    // MARK: Text

    /// A run of text up to a `<` or the end: decoded into the builder's text, a paragraph implied where libxml2
    /// implies one. False when libxml2 must read it.
    private mutating func text(_ range: Range<Int>) -> Bool {
        if stack.isEmpty || stack.last!.tag == Tags.html || stack.last!.tag == Tags.head {
            // libxml2 judges the text in chunks of 1,000 bytes: a blank one not followed by `<` implies a
            // paragraph too.
            guard range.count < 990 else { return false }
            let blank =
                !tokens.contains(UInt8(ascii: "&"), in: range)
                && (range.lowerBound..<range.upperBound).allSatisfy { isBlank(bytes[$0]) }
            if !blank {
                guard implyParagraph(at: range.upperBound) else { return false }
            }
        }
        return Self.decode(bytes, range, into: &builder.text)
    }

    /// Appends the bytes of `range` to `output` with their character references decoded as libxml2 decodes
    /// them; false at one it might read otherwise.
    /// (Static, so that appending to the scanner's own arrays does not copy them.)
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, into output: inout [UInt8])
        -> Bool
    {
        guard let base = bytes.baseAddress else { return true }
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            guard let found = memchr(base + index, Int32(UInt8(ascii: "&")), end - index) else {
                output.append(contentsOf: UnsafeBufferPointer(start: base + index, count: end - index))
                return true
            }
            let ampersand = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            if ampersand > index {
                output.append(contentsOf: UnsafeBufferPointer(start: base + index, count: ampersand - index))
            }
            guard let next = reference(bytes, at: ampersand, end: end, into: &output) else { return false }
            index = next
        }
        return true
    }

    /// The reference at `start` (its `&`): appends what libxml2 makes of it and returns the index after what it
    /// read, or nil.
    private static func reference(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, end: Int, into output: inout [UInt8]
    )
        -> Int?
    {
        var index = start + 1
        if index < end, bytes[index] == UInt8(ascii: "#") {
            index += 1
            var value: UInt32 = 0
            let hex = index < end && (bytes[index] | 0x20) == UInt8(ascii: "x")
            if hex { index += 1 }
            let digitsStart = index
            while index < end {
                let byte = bytes[index]
                let digit: UInt32
                if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                    digit = UInt32(byte - UInt8(ascii: "0"))
                } else if hex, (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "f") {
                    digit = UInt32((byte | 0x20) - UInt8(ascii: "a") + 10)
                } else {
                    break
                }
                if value < 0x110000 { value = value * (hex ? 16 : 10) + digit }
                index += 1
            }
            guard index > digitsStart, index < end, bytes[index] == UInt8(ascii: ";"), Self.isXMLChar(value) else {
                return nil
            }
            Self.appendUTF8(value, to: &output)
            return index + 1
        }
        // A name (`htmlParseName`): what follows it decides; anything but a known name and `;` is kept as written.
        guard index < end else {
            output.append(UInt8(ascii: "&"))
            return index
        }
        let first = bytes[index]
        guard first < 0x80 else { return nil }
        guard isLetter(first) || first == UInt8(ascii: "_") || first == UInt8(ascii: ":") else {
            output.append(UInt8(ascii: "&"))
            return index
        }
        let nameStart = index
        while index < end, isNameByte(bytes[index]) { index += 1 }
        if index < end, bytes[index] >= 0x80 { return nil }
        if index < end, bytes[index] == UInt8(ascii: ";"), index - nameStart < 32,
            let value = entity(bytes, nameStart..<index)
        {
            Self.appendUTF8(value, to: &output)
            return index + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        return index
    }

    /// The code point of the HTML 4 named reference (libxml2's own table), or nil.
    private static func entity(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt32? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count + 1) { name in
            for (offset, index) in range.enumerated() { name[offset] = bytes[index] }
            name[range.count] = 0
            guard let entry = htmlEntityLookup(name.baseAddress!), entry.pointee.value > 0 else { return nil }
            return UInt32(entry.pointee.value)
        }
    }

    /// libxml2's `IS_CHAR`.
    private static func isXMLChar(_ value: UInt32) -> Bool {
        value == 0x09 || value == 0x0A || value == 0x0D || (value >= 0x20 && value <= 0xD7FF)
            || (value >= 0xE000 && value <= 0xFFFD) || (value >= 0x10000 && value <= 0x10FFFF)
    }

    private static func appendUTF8(_ value: UInt32, to output: inout [UInt8]) {
        if value < 0x80 {
            output.append(UInt8(value))
        } else if value < 0x800 {
            output.append(UInt8(0xC0 | (value >> 6)))
            output.append(UInt8(0x80 | (value & 0x3F)))
        } else if value < 0x10000 {
            output.append(UInt8(0xE0 | (value >> 12)))
            output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (value & 0x3F)))
        } else {
            output.append(UInt8(0xF0 | (value >> 18)))
            output.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
            output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (value & 0x3F)))
        }
    }

    // MARK: Names

    /// The tag and interned name of the element name at `start` (lowercased as libxml2 does); nil for a name of
    /// more than 16 bytes.
    private mutating func intern(_ start: Int, _ length: Int) -> (Int, UnsafePointer<UInt8>)? {
        guard length > 0, length <= 16 else { return nil }
        var key = Tags.Key(low: 0, high: 0, length: length)
        for offset in 0..<length {
            let byte = UInt64(lower(bytes[start + offset]))
            if offset < 8 { key.low |= byte << (8 * offset) } else { key.high |= byte << (8 * (offset - 8)) }
        }
        let tag = table.tag(key)
        if tag >= 0 { return (tag, table.pointers[tag]) }
        if let name = unknownNames[key] { return (Tags.unknown, UnsafePointer(name)) }
        let name = UnsafeMutablePointer<UInt8>.allocate(capacity: length + 1)
        for offset in 0..<length { name[offset] = lower(bytes[start + offset]) }
        name[length] = 0
        unknownNames[key] = name
        return (Tags.unknown, UnsafePointer(name))
    }
}

/// The element names libxml2 2.9's HTML parser has rules for, numbered, with those rules.
private enum Tags {
    struct Key: Hashable {
        var low: UInt64
        var high: UInt64
        var length: Int
    }

    static let unknown = -1

    /// `htmlStartClose` (HTMLparser.c, 2.9.14): "old new" — a start tag of `new` ends an open `old`.
    private static let startClose: [(String, String)] = {
        let pairs =
            "a a,a fieldset,a table,a td,a th,address dd,address dl,address dt,address form,address li,address ul,"
            + "b center,b p,b td,b th,big p,caption col,caption colgroup,caption tbody,caption tfoot,caption thead,"
            + "caption tr,col col,col colgroup,col tbody,col tfoot,col thead,col tr,colgroup colgroup,colgroup tbody,"
            + "colgroup tfoot,colgroup thead,colgroup tr,dd dt,dir dd,dir dl,dir dt,dir form,dir ul,dl form,dl li,"
            + "dt dd,dt dl,font center,font td,font th,form form,h1 fieldset,h1 form,h1 li,h1 p,h1 table,h2 fieldset,"
            + "h2 form,h2 li,h2 p,h2 table,h3 fieldset,h3 form,h3 li,h3 p,h3 table,h4 fieldset,h4 form,h4 li,h4 p,"
            + "h4 table,h5 fieldset,h5 form,h5 li,h5 p,h5 table,h6 fieldset,h6 form,h6 li,h6 p,h6 table,head a,"
            + "head abbr,head acronym,head address,head b,head bdo,head big,head blockquote,head body,head br,"
            + "head center,head cite,head code,head dd,head dfn,head dir,head div,head dl,head dt,head em,"
            + "head fieldset,head font,head form,head frameset,head h1,head h2,head h3,head h4,head h5,head h6,"
            + "head hr,head i,head iframe,head img,head kbd,head li,head listing,head map,head menu,head ol,head p,"
            + "head pre,head q,head s,head samp,head small,head span,head strike,head strong,head sub,head sup,"
            + "head table,head tt,head u,head ul,head var,head xmp,hr form,i center,i p,i td,i th,legend fieldset,"
            + "li li,link body,link frameset,listing dd,listing dl,listing dt,listing fieldset,listing form,"
            + "listing li,listing table,listing ul,menu dd,menu dl,menu dt,menu form,menu ul,ol form,ol ul,"
            + "option optgroup,option option,p address,p blockquote,p body,p caption,p center,p col,p colgroup,p dd,"
            + "p dir,p div,p dl,p dt,p fieldset,p form,p frameset,p h1,p h2,p h3,p h4,p h5,p h6,p head,p hr,p li,"
            + "p listing,p menu,p ol,p p,p pre,p table,p tbody,p td,p tfoot,p th,p title,p tr,p ul,p xmp,pre dd,"
            + "pre dl,pre dt,pre fieldset,pre form,pre li,pre table,pre ul,s p,script noscript,small p,span td,"
            + "span th,strike p,style body,style frameset,tbody tbody,tbody tfoot,td tbody,td td,td tfoot,td th,"
            + "td tr,tfoot tbody,th tbody,th td,th tfoot,th th,th tr,thead tbody,thead tfoot,title body,"
            + "title frameset,tr tbody,tr tfoot,tr tr,tt p,u p,u td,u th,ul address,ul form,ul menu,ul ol,ul pre,"
            + "xmp dd,xmp dl,xmp dt,xmp fieldset,xmp form,xmp li,xmp table,xmp ul"
        return pairs.split(separator: ",").map {
            let parts = $0.split(separator: " ")
            return (String(parts[0]), String(parts[1]))
        }
    }()

    /// `htmlEndPriority`; every other element 100.
    private static let endPriority: [String: Int] = [
        "div": 150, "td": 160, "th": 160, "tr": 170, "thead": 180, "tbody": 180, "tfoot": 180, "table": 190,
        "head": 200, "body": 200, "html": 220,
    ]

    /// The elements `html40ElementTable` marks empty.
    private static let emptyNames: Set<String> = [
        "area", "base", "basefont", "br", "col", "frame", "hr", "img", "input", "isindex", "link", "meta", "param",
    ]

    /// The names the scanner asks about by number come first, in this order (`html` is 0, …, `base` 12).
    private static let leading = [
        "html", "head", "body", "p", "script", "style", "noframes", "frame", "frameset", "meta", "link", "title",
        "base",
    ]
    static let html = 0, head = 1, body = 2, p = 3, script = 4, style = 5, noframes = 6, frame = 7, frameset = 8
    /// `script style meta link title base`: the elements before which libxml2 implies a `head`.
    static func isHeadContent(_ tag: Int) -> Bool { tag == 4 || tag == 5 || (tag >= 9 && tag <= 12) }
    static func isRawText(_ tag: Int) -> Bool { tag == script || tag == style }

    static let names: [String] = {
        var names = Set(startClose.flatMap { [$0.0, $0.1] })
        names.formUnion(endPriority.keys)
        names.formUnion(emptyNames)
        names.subtract(leading)
        return leading + names.sorted()
    }()

    static func key(_ name: String) -> Key {
        var key = Key(low: 0, high: 0, length: name.utf8.count)
        for (offset, byte) in name.utf8.enumerated() {
            if offset < 8 {
                key.low |= UInt64(byte) << (8 * offset)
            } else {
                key.high |= UInt64(byte) << (8 * (offset - 8))
            }
        }
        return key
    }

    /// The rules as arrays by tag number, and the names in an open-addressing table: read once per document
    /// (a static's lazy initialization is checked at each use).
    final class Table: @unchecked Sendable {  // immutable after init; the pointers are never written
        let count: Int
        let closes: [Bool]
        let priorities: [Int]
        let empties: [Bool]
        /// Each name NUL-terminated, for the builder; allocated once for the process.
        let pointers: [UnsafePointer<UInt8>]
        /// `slotMask + 1` slots: a key and its tag, or tag -1 for an empty slot.
        let slots: [(key: Key, tag: Int)]
        let slotMask: Int

        init() {
            let names = Tags.names
            count = names.count
            var closes = [Bool](repeating: false, count: count * count)
            for (old, new) in startClose {
                closes[names.firstIndex(of: old)! * count + names.firstIndex(of: new)!] = true
            }
            self.closes = closes
            priorities = names.map { endPriority[$0] ?? 100 }
            empties = names.map { emptyNames.contains($0) }
            pointers = names.map { name in
                let bytes = Array(name.utf8) + [0]
                let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count)
                pointer.initialize(from: bytes, count: bytes.count)
                return UnsafePointer(pointer)
            }
            slotMask = 1023
            var slots = [(key: Key, tag: Int)](repeating: (Key(low: 0, high: 0, length: 0), -1), count: slotMask + 1)
            for (tag, name) in names.enumerated() {
                let key = Tags.key(name)
                var slot = Table.hash(key) & slotMask
                while slots[slot].tag >= 0 { slot = (slot + 1) & slotMask }
                slots[slot] = (key, tag)
            }
            self.slots = slots
        }

        @inline(__always)
        static func hash(_ key: Key) -> Int {
            let mixed = (key.low &* 0x9E37_79B9_7F4A_7C15) ^ (key.high &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(key.length)
            return Int(truncatingIfNeeded: mixed >> 40)
        }

        /// The tag of `key`, or `Tags.unknown`.
        @inline(__always)
        func tag(_ key: Key) -> Int {
            var slot = Table.hash(key) & slotMask
            while true {
                let entry = slots[slot]
                if entry.tag < 0 { return Tags.unknown }
                if entry.key == key { return entry.tag }
                slot = (slot + 1) & slotMask
            }
        }

        /// Whether a start tag of `new` ends an open `old` (`htmlCheckAutoClose`).
        @inline(__always)
        func closes(old: Int, new: Int) -> Bool { old >= 0 && new >= 0 && closes[old * count + new] }
        @inline(__always)
        func priority(_ tag: Int) -> Int { tag >= 0 ? priorities[tag] : 100 }
        @inline(__always)
        func isEmpty(_ tag: Int) -> Bool { tag >= 0 && empties[tag] }
    }

    static let table = Table()
}
