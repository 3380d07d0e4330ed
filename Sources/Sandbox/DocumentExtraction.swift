internal import Glibc
package import MailMessage
package import Markup

/// What extraction does with one document: the handler the worker executable runs confined, and
/// `InProcessExtractor` runs unconfined (`sandbox = off`). One implementation, so the two modes
/// give the same graph and a benchmark compares only the sandbox's cost.
///
/// - email: the message's text/html and application/ld+json parts (`RawMessage.markupParts`; never an
///   attached message's, nor a part sent as an attachment), each
///   extracted, graphs concatenated in part order, MIME warnings turned into diagnostics
///   (`mime.*`, path `mime[1.2]`); a message that does not parse is one `mail.not-a-message` error.
/// - html: `MarkupExtractor.extract(html:encoding:)` with the transport's charset, if any.
/// - jsonLD: `MarkupExtractor.extract(jsonLD:path:)`.
package struct DocumentExtraction: Sendable {
    /// The limits of each stage; a request's own limits can only tighten them.
    package struct Configuration: Sendable, Hashable {
        package var markup: MarkupExtractor.Configuration
        package var mime: MIMETree.Configuration

        package init(
            markup: MarkupExtractor.Configuration = MarkupExtractor.Configuration(),
            mime: MIMETree.Configuration = MIMETree.Configuration()
        ) {
            self.markup = markup
            self.mime = mime
        }
    }

    package var configuration: Configuration

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Extracts the markup of `request`'s document. Never fails: what went wrong is in the
    /// graph's diagnostics.
    package func extract(_ request: ExtractionRequest) -> MarkupGraph {
        let extractor = MarkupExtractor(configuration: markupConfiguration(for: request.limits))
        switch request.kind {
        case .html:
            return extractor.extract(html: request.document, encoding: request.encoding)
        case .jsonLD:
            return extractor.extract(jsonLD: String(decoding: request.document, as: UTF8.self), path: "")
        case .email:
            return extractEmail(request.document, extractor: extractor)
        }
    }

    private func extractEmail(_ bytes: [UInt8], extractor: MarkupExtractor) -> MarkupGraph {
        let message: RawMessage
        do {
            message = try RawMessage(bytes: bytes)
        } catch {
            return MarkupGraph(diagnostics: [Diagnostic(.error, Diagnostic.Code(error.code), error.reason)])
        }
        let parts = message.markupParts(configuration: configuration.mime)
        var graph = MarkupGraph(
            diagnostics: parts.warnings.map { warning in
                Diagnostic(
                    .warning, Diagnostic.Code(warning.code), path: warning.path.isEmpty ? "" : "mime[\(warning.path)]",
                    warning.message)
            })
        for part in parts.parts {
            let place = "mime[\(part.path)]"
            // A file attached to the confirmation is not the message's markup (as in Gmail).
            if part.isAttachment {
                graph.diagnostics.append(
                    Diagnostic(
                        .warning, Diagnostic.Code("mime.attachment-ignored"), path: place,
                        "markup in an attached file is not read; put it in the message body"))
                continue
            }
            let partGraph: MarkupGraph
            switch part.kind {
            case .html:
                partGraph = extractor.extract(htmlText: part.text)  // decoded by MIME
                graph.diagnostics += partGraph.diagnostics.map { diagnostic in
                    var diagnostic = diagnostic
                    diagnostic.path = diagnostic.path.isEmpty ? place : "\(place)/\(diagnostic.path)"
                    return diagnostic
                }
            case .jsonLD:
                partGraph = extractor.extract(jsonLD: part.text, path: place)
                graph.diagnostics += partGraph.diagnostics
            }
            graph.nodes += partGraph.nodes
        }
        return graph
    }

    /// The configuration, tightened by the request's limits (zero: no tightening).
    private func markupConfiguration(for limits: ExtractionRequest.Limits) -> MarkupExtractor.Configuration {
        var markup = configuration.markup
        if limits.maxItems > 0 { markup.maxItems = min(markup.maxItems, Int(limits.maxItems)) }
        if limits.maxDepth > 0 {
            markup.maxItemDepth = min(markup.maxItemDepth, Int(limits.maxDepth))
            markup.maxJSONDepth = min(markup.maxJSONDepth, Int(limits.maxDepth))
        }
        return markup
    }

    // MARK: - Before confinement

    /// Loads, while files can still be opened, what extraction would otherwise load lazily: an iconv
    /// converter for every charset the MIME and HTML decoders name (each opened once and never
    /// closed, on purpose: an open converter keeps its gconv module loaded for the worker's life),
    /// and everything a first extraction of each kind touches. Under the filter, opening a gconv
    /// module for a charset not listed here fails softly (EACCES), and the text is read as UTF-8
    /// with a `mime.unknown-charset` warning.
    package func prepare() {
        for charset in DocumentExtraction.preloadedCharsets {
            _ = iconv_open("UTF-8", charset)  // kept open for the process's life (see above)
        }
        let sample = DocumentExtraction.warmUpEmail
        for kind in DocumentKind.allCases {
            let document: [UInt8]
            switch kind {
            case .email: document = sample
            case .html: document = Array(DocumentExtraction.warmUpHTML.utf8)
            case .jsonLD: document = Array(#"{"@context":"https://schema.org","@type":"Thing","name":"x"}"#.utf8)
            }
            _ = extract(ExtractionRequest(id: 0, kind: kind, document: document))
        }
    }

    /// The iconv names `Charset` (MailMessage) and `HTMLInput` (Markup) resolve labels to, and the
    /// other charsets seen in confirmation mail.
    static let preloadedCharsets: [String] =
        (1...16).filter { $0 != 12 }.map { "ISO-8859-\($0)" } + (1250...1258).map { "WINDOWS-\($0)" } + [
            "CP874", "CP932", "CP949", "CP936", "GB18030", "GBK", "BIG5", "BIG5-HKSCS", "EUC-JP", "ISO-2022-JP",
            "SHIFT_JIS", "EUC-KR", "ISO-2022-KR", "EUC-TW", "KOI8-R", "KOI8-U", "IBM866", "MACINTOSH", "TIS-620",
            "VISCII", "UTF-16", "UTF-16LE", "UTF-16BE", "UTF-32", "UTF-7",
        ]

    private static let warmUpHTML = """
        <!doctype html><html><head><meta charset="utf-8"><script type="application/ld+json">
        {"@context":"https://schema.org","@type":"FoodEstablishmentReservation","reservationNumber":"1",
        "reservationFor":{"@type":"FoodEstablishment","name":"Caf\\u00e9"}}</script></head>
        <body><div itemscope itemtype="https://schema.org/Event"><span itemprop="name">x</span>
        <time itemprop="startDate" datetime="2030-01-01T10:00">x</time></div></body></html>
        """

    private static let warmUpEmail: [UInt8] = Array(
        """
        From: a@example.com\r
        To: b@example.com\r
        Subject: =?iso-8859-1?q?caf=E9?=\r
        MIME-Version: 1.0\r
        Content-Type: multipart/mixed; boundary="b"\r
        \r
        --b\r
        Content-Type: text/html; charset=utf-8\r
        Content-Transfer-Encoding: 8bit\r
        \r
        \(warmUpHTML)\r
        --b\r
        Content-Type: text/html; charset=windows-1252\r
        Content-Transfer-Encoding: quoted-printable\r
        \r
        <p>caf=E9</p>\r
        --b\r
        Content-Type: application/ld+json; charset=utf-8\r
        Content-Transfer-Encoding: base64\r
        \r
        eyJAdHlwZSI6IlRoaW5nIn0=\r
        --b--\r

        """.utf8)
}
