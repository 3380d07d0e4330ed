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
    /// The charset the transport declared (HTTP or MIME `charset`) for an HTML document, or nil to
    /// let the document say (byte order mark, `<meta charset>`). At most `maxEncodingBytes`
    /// printable ASCII bytes.
    package var encoding: String?
    package var limits: Limits
    /// The document exactly as received (not escaped or re-encoded).
    package var document: [UInt8]

    /// Longest charset label a request carries; longer ones are dropped (the document decides).
    package static let maxEncodingBytes = 64

    package init(
        id: UInt64, kind: DocumentKind, encoding: String? = nil, limits: Limits = Limits(), document: [UInt8]
    ) {
        self.id = id
        self.kind = kind
        self.encoding = encoding.flatMap(ExtractionRequest.validEncoding)
        self.limits = limits
        self.document = document
    }

    /// `label` if it can be carried (printable ASCII, short), else nil.
    static func validEncoding(_ label: String) -> String? {
        let bytes = label.utf8
        guard !bytes.isEmpty, bytes.count <= maxEncodingBytes, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return nil
        }
        return label
    }
}
