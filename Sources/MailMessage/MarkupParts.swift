/// The parts of a message that may carry reservation markup, decoded to text, for the extraction
/// stage: `text/html` (JSON-LD in `<script>` elements, Microdata) and `application/ld+json`.
package struct MarkupParts: Sendable {
    /// What a part holds.
    package enum Kind: String, Codable, Sendable, Hashable {
        /// A text/html document.
        case html
        /// An application/ld+json document (JSON-LD 1.1 §9.1).
        case jsonLD = "json-ld"
    }

    /// One decoded part.
    package struct Part: Sendable {
        /// What it holds.
        package var kind: Kind
        /// Its MIME path (`1.2`), for diagnostics.
        package var path: String
        /// The decoded text.
        package var text: String
        /// The charset it was decoded from, as iconv names it.
        package var charset: String
        /// True when the sender marked it `Content-Disposition: attachment` (RFC 2183 §2.2): still the
        /// sender's own content, but not the message body a reader sees.
        package var isAttachment: Bool
        /// True when it was cut at a decoding limit.
        package var truncated: Bool

        package init(
            kind: Kind, path: String, text: String, charset: String, isAttachment: Bool = false, truncated: Bool = false
        ) {
            self.kind = kind
            self.path = path
            self.text = text
            self.charset = charset
            self.isAttachment = isAttachment
            self.truncated = truncated
        }
    }

    /// The parts in document order.
    package var parts: [Part]
    /// Everything the MIME reader and decoders warned about, structure first, then per part.
    package var warnings: [MIMEWarning]

    package init(parts: [Part] = [], warnings: [MIMEWarning] = []) {
        self.parts = parts
        self.warnings = warnings
    }
}
