/// What the markup prefilter found in a message: whether it may carry schema.org markup at all, decided before
/// anything costly (DKIM, the sandbox, the store) is spent on it. See ``RawMessage/markupEvidence(configuration:)``.
package struct MarkupEvidence: Sendable, Hashable, CustomStringConvertible {
    /// The kind of evidence.
    package enum Kind: String, Sendable, Hashable {
        /// An `application/ld+json` body part (read whole by the extractor).
        case jsonLDPart = "application/ld+json part"
        /// `<script` in a text/html part: every JSON-LD block is a script element.
        case scriptElement = "<script in text/html"
        /// `itemscope` in a text/html part: every Microdata item is an element with that attribute.
        case itemscope = "itemscope in text/html"
    }

    /// The first evidence found, nil when there is none: the extractor would find no markup in the message.
    package var kind: Kind?
    /// The part it was found in (IMAP numbering, as in ``MIMEPart/path``).
    package var path: String?
    /// The text/html parts read (not sent as an attachment, not inside an attached message).
    package var partsRead = 0
    /// Bytes of decoded text scanned, over all those parts.
    package var bytesScanned = 0

    package init(kind: Kind? = nil, path: String? = nil, partsRead: Int = 0, bytesScanned: Int = 0) {
        self.kind = kind
        self.path = path
        self.partsRead = partsRead
        self.bytesScanned = bytesScanned
    }

    /// Whether the message may carry markup and must go the whole way.
    package var hasMarkup: Bool { kind != nil }

    package var description: String {
        guard let kind else { return "no markup (\(partsRead) HTML parts, \(bytesScanned) bytes scanned)" }
        return "\(kind.rawValue) at part \(path ?? "?")"
    }
}
