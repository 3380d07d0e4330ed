extension RawMessage {
    /// The markup prefilter: whether this message may carry schema.org markup, found without parsing any HTML or
    /// JSON, so that the many messages without markup cost almost nothing (DESIGN.md "intake → prefilter").
    ///
    /// It reads the parts ``markupParts(configuration:)`` hands the extractor (the same MIME reader with the same
    /// limits; not the parts of an attached message, which it does not even open, nor a part sent as an
    /// attachment, which it does not decode) and says "maybe" (a ``MarkupEvidence`` with a kind) when:
    ///
    /// - there is an `application/ld+json` part; or
    /// - a `text/html` part's decoded text holds `<script` or `itemscope` in either case (`MarkupEvidenceScanner`).
    ///
    /// The text is decoded as the extractor's is: the transfer encoding removed as a stream (chunk by chunk, never
    /// the whole part at once), in the charset the part declares (or its `<meta charset>`), up to
    /// `maxDecodedBytesPerPart` per part. A charset whose ASCII bytes are not ASCII characters (UTF-16, UTF-7,
    /// ISO-2022-JP, EBCDIC…) is converted through iconv and the bytes are scanned both as sent and converted, so
    /// a worker that cannot load that converter (and reads the bytes as UTF-8) is covered too.
    ///
    /// This is a superset of what the extractor finds: whenever extraction yields a node, the prefilter has said
    /// "maybe" (the differential test checks it on every markup case in every MIME encoding). Memory: the MIME tree
    /// (at most `maxParts` entries) and buffers of about 64 KiB, whatever the message's size.
    package func markupEvidence(configuration: MIMETree.Configuration = MIMETree.Configuration()) -> MarkupEvidence {
        Self.markupEvidence(
            headerFields: headerFields, body: body, lineEndingsAreCRLF: true, configuration: configuration)
    }

    /// The markup prefilter on a message's bytes as received, CRLF or bare LF, without parsing it into a
    /// ``RawMessage`` first: the same verdict, part and counts as ``markupEvidence(configuration:)`` on the parsed
    /// message, without reading the whole message once more to make its bare LFs CRLF.
    ///
    /// Only the bytes the prefilter decodes need CRLF line endings, and only so that a quoted-printable or 8bit text
    /// part decodes to what the extractor reads (an inserted CR changes text in UTF-16, say): the header sections
    /// (whose values are unfolded, every CR and LF removed) and the boundary delimiters (found at a line start, ended
    /// by LF or CRLF, the line break before them cut either way) split the same with bare LFs. So a text/html part
    /// not sent in base64 (whose decoder skips CR and LF alike) is looked at for a bare LF, and decoded from a CRLF
    /// copy of its body if it has one; the attachments, most of a large message's bytes, are only searched for
    /// their boundary. A leading mbox `From ` line is skipped, as ``init(bytes:)`` drops it.
    /// - Returns: nil when the bytes hold no header field (``init(bytes:)`` throws `mail.not-a-message` for them).
    package static func markupEvidence(
        inBytes bytes: [UInt8], configuration: MIMETree.Configuration = MIMETree.Configuration()
    ) -> MarkupEvidence? {
        let (fields, bodyStart) = parseHeaderSection(bytes[mboxSeparatorLength(bytes)...])
        guard !fields.isEmpty else { return nil }
        return markupEvidence(
            headerFields: fields, body: bytes[bodyStart...], lineEndingsAreCRLF: false, configuration: configuration)
    }

    /// The prefilter on a message's header fields and body.
    /// - Parameter lineEndingsAreCRLF: false when the body may hold bare LFs (the bytes as received).
    private static func markupEvidence(
        headerFields: [HeaderField], body: ArraySlice<UInt8>, lineEndingsAreCRLF: Bool,
        configuration: MIMETree.Configuration
    ) -> MarkupEvidence {
        var configuration = configuration
        configuration.readsAttachedMessages = false
        let tree = MIMETree(headerFields: headerFields, body: body, configuration: configuration)
        var evidence = MarkupEvidence()
        for part in tree.parts where !part.isInsideAttachedMessage && !part.isAttachment {
            switch (part.contentType.type, part.contentType.subtype) {
            case ("application", "ld+json"):
                evidence.kind = .jsonLDPart
                evidence.path = part.path
                return evidence
            case ("text", "html"):
                evidence.partsRead += 1
                let part = lineEndingsAreCRLF ? part : part.withCRLFLineEndings()
                if let found = Self.scanHTML(part, limit: configuration.maxDecodedBytesPerPart, evidence: &evidence) {
                    evidence.kind = found
                    evidence.path = part.path
                    return evidence
                }
            default:
                continue
            }
        }
        return evidence
    }

    /// Scans one text/html part's decoded text, as ``MIMEPart/decodedText(limit:)`` would decode it.
    private static func scanHTML(_ part: MIMEPart, limit: Int, evidence: inout MarkupEvidence) -> MarkupEvidence.Kind? {
        var raw = MarkupEvidenceScanner()
        var converted = MarkupEvidenceScanner()
        var transcoder: Charset.Transcoder?
        var decided = false
        // Without a charset parameter, the first 1024 decoded bytes may name one in a <meta>: held until then.
        var head: [UInt8] = []
        var found: MarkupEvidenceScanner.Finding?

        /// Settles the charset, sniffing `start` (the first decoded bytes, 1024 or all there are) when the part
        /// declares none.
        func decide(_ start: UnsafeBufferPointer<UInt8>) {
            decided = true
            var label = part.contentType.charset
            if label == nil { label = MIMEPart.sniffedHTMLCharset(Array(start.prefix(1024))[...]) }
            if case .iconv(let name) = Charset.resolve(label ?? "us-ascii"), !Charset.isASCIICompatible(name) {
                transcoder = Charset.Transcoder(from: name)
            }
        }
        func scan(_ chunk: UnsafeBufferPointer<UInt8>, isLast: Bool) {
            found = raw.scan(chunk)
            guard found == nil, let transcoder else { return }
            transcoder.convert(chunk, isFinal: isLast) { utf8 in
                if found == nil { found = converted.scan(utf8) }
            }
        }

        part.forEachDecodedChunk(limit: limit) { chunk, isLast in
            if decided {
                scan(chunk, isLast: isLast)
            } else if head.isEmpty && (chunk.count >= 1024 || isLast) {
                decide(chunk)  // the usual case: the first chunk holds the first 1024 bytes, no copy
                scan(chunk, isLast: isLast)
            } else {
                head += chunk
                guard head.count >= 1024 || isLast else { return true }
                head.withUnsafeBufferPointer { all in
                    decide(all)
                    scan(all, isLast: isLast)
                }
                head = []
            }
            return found == nil
        }
        evidence.bytesScanned += raw.bytesScanned
        switch found {
        case .script: return .scriptElement
        case .itemscope: return .itemscope
        case nil: return nil
        }
    }
}

extension MIMEPart {
    /// This part with its body's bare LFs made CRLF, as they are in a ``RawMessage``; itself when the body has none,
    /// or when it is sent in base64 (whose decoder skips CR and LF alike, so that they decode the same either way).
    ///
    /// The part's body always follows a line feed (the end of a header section or of a delimiter line), so an LF at
    /// its start is bare here as it is in the whole message.
    fileprivate func withCRLFLineEndings() -> MIMEPart {
        guard contentTransferEncoding != .base64, RawMessage.hasBareLineFeed(body) else { return self }
        let normalized = RawMessage.normalizingLineEndings(Array(body))
        return MIMEPart(
            path: path, depth: depth, headerFields: headerFields, contentType: contentType,
            contentTransferEncoding: contentTransferEncoding, contentDisposition: contentDisposition,
            body: normalized[...], children: children, isAttachedMessage: isAttachedMessage,
            isInsideAttachedMessage: isInsideAttachedMessage)
    }
}
