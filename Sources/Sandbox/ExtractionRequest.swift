/// One document for a worker's handler: what it is, the limits to apply, and its raw bytes.
package struct ExtractionRequest: Sendable, Hashable {
    /// Per-document limits the gateway's policy sets; the handler applies them on top of its own
    /// defaults. Zero means "the handler's default".
    package struct Limits: Sendable, Hashable {
        /// Most top-level items to extract.
        package var maxItems: UInt32
        /// Deepest nesting of items (Microdata `itemscope` in `itemscope`, JSON-LD objects).
        package var maxDepth: UInt32
        /// Most bytes the encoded answer (the graph as JSON) may take; a larger graph is refused
        /// with `sandbox.too-large`.
        package var maxResponseBytes: UInt32

        package init(maxItems: UInt32 = 0, maxDepth: UInt32 = 0, maxResponseBytes: UInt32 = 16 << 20) {
            self.maxItems = maxItems
            self.maxDepth = maxDepth
            self.maxResponseBytes = maxResponseBytes
        }
    }

    /// Chosen by the pool; the worker's answer must carry the same one.
    package var id: UInt64
    package var kind: DocumentKind
    package var limits: Limits
    /// The document exactly as received (not escaped or re-encoded).
    package var document: [UInt8]

    package init(id: UInt64, kind: DocumentKind, limits: Limits = Limits(), document: [UInt8]) {
        self.id = id
        self.kind = kind
        self.limits = limits
        self.document = document
    }
}
