/// Finds schema.org markup in untrusted HTML: every JSON-LD block and every Microdata item, as a
/// `MarkupGraph` of nodes written as the sender wrote them (MARKUP.md "Finding the markup").
///
/// Extraction never crashes and never runs unbounded: sizes, depths, counts and work are capped by
/// `Configuration`, and a cap reached is an error diagnostic with a stable code; what was found
/// before it is kept. A negative answer (no markup) is an empty graph, not an error.
///
/// ```swift
/// let graph = MarkupExtractor().extract(html: bytes, encoding: "UTF-8")
/// for node in graph.nodes where node.types.contains("FlightReservation") { … }
/// ```
package struct MarkupExtractor: Sendable {
    /// Limits; the defaults suit confirmation emails and booking pages.
    package struct Configuration: Sendable, Hashable {
        /// Larger HTML documents are refused whole (`markup.document-too-large`). 10 MiB.
        package var maxDocumentBytes = 10 * 1024 * 1024
        /// Element nesting; deeper, parsing stops (`markup.document-too-deep`), as libxml2's own tree
        /// builder does at 256. libxml2 2.9 spends time linear in the depth on each end tag.
        package var maxElementDepth = 256
        /// Top-level items (JSON-LD and Microdata together) read from one document
        /// (`markup.too-many-items`).
        package var maxItems = 1000
        /// Nodes in all, nested ones included (`markup.too-many-items`): bounds the copies that
        /// Microdata `itemref` can make of one element.
        package var maxNodes = 10_000
        /// Nesting of JSON arrays and objects in a JSON-LD block (`markup.json-too-deep`).
        package var maxJSONDepth = 64
        /// Nesting of Microdata items (`markup.microdata-too-deep`).
        package var maxItemDepth = 64
        /// Bytes (UTF-8) of one text value or property name (`markup.string-too-long`). 100 KiB.
        package var maxStringLength = 100 * 1024
        /// Bytes of one JSON-LD block (`markup.jsonld-too-large`). 2 MiB.
        package var maxJSONLDBlockBytes = 2 * 1024 * 1024
        /// Attributes on one start tag (`markup.too-many-attributes`); libxml2 2.9 spends time
        /// quadratic in this number.
        package var maxAttributesPerElement = 256
        /// Element visits spent crawling Microdata items and gathering their text
        /// (`markup.microdata-too-complex`); a well-formed page needs about one per element.
        package var maxMicrodataSteps = 10_000_000
        /// Reads a document with no Microdata, nothing quoted and nothing unusual without libxml2, finding its
        /// JSON-LD scripts with a byte scan (`JSONLDScriptScanner`); the result is the same either way. Off
        /// only to compare the two readings.
        package var scansJSONLDOnlyDocuments = true
        /// Builds the element index of a regular document (Microdata, quoted parts and all) with a byte scan that
        /// replays libxml2's reading (`HTMLIndexScanner`), leaving the rest to libxml2; the result is the same
        /// either way. Off only to compare the two readings.
        package var scansRegularDocuments = true

        package init() {}
    }

    package var configuration: Configuration

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Extracts the JSON-LD blocks (first, in document order) and the Microdata items (then, in tree
    /// order) of an HTML document.
    ///
    /// - Parameters:
    ///   - html: The document's bytes, exactly as received.
    ///   - encoding: The charset the transport declared (MIME or HTTP `charset`), or "UTF-8" when the
    ///     caller has already decoded the text. With nil, the encoding is found in the document (a byte
    ///     order mark, then `<meta charset>`, then UTF-8 if valid, else windows-1252). A byte order mark
    ///     always wins, as in the HTML standard.
    /// - Returns: The items found and the diagnostics, whose paths are `script[N]` (the Nth JSON-LD
    ///   block, from 1) or `microdata[N]` (the Nth top-level item, from 1) followed by a property path.
    package func extract(html: [UInt8], encoding: String? = nil) -> MarkupGraph {
        extract(html: html, encoding: encoding, knownValidUTF8: false)
    }

    /// Extracts the nodes of an HTML document that is already text, such as an email's `text/html` part the MIME
    /// reader decoded: the same as `extract(html:encoding:)` on its UTF-8, without validating that UTF-8 again.
    package func extract(htmlText: String) -> MarkupGraph {
        extract(html: Array(htmlText.utf8), encoding: "UTF-8", knownValidUTF8: true)
    }

    private func extract(html: [UInt8], encoding: String?, knownValidUTF8: Bool) -> MarkupGraph {
        var state = ExtractionState(configuration: configuration)
        guard html.count <= configuration.maxDocumentBytes else {
            state.error(
                .documentTooLarge, path: "",
                "the document has \(html.count) bytes, more than the limit of \(configuration.maxDocumentBytes); "
                    + "it was not read"
            )
            return MarkupGraph(nodes: [], diagnostics: state.finishedDiagnostics())
        }
        var input = HTMLInput.utf8(
            html, declaredEncoding: encoding, knownValidUTF8: knownValidUTF8, state: &state)
        let tooComplex = input.withUnsafeBufferPointer {
            StartTagScanner.firstTagExceeding(configuration.maxAttributesPerElement, in: $0)
        }
        if let offset = tooComplex {
            state.error(
                .tooManyAttributes, path: "",
                "a start tag at byte \(offset - input.startIndex) of the (UTF-8) document has more than "
                    + "\(configuration.maxAttributesPerElement) attributes; the document was read only up to it"
            )
            input = input[..<offset]
        } else if configuration.scansJSONLDOnlyDocuments,
            let scripts = input.withUnsafeBufferPointer({
                JSONLDScriptScanner.scripts(in: $0, configuration: configuration)
            })
        {
            // The same blocks, paths and reader as below, without the parse. (The start tag scan above stays: where
            // it stops at a tag, so does this reading, whatever the scanner thinks of the tag.)
            var nodes: [SchemaNode] = []
            for (number, script) in scripts.enumerated() where !state.isFull {
                let start = input.startIndex
                let text = Array(input[start + script.lowerBound..<start + script.upperBound])
                nodes += JSONLDReader.read(text, path: "script[\(number + 1)]", state: &state)
            }
            return MarkupGraph(nodes: nodes, diagnostics: state.finishedDiagnostics())
        }
        let document = input.withUnsafeBufferPointer { bytes in
            (tooComplex == nil && configuration.scansRegularDocuments
                ? HTMLIndexScanner.document(in: bytes, configuration: configuration) : nil)
                ?? HTMLDocument(utf8: bytes, maxElementDepth: configuration.maxElementDepth)
        }
        guard let document else { return MarkupGraph(nodes: [], diagnostics: state.finishedDiagnostics()) }
        switch document.stop {
        case .tooDeep:
            state.error(
                .documentTooDeep, path: "",
                "elements nest deeper than \(configuration.maxElementDepth); the parser stopped there, so markup "
                    + "after that point was not read"
            )
        case .other(let code):
            state.error(
                .htmlParseStopped, path: "",
                "libxml2 stopped parsing early (error \(code)); markup after that point was not read"
            )
        case nil:
            break
        }
        var nodes: [SchemaNode] = []
        for (number, script) in document.jsonLDScripts.enumerated() where !state.isFull {
            let path = "script[\(number + 1)]"
            guard !document.elements[script].flags.contains(.quoted) else {
                state.warning(.quotedPart, path: path, Self.quotedMessage("JSON-LD block"))
                continue
            }
            nodes += JSONLDReader.read(document.childText(script), path: path, state: &state)
        }
        if !state.isFull {
            nodes += MicrodataReader.read(document, state: &state)
        }
        return MarkupGraph(nodes: nodes, diagnostics: state.finishedDiagnostics())
    }

    /// Whether `extract(html:encoding:)` reads this document without libxml2 at all: by the JSON-LD scan
    /// (`Configuration.scansJSONLDOnlyDocuments`) or the index scan (`Configuration.scansRegularDocuments`), for
    /// tests and benchmarks.
    package func readsWithoutLibxml2(html: [UInt8], encoding: String? = nil) -> Bool {
        guard html.count <= configuration.maxDocumentBytes else { return false }
        if scansWithoutParsing(html: html, encoding: encoding) { return true }
        guard configuration.scansRegularDocuments else { return false }
        var state = ExtractionState(configuration: configuration)
        let input = HTMLInput.utf8(html, declaredEncoding: encoding, state: &state)
        return input.withUnsafeBufferPointer {
            StartTagScanner.firstTagExceeding(configuration.maxAttributesPerElement, in: $0) == nil
                && HTMLIndexScanner.document(in: $0, configuration: configuration) != nil
        }
    }

    /// Whether `extract(html:encoding:)` reads this document with the JSON-LD scan alone (see
    /// `Configuration.scansJSONLDOnlyDocuments`), for tests and benchmarks.
    package func scansWithoutParsing(html: [UInt8], encoding: String? = nil) -> Bool {
        guard configuration.scansJSONLDOnlyDocuments, html.count <= configuration.maxDocumentBytes else { return false }
        var state = ExtractionState(configuration: configuration)
        let input = HTMLInput.utf8(html, declaredEncoding: encoding, state: &state)
        return input.withUnsafeBufferPointer {
            StartTagScanner.firstTagExceeding(configuration.maxAttributesPerElement, in: $0) == nil
                && JSONLDScriptScanner.scripts(in: $0, configuration: configuration) != nil
        }
    }

    static func quotedMessage(_ what: String) -> String {
        "this \(what) is in a quoted or forwarded part of the message (an earlier message a reply or forward "
            + "includes); it is not this message's markup and was not read. Put the markup in the message itself"
    }

    /// Extracts the nodes of a JSON-LD document given on its own, such as an `application/ld+json`
    /// MIME part.
    ///
    /// - Parameters:
    ///   - jsonLD: The text of the block.
    ///   - path: Where it came from (`mime[1.2]`); diagnostics' paths start with it.
    package func extract(jsonLD: String, path: String) -> MarkupGraph {
        var state = ExtractionState(configuration: configuration)
        let count = jsonLD.utf8.count
        guard count <= configuration.maxJSONLDBlockBytes else {
            state.error(
                .jsonLDTooLarge, path: path,
                "the JSON-LD document has \(count) bytes, more than the limit of "
                    + "\(configuration.maxJSONLDBlockBytes); it was skipped"
            )
            return MarkupGraph(nodes: [], diagnostics: state.finishedDiagnostics())
        }
        let nodes = JSONLDReader.read(Array(jsonLD.utf8), path: path, state: &state)
        return MarkupGraph(nodes: nodes, diagnostics: state.finishedDiagnostics())
    }
}
