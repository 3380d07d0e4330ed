package import Markup

/// Where extraction runs: in confined workers (`SandboxedExtractor`, production) or in the
/// gateway's own process (`InProcessExtractor`, debugging only). Both give the same answers for
/// the same handler, so tests and benchmarks can compare them.
package protocol Extractor: Sendable {
    /// Extracts the markup of one document, or says why it could not.
    func extract(_ document: [UInt8], kind: DocumentKind, deadline: Duration) async -> Result<
        MarkupGraph, SandboxFailure
    >
}

/// Extraction in a `WorkerPool`: the production mode.
package struct SandboxedExtractor: Extractor {
    package let pool: WorkerPool

    package init(pool: WorkerPool) {
        self.pool = pool
    }

    package func extract(
        _ document: [UInt8], kind: DocumentKind, deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure> {
        await pool.extract(document, kind: kind, deadline: deadline)
    }
}

/// Extraction in the gateway's own process, without any confinement (`sandbox = off`): a parser
/// bug here is a bug in the gateway, with its keys and its store. For debugging a handler under a
/// debugger only; the production policy refuses it.
///
/// The deadline cannot be enforced in-process (a running parse cannot be stopped), so it is
/// ignored; the size limit holds.
package struct InProcessExtractor: Extractor {
    private let handler: @Sendable (ExtractionRequest) -> MarkupGraph
    private let maxDocumentBytes: Int
    private let limits: ExtractionRequest.Limits

    /// - Parameter handler: the same handler the worker executable runs.
    package init(
        unconfinedHandler handler: @escaping @Sendable (ExtractionRequest) -> MarkupGraph,
        maxDocumentBytes: Int = 32 << 20, limits: ExtractionRequest.Limits = ExtractionRequest.Limits()
    ) {
        self.handler = handler
        self.maxDocumentBytes = maxDocumentBytes
        self.limits = limits
    }

    package func extract(
        _ document: [UInt8], kind: DocumentKind, deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure> {
        guard document.count <= maxDocumentBytes else {
            return .failure(
                SandboxFailure(
                    code: .tooLarge,
                    reason:
                        "the \(kind) document has \(document.count) bytes, more than the limit of \(maxDocumentBytes)"))
        }
        return .success(handler(ExtractionRequest(id: 0, kind: kind, limits: limits, document: document)))
    }
}
