package import Markup

/// Where extraction runs: in confined workers (`SandboxedExtractor`, production) or in the
/// gateway's own process (`InProcessExtractor`, debugging only). Both run `DocumentExtraction`,
/// so they give the same graph for the same document.
package protocol Extractor: Sendable {
    /// Extracts the markup of one document, or says why it could not.
    ///
    /// - Parameters:
    ///   - document: the bytes as received.
    ///   - kind: what they are.
    ///   - encoding: for HTML, the charset the transport declared (HTTP or MIME), if any.
    ///   - deadline: how long extraction may take.
    func extract(
        _ document: [UInt8], kind: DocumentKind, encoding: String?, deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure>
}

extension Extractor {
    /// Extracts the markup of one document whose encoding the document itself declares.
    package func extract(
        _ document: [UInt8], kind: DocumentKind, deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure> {
        await extract(document, kind: kind, encoding: nil, deadline: deadline)
    }
}

/// Extraction in a `WorkerPool`: the production mode.
package struct SandboxedExtractor: Extractor {
    package let pool: WorkerPool

    package init(pool: WorkerPool) {
        self.pool = pool
    }

    package func extract(
        _ document: [UInt8], kind: DocumentKind, encoding: String?, deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure> {
        await pool.extract(document, kind: kind, encoding: encoding, deadline: deadline)
    }
}

/// Extraction in the gateway's own process, without any confinement (`sandbox = off`): a parser
/// bug here is a bug in the gateway, with its keys and its store. For debugging under a debugger
/// only; the production policy refuses it.
///
/// The deadline cannot be enforced in-process (a running parse cannot be stopped), so it is
/// ignored; the size limit holds.
package struct InProcessExtractor: Extractor {
    private let handler: @Sendable (ExtractionRequest) -> MarkupGraph
    private let maxDocumentBytes: Int
    private let limits: ExtractionRequest.Limits

    /// Runs `extraction` unconfined, with the same size limit and per-document limits a pool would
    /// apply.
    package init(
        unconfined extraction: DocumentExtraction, maxDocumentBytes: Int = 32 << 20,
        limits: ExtractionRequest.Limits = ExtractionRequest.Limits()
    ) {
        self.init(unconfinedHandler: extraction.extract, maxDocumentBytes: maxDocumentBytes, limits: limits)
    }

    /// Runs any handler unconfined (tests).
    package init(
        unconfinedHandler handler: @escaping @Sendable (ExtractionRequest) -> MarkupGraph,
        maxDocumentBytes: Int = 32 << 20, limits: ExtractionRequest.Limits = ExtractionRequest.Limits()
    ) {
        self.handler = handler
        self.maxDocumentBytes = maxDocumentBytes
        self.limits = limits
    }

    package func extract(
        _ document: [UInt8], kind: DocumentKind, encoding: String?, deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure> {
        guard document.count <= maxDocumentBytes else {
            return .failure(
                SandboxFailure(
                    code: .tooLarge,
                    reason:
                        "the \(kind) document has \(document.count) bytes, more than the limit of \(maxDocumentBytes)"
                ))
        }
        let request = ExtractionRequest(id: 0, kind: kind, encoding: encoding, limits: limits, document: document)
        return .success(handler(request))
    }
}
