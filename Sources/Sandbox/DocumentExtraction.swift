package import Markup
import MailMessage

/// The extraction a worker performs on one document: the one place that turns bytes into a
/// schema.org graph, run by `gateway-worker` under confinement (and, for debugging only, in-process).
package enum DocumentExtraction {
    package static func run(_ request: ExtractionRequest) -> MarkupGraph {
        var configuration = MarkupExtractor.Configuration()
        if request.limits.maxItems > 0 { configuration.maxItems = Int(request.limits.maxItems) }
        if request.limits.maxDepth > 0 { configuration.maxItemDepth = Int(request.limits.maxDepth) }
        let extractor = MarkupExtractor(configuration: configuration)
        switch request.kind {
        case .html: return extractor.extract(html: request.document)
        case .jsonLD: return extractor.extract(jsonLD: String(decoding: request.document, as: UTF8.self), path: "document")
        case .email: return email(request.document, extractor: extractor)
        }
    }

    /// An email's markup: its text/html and application/ld+json parts, decoded (MIME, transfer
    /// encodings, charsets), never those inside an attached message/rfc822 (someone else's mail) nor
    /// parts sent as attachments; MIME problems become warnings with the part's path.
    static func email(_ bytes: [UInt8], extractor: MarkupExtractor) -> MarkupGraph {
        let message: RawMessage
        do {
            message = try RawMessage(bytes: bytes)
        } catch {
            return MarkupGraph(diagnostics: [Diagnostic(.error, Diagnostic.Code(error.code), error.reason)])
        }
        let parts = message.markupParts()
        var graph = MarkupGraph(
            diagnostics: parts.warnings.map { Diagnostic(.warning, Diagnostic.Code($0.code), path: "mime[\($0.path)]", $0.message) })
        for part in parts.parts {
            let path = "mime[\(part.path)]"
            if part.isAttachment {
                graph.diagnostics.append(
                    Diagnostic(.warning, Diagnostic.Code("mime.attachment-ignored"), path: path,
                               "markup in an attached file is not read; put it in the message body"))
                continue
            }
            let found: MarkupGraph
            switch part.kind {
            case .html: found = extractor.extract(html: Array(part.text.utf8), encoding: "UTF-8")
            case .jsonLD: found = extractor.extract(jsonLD: part.text, path: path)
            }
            graph.nodes += found.nodes
            graph.diagnostics += found.diagnostics.map { diagnostic in
                var diagnostic = diagnostic
                if part.kind == .html { diagnostic.path = diagnostic.path.isEmpty ? path : "\(path) \(diagnostic.path)" }
                return diagnostic
            }
        }
        return graph
    }
}
