/// An RFC 5322 message kept byte-exact, as DKIM needs it.
///
/// Line endings are CRLF. A file written with bare LF (as most tools store `.eml` files) is
/// converted to the CRLF message an MTA would have seen on the wire (RFC 5322 §2.1, RFC 6376 §5.3);
/// a leading mbox `From ` separator line is not part of the message and is dropped.
package struct RawMessage: Sendable {
    /// The whole message, CRLF line endings.
    package let bytes: [UInt8]
    /// The header fields in order, top first (the order DKIM's `h=` selection walks bottom-up).
    package let headerFields: [HeaderField]
    /// Offset of the first body byte: just past the empty line that ends the header section,
    /// or `bytes.count` when there is no body.
    package let bodyStart: Int

    /// The body exactly as transmitted (RFC 5322 §3.5).
    package var body: ArraySlice<UInt8> { bytes[bodyStart...] }

    /// Parses a message.
    ///
    /// - Parameter bytes: the message as read from a file or the network, CRLF or bare LF.
    /// - Throws: `MailMessageError` with `.notAMessage` when no header field can be found.
    package init(bytes input: [UInt8]) throws(MailMessageError) {
        var normalized = RawMessage.normalizingLineEndings(input)
        RawMessage.dropMboxSeparator(&normalized)
        let (fields, bodyStart) = RawMessage.parseHeaderSection(normalized)
        guard !fields.isEmpty else { throw .notAMessage }
        self.bytes = normalized
        self.headerFields = fields
        self.bodyStart = bodyStart
    }

    /// Parses only the header section of `input` (the fields and the empty line after them, RFC 5322 §2.1): what
    /// a caller needs that reads a field or two before the whole message is parsed elsewhere. Its ``body`` is empty.
    /// - Throws: `MailMessageError` with `.notAMessage` when no header field can be found.
    package init(headerSectionOf input: [UInt8]) throws(MailMessageError) {
        try self.init(bytes: Self.headerSection(of: input))
    }

    /// The header fields of `input` and the empty line after them, CRLF or bare LF; all of it when there is no
    /// empty line.
    package static func headerSection(of input: [UInt8]) -> [UInt8] {
        var previousWasLineFeed = true  // a message that starts with an empty line has no header fields
        for index in input.indices {
            let byte = input[index]
            if byte == .lineFeed {
                if previousWasLineFeed { return Array(input[...index]) }
                previousWasLineFeed = true
            } else if byte != .carriageReturn {
                previousWasLineFeed = false
            }
        }
        return input
    }

    /// Convenience for tests and literals.
    package init(_ text: String) throws(MailMessageError) {
        try self.init(bytes: Array(text.utf8))
    }

    private init(bytes: [UInt8], headerFields: [HeaderField], bodyStart: Int) {
        self.bytes = bytes
        self.headerFields = headerFields
        self.bodyStart = bodyStart
    }

    /// The fields named `name` (case-insensitive), top first.
    package func fields(named name: String) -> [HeaderField] {
        let wanted = name.lowercased()
        return headerFields.filter { $0.lowercasedName == wanted }
    }

    /// The first field named `name`, unfolded, or nil.
    package func value(of name: String) -> String? {
        fields(named: name).first?.unfoldedValue
    }

    /// The same message with its body cut to its first `length` bytes: what a DKIM signature with
    /// `l=` vouches for (RFC 6376 §3.5). Later stages take markup only from the signed part.
    package func truncatingBody(to length: Int) -> RawMessage {
        let end = min(bytes.count, bodyStart + max(0, length))
        // Header field slices index into the same storage, so they stay valid in the shorter copy
        // only if we rebuild them; the header section itself is unchanged, so re-slicing is safe.
        let shortened = Array(bytes[..<end])
        let fields = headerFields.map { field in
            HeaderField(name: field.name, raw: shortened[field.raw.indices], valueRange: field.valueRange)
        }
        return RawMessage(bytes: shortened, headerFields: fields, bodyStart: bodyStart)
    }

    // MARK: - Parsing

    /// Converts every bare LF to CRLF. Returns the input untouched (no copy) when it is already CRLF.
    static func normalizingLineEndings(_ input: [UInt8]) -> [UInt8] {
        input.withUnsafeBytes { buffer -> [UInt8] in
            guard let base = buffer.baseAddress, let firstBare = firstBareLineFeed(in: buffer, from: 0) else {
                return input
            }
            var output = [UInt8]()
            output.reserveCapacity(input.count + input.count / 32)
            var segmentStart = 0
            var bare: Int? = firstBare
            while let lineFeed = bare {
                // Everything before the bare LF as it is, then the CR it lacks; the LF opens the next segment.
                let segment = UnsafeRawBufferPointer(start: base + segmentStart, count: lineFeed - segmentStart)
                output.append(contentsOf: segment)
                output.append(.carriageReturn)
                segmentStart = lineFeed
                bare = firstBareLineFeed(in: buffer, from: lineFeed + 1)
            }
            let rest = UnsafeRawBufferPointer(start: base + segmentStart, count: buffer.count - segmentStart)
            output.append(contentsOf: rest)
            return output
        }
    }

    /// Whether `bytes` holds an LF that no CR precedes (one at its start counts: no byte before it is a CR).
    static func hasBareLineFeed(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBytes { firstBareLineFeed(in: $0, from: 0) != nil }
    }

    /// The index of the first LF at or after `start` that no CR precedes, or nil.
    ///
    /// Compares thirty-two bytes at a time with the bytes before them, so a message is read in blocks rather than
    /// byte by byte (or line by line); most messages have no bare LF and are only read. The comparison masks are
    /// reduced as words: `any(_:)` reduces lane by lane, through a call per block (measured: a tenth of the
    /// prefilter's time).
    private static func firstBareLineFeed(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        let count = buffer.count
        var index = start
        if index == 0 {
            guard count > 0 else { return nil }
            if buffer[0] == .lineFeed { return 0 }
            index = 1
        }
        let lineFeed = SIMD16<UInt8>(repeating: .lineFeed)
        let carriageReturn = SIMD16<UInt8>(repeating: .carriageReturn)
        while index &+ 32 <= count {
            let low = base.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
            let high = base.loadUnaligned(fromByteOffset: index &+ 16, as: SIMD16<UInt8>.self)
            let lowBefore = base.loadUnaligned(fromByteOffset: index &- 1, as: SIMD16<UInt8>.self)
            let highBefore = base.loadUnaligned(fromByteOffset: index &+ 15, as: SIMD16<UInt8>.self)
            let bare = ((low .== lineFeed) .& (lowBefore .!= carriageReturn)) .| ((high .== lineFeed) .& (highBefore .!= carriageReturn))
            let lanes = unsafeBitCast(bare, to: SIMD2<UInt64>.self)
            if lanes[0] | lanes[1] != 0 { break }  // the byte loop below finds it
            index &+= 32
        }
        while index < count {
            if buffer[index] == .lineFeed && buffer[index - 1] != .carriageReturn { return index }
            index += 1
        }
        return nil
    }

    /// Drops an mbox `From sender date` separator line, which no MTA sends and no signer signs.
    ///
    /// The separator is `From` and a space followed by something other than a colon: a header field
    /// written in the obsolete form `From : a@example.com` (RFC 5322 §4.5.3) is kept.
    static func dropMboxSeparator(_ bytes: inout [UInt8]) {
        let length = mboxSeparatorLength(bytes)
        if length > 0 { bytes.removeSubrange(..<length) }
    }

    /// The length of the mbox separator line at the start of `bytes`, its line feed included; 0 when there is none.
    static func mboxSeparatorLength(_ bytes: [UInt8]) -> Int {
        guard bytes.count >= 5, bytes[0] == UInt8(ascii: "F"), bytes[1] == UInt8(ascii: "r"),
            bytes[2] == UInt8(ascii: "o"), bytes[3] == UInt8(ascii: "m"), bytes[4] == .space
        else { return 0 }
        guard let end = bytes.firstIndex(of: .lineFeed) else { return 0 }
        var index = 5
        while index < end && (bytes[index] == .space || bytes[index] == .tab) { index += 1 }
        guard index < end, bytes[index] != .colon else { return 0 }
        return end + 1
    }

    /// Splits the header section into fields (RFC 5322 §2.2): a field starts on a line that does not
    /// begin with WSP and runs over continuation lines that do. The section ends at the first empty line.
    static func parseHeaderSection(_ bytes: [UInt8]) -> ([HeaderField], Int) {
        parseHeaderSection(bytes[...])
    }

    /// Splits a header section that starts at `bytes.startIndex` into fields. Indices (in the fields'
    /// `raw` slices, their `valueRange`s and the returned body start) are indices of `bytes`' base, so
    /// the header section of a MIME body part parses in place (RFC 2045 §3, RFC 2046 §5.1.1).
    ///
    /// A line that is not a field (no colon, or a name with other than printable ASCII) is skipped
    /// with its continuation lines. A name followed by whitespace before the colon is the obsolete
    /// form of RFC 5322 §4.5.3 (`Subject : ...`): accepted, the name without the whitespace.
    ///
    /// - Returns: the fields, and the index of the first body byte (just past the empty line that
    ///   ends the header section), or `bytes.endIndex` when there is no empty line.
    static func parseHeaderSection(_ bytes: ArraySlice<UInt8>) -> ([HeaderField], Int) {
        var fields: [HeaderField] = []
        var lineStart = bytes.startIndex
        var fieldStart: Int? = nil

        func closeField(endingAt end: Int) {
            guard let start = fieldStart else { return }
            fieldStart = nil
            let raw = bytes[start..<end]
            guard let colon = raw.firstIndex(of: .colon) else { return }  // not a field: ignored
            var nameEnd = colon
            while nameEnd > start && (bytes[nameEnd - 1] == .space || bytes[nameEnd - 1] == .tab) { nameEnd -= 1 }
            let nameBytes = bytes[start..<nameEnd]
            guard !nameBytes.isEmpty, nameBytes.allSatisfy({ $0 > 32 && $0 < 127 }) else { return }
            let name = String(decoding: nameBytes, as: UTF8.self)
            var valueEnd = end
            if valueEnd - 2 >= colon + 1 && bytes[valueEnd - 2] == .carriageReturn && bytes[valueEnd - 1] == .lineFeed {
                valueEnd -= 2
            }
            fields.append(HeaderField(name: name, raw: raw, valueRange: (colon + 1)..<valueEnd))
        }

        let endIndex = bytes.endIndex
        while lineStart < endIndex {
            // Find the end of this line (index just past its LF, or the end of input).
            var lineEnd = lineStart
            while lineEnd < endIndex && bytes[lineEnd] != .lineFeed { lineEnd += 1 }
            let nextLine = lineEnd < endIndex ? lineEnd + 1 : endIndex
            let isEmptyLine =
                (lineEnd == lineStart) || (lineEnd == lineStart + 1 && bytes[lineStart] == .carriageReturn)
            if isEmptyLine && lineEnd < endIndex {
                closeField(endingAt: lineStart)
                return (fields, nextLine)
            }
            let first = bytes[lineStart]
            if first != .space && first != .tab {  // a continuation line belongs to the open field
                closeField(endingAt: lineStart)
                fieldStart = lineStart
            }
            lineStart = nextLine
        }
        closeField(endingAt: endIndex)
        return (fields, endIndex)
    }
}

/// An error reading a message.
package struct MailMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    package var code: String
    package var reason: String
    package var description: String { "\(code): \(reason)" }

    package static let notAMessage = MailMessageError(
        code: "mail.not-a-message",
        reason: "no header field found; expected an RFC 5322 message (header fields, an empty line, the body)"
    )
}

extension UInt8 {
    package static let carriageReturn = UInt8(ascii: "\r")
    package static let lineFeed = UInt8(ascii: "\n")
    package static let space = UInt8(ascii: " ")
    package static let tab = UInt8(ascii: "\t")
    package static let colon = UInt8(ascii: ":")
    package static let semicolon = UInt8(ascii: ";")
    package static let equalsSign = UInt8(ascii: "=")
    static let questionMark = UInt8(ascii: "?")
    static let hyphen = UInt8(ascii: "-")
    static let quotationMark = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")

    /// The value of this byte as a hexadecimal digit (`0`–`9`, `A`–`F`, `a`–`f`), or nil: the one decoder of hex
    /// digits for quoted-printable, encoded words, RFC 2231 parameters and JSON's `\u` escapes.
    @inline(__always)
    package var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return self - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return self - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return self - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
