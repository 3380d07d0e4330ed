/// What a document handed to extraction is, which decides how the worker reads it.
package enum DocumentKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An RFC 5322 message: its text/html and application/ld+json parts are decoded and extracted.
    case email = 1
    /// An HTML document (a fetched page, or one part of a message): JSON-LD `<script>` blocks and
    /// Microdata items.
    case html = 2
    /// A JSON-LD document on its own (`application/ld+json`, JSON-LD 1.1 §9.1).
    case jsonLD = 3

    package var description: String {
        switch self {
        case .email: "email"
        case .html: "html"
        case .jsonLD: "json-ld"
        }
    }
}
