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
        var configuration = configuration
        configuration.readsAttachedMessages = false
        let tree = MIMETree(message: self, configuration: configuration)
        var evidence = MarkupEvidence()
        for part in tree.parts where !part.isInsideAttachedMessage && !part.isAttachment {
            switch (part.contentType.type, part.contentType.subtype) {
            case ("application", "ld+json"):
                evidence.kind = .jsonLDPart
                evidence.path = part.path
                return evidence
            case ("text", "html"):
                evidence.partsRead += 1
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
