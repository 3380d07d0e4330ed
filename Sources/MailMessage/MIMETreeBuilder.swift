internal import Glibc

/// Builds a `MIMETree`: splits multiparts at their boundaries (RFC 2046 §5.1.1), parses
/// encapsulated messages (§5.2.1), counts parts and depth against the configured limits.
///
/// It recurses once per nesting level, and never deeper than `Configuration.depthCeiling`.
struct MIMETreeBuilder {
    let maxParts: Int
    let maxDepth: Int
    let maxDecodedBytesPerPart: Int
    let readsAttachedMessages: Bool
    private(set) var warnings: [MIMEWarning] = []
    private(set) var partCount = 0
    private var reportedTooManyParts = false

    init(configuration: MIMETree.Configuration) {
        maxParts = max(1, configuration.maxParts)
        maxDepth = min(max(0, configuration.maxDepth), MIMETree.Configuration.depthCeiling)
        maxDecodedBytesPerPart = max(0, configuration.maxDecodedBytesPerPart)
        readsAttachedMessages = configuration.readsAttachedMessages
    }

    /// Where a part sits, which decides its path.
    private enum Slot {
        /// The top of a message (the whole message, or one inside a message/rfc822 part at `prefix`).
        case messageRoot(prefix: String)
        /// A body part with a known path.
        case bodyPart(path: String)
    }

    /// The top-level message.
    mutating func message(headerFields: [HeaderField], body: ArraySlice<UInt8>) -> MIMEPart {
        partCount = 1
        return entity(
            fields: headerFields, body: body, slot: .messageRoot(prefix: ""), depth: 0,
            defaultType: .defaultText, insideAttachedMessage: false)
    }

    /// True when one more part may be read; warns once when not.
    private mutating func admitPart(at path: String) -> Bool {
        if partCount < maxParts {
            partCount += 1
            return true
        }
        if !reportedTooManyParts {
            reportedTooManyParts = true
            warn(MIMEWarning.Code.tooManyParts, path, "more than \(maxParts) MIME parts; the rest were not read")
        }
        return false
    }

    private mutating func warn(_ code: String, _ path: String, _ message: String) {
        warnings.append(MIMEWarning(code: code, path: path, message: message))
    }

    // MARK: - Entities

    private mutating func entity(
        fields: [HeaderField], body: ArraySlice<UInt8>, slot: Slot, depth: Int, defaultType: ContentType,
        insideAttachedMessage: Bool
    ) -> MIMEPart {
        let typeField = fields.first { $0.lowercasedName == "content-type" }
        var contentType = defaultType
        var contentTypeIsMalformed = false
        if let typeField {
            if let parsed = ContentType(parsing: typeField.unfoldedBytes[...]) {
                contentType = parsed
            } else {
                contentType = .defaultText  // RFC 2045 §5.2, even inside multipart/digest
                contentTypeIsMalformed = true
            }
        }
        let path: String
        switch slot {
        case .bodyPart(let given): path = given
        case .messageRoot(let prefix):
            path = contentType.isMultipart ? prefix : (prefix.isEmpty ? "1" : prefix + ".1")
        }
        if contentTypeIsMalformed {
            warn(MIMEWarning.Code.malformedContentType, path, "Content-Type has no type/subtype; read as text/plain")
        }
        let encoding =
            fields.first { $0.lowercasedName == "content-transfer-encoding" }
            .map { ContentTransferEncoding(parsing: $0.unfoldedBytes[...]) } ?? .sevenBit
        let disposition = fields.first { $0.lowercasedName == "content-disposition" }
            .flatMap { ContentDisposition(parsing: $0.unfoldedBytes[...]) }
        let isAttachedMessage = contentType.isEncapsulatedMessage

        var children: [MIMEPart] = []
        if contentType.isMultipart || (isAttachedMessage && readsAttachedMessages) {
            if depth >= maxDepth {
                warn(MIMEWarning.Code.tooDeep, path, "nested deeper than \(maxDepth) levels; not descended into")
            } else if contentType.isMultipart {
                if !encoding.isIdentity {
                    warn(
                        MIMEWarning.Code.encodedMultipart, path,
                        "a multipart with Content-Transfer-Encoding \(clipped(encoding.name)) (RFC 2045 §6.4 "
                            + "allows only 7bit, 8bit, binary); encoding ignored"
                    )
                }
                children = multipartChildren(
                    body: body, contentType: contentType, path: path, depth: depth,
                    insideAttachedMessage: insideAttachedMessage)
            } else if admitPart(at: path) {
                children = [encapsulatedMessage(body: body, encoding: encoding, path: path, depth: depth)]
            }
        }
        return MIMEPart(
            path: path, depth: depth, headerFields: fields, contentType: contentType,
            contentTransferEncoding: encoding, contentDisposition: disposition, body: body, children: children,
            isAttachedMessage: isAttachedMessage, isInsideAttachedMessage: insideAttachedMessage)
    }

    /// The message inside a message/rfc822 part. A body sent base64 or quoted-printable (which RFC
    /// 2046 §5.2.1 forbids, but senders do) is decoded first.
    private mutating func encapsulatedMessage(
        body: ArraySlice<UInt8>, encoding: ContentTransferEncoding, path: String, depth: Int
    ) -> MIMEPart {
        var content = body
        var truncated = false
        if encoding == .base64 {
            let decoded = Base64.decode(body, limit: maxDecodedBytesPerPart)
            content = RawMessage.normalizingLineEndings(decoded.bytes)[...]
            truncated = decoded.truncated
        } else if encoding == .quotedPrintable {
            let decoded = QuotedPrintable.decode(body, limit: maxDecodedBytesPerPart)
            content = RawMessage.normalizingLineEndings(decoded.bytes)[...]
            truncated = decoded.truncated
        }
        if truncated {
            warn(MIMEWarning.Code.partTooLarge, path, "attached message cut at \(maxDecodedBytesPerPart) decoded bytes")
        }
        let (fields, bodyStart) = RawMessage.parseHeaderSection(content)
        return entity(
            fields: fields, body: content[bodyStart...], slot: .messageRoot(prefix: path), depth: depth + 1,
            defaultType: .defaultText, insideAttachedMessage: true)
    }

    // MARK: - Multipart

    private mutating func multipartChildren(
        body: ArraySlice<UInt8>, contentType: ContentType, path: String, depth: Int, insideAttachedMessage: Bool
    ) -> [MIMEPart] {
        let childDefault: ContentType = contentType.subtype == "digest" ? .defaultDigestEntry : .defaultText
        func childPath(_ number: Int) -> String { path.isEmpty ? "\(number)" : "\(path).\(number)" }

        var ranges: [Range<Int>] = []
        if let boundary = contentType.boundary {
            // Enough delimiters for every part we may still read, plus the one that closes the last.
            let wanted = max(0, maxParts - partCount) + 2
            let found = MIMETreeBuilder.delimiters(in: body, boundary: Array(boundary.utf8), maxCount: wanted)
            if found.lines.isEmpty {
                warn(
                    MIMEWarning.Code.boundaryNotFound, path, "the boundary never appears; the body is read as one part")
                ranges = [body.indices]
            } else {
                var closed = false
                for (number, line) in found.lines.enumerated() {
                    if line.isClose {
                        closed = true
                        break
                    }
                    let end: Int
                    if number + 1 < found.lines.count {
                        // The CRLF before a delimiter belongs to the delimiter (RFC 2046 §5.1.1).
                        let next = found.lines[number + 1].lineStart
                        var cut = next
                        if cut - 1 >= line.contentStart && body[cut - 1] == .lineFeed { cut -= 1 }
                        if cut - 1 >= line.contentStart && body[cut - 1] == .carriageReturn { cut -= 1 }
                        end = cut
                    } else {
                        end = body.endIndex
                    }
                    ranges.append(line.contentStart..<max(line.contentStart, end))
                }
                if !closed && !found.truncated {
                    warn(
                        MIMEWarning.Code.missingCloseDelimiter, path,
                        "no close-delimiter; the last part runs to the end of the body")
                }
            }
        } else {
            warn(
                MIMEWarning.Code.missingBoundary, path,
                "multipart without a boundary parameter; the body is read as one part")
            ranges = [body.indices]
        }

        var children: [MIMEPart] = []
        children.reserveCapacity(min(ranges.count, maxParts))
        for (index, range) in ranges.enumerated() {
            let childPath = childPath(index + 1)
            guard admitPart(at: childPath) else { break }
            let content = body[range]
            let (fields, bodyStart) = MIMETreeBuilder.partHeaderSection(content)
            children.append(
                entity(
                    fields: fields, body: content[bodyStart...], slot: .bodyPart(path: childPath), depth: depth + 1,
                    defaultType: childDefault, insideAttachedMessage: insideAttachedMessage))
        }
        return children
    }

    /// The header section of a body part. A part that does not start with a header field or an empty
    /// line has no header section at all (its first line is content, as in a preamble-only body), so
    /// it is read as headerless content rather than as a malformed header.
    static func partHeaderSection(_ content: ArraySlice<UInt8>) -> ([HeaderField], Int) {
        var index = content.startIndex
        var sawName = false
        while index < content.endIndex {
            let byte = content[index]
            if byte == .colon {
                guard sawName else { return ([], content.startIndex) }
                return RawMessage.parseHeaderSection(content)
            }
            if byte == .carriageReturn || byte == .lineFeed {
                // An empty first line: no header fields, the body follows.
                if !sawName { return RawMessage.parseHeaderSection(content) }
                return ([], content.startIndex)
            }
            if byte == .space || byte == .tab {
                // Whitespace may sit between the name and the colon (RFC 5322 §4.5.3), not inside.
                var next = index
                while next < content.endIndex && (content[next] == .space || content[next] == .tab) { next += 1 }
                guard sawName, next < content.endIndex, content[next] == .colon else { return ([], content.startIndex) }
                return RawMessage.parseHeaderSection(content)
            }
            guard byte > 32 && byte < 127 else { return ([], content.startIndex) }
            sawName = true
            index += 1
        }
        return ([], content.startIndex)
    }

    /// A boundary delimiter line (RFC 2046 §5.1.1).
    struct DelimiterLine {
        /// Index of the first `-` of the line.
        var lineStart: Int
        /// Index just past the line's CRLF: where the next body part begins.
        var contentStart: Int
        /// True for the close-delimiter (`--boundary--`).
        var isClose: Bool
    }

    /// Finds the delimiter lines of `boundary` in `body`: lines that are `--` and the boundary,
    /// optionally `--` (close), then only whitespace (transport padding). At most `maxCount`.
    static func delimiters(
        in body: ArraySlice<UInt8>, boundary: [UInt8], maxCount: Int
    ) -> (lines: [DelimiterLine], truncated: Bool) {
        var lines: [DelimiterLine] = []
        var truncated = false
        let dash = UInt8(ascii: "-")
        // Lines that start with "--", found sixteen bytes at a time (a 10 MB attachment is skipped at memory speed
        // rather than line by line), then compared with the boundary.
        body.withUnsafeBufferPointer { buffer in
            boundary.withUnsafeBufferPointer { boundary in
                // An empty boundary (never passed: `ContentType.boundary` is nil then) finds nothing.
                guard let base = buffer.baseAddress, let boundaryBase = boundary.baseAddress, boundary.count > 0 else {
                    return
                }
                let count = buffer.count
                let length = boundary.count
                var searchFrom = 0
                while let lineStart = Self.nextDashDashLine(in: buffer, from: searchFrom) {
                    searchFrom = lineStart + 1
                    guard count - lineStart >= 2 + length, memcmp(base + lineStart + 2, boundaryBase, length) == 0 else {
                        continue
                    }
                    var cursor = lineStart + 2 + length
                    var isClose = false
                    if cursor + 1 < count && buffer[cursor] == dash && buffer[cursor + 1] == dash {
                        isClose = true
                        cursor += 2
                    }
                    while cursor < count && (buffer[cursor] == .space || buffer[cursor] == .tab) { cursor += 1 }
                    var contentStart: Int? = nil
                    if cursor == count {
                        contentStart = count
                    } else if buffer[cursor] == .lineFeed {
                        contentStart = cursor + 1
                    } else if buffer[cursor] == .carriageReturn && cursor + 1 < count && buffer[cursor + 1] == .lineFeed {
                        contentStart = cursor + 2
                    }
                    guard let contentStart else { continue }
                    guard lines.count < maxCount else {
                        truncated = true
                        return
                    }
                    let offset = body.startIndex
                    lines.append(
                        DelimiterLine(
                            lineStart: offset + lineStart, contentStart: offset + contentStart, isClose: isClose))
                    if isClose { return }
                    searchFrom = contentStart
                }
            }
        }
        return (lines, truncated)
    }

    /// The first index at or after `start` where a line starts with `--` (index 0, or just after a line feed).
    ///
    /// Found with `memchr` for `-`, which no base64 line and little text has: the C library's search runs at memory
    /// speed over a 10 MB attachment, where a loop over lines (or over 16-byte blocks in Swift) took milliseconds.
    static func nextDashDashLine(in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        let count = buffer.count
        let dash = UInt8(ascii: "-")
        var index = start
        while index + 1 < count {
            guard let found = memchr(base + index, Int32(dash), count - index) else { return nil }
            let position = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            if position + 1 < count, buffer[position + 1] == dash, position == 0 || buffer[position - 1] == .lineFeed {
                return position
            }
            // "-" then not "-": the next candidate starts after it; "--" not at a line start: after both.
            index = position + 1
        }
        return nil
    }

    private func clipped(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
