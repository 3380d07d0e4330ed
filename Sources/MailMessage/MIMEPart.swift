/// One entity of a message's MIME structure (RFC 2045 §2.4, RFC 2046): the message itself, a body
/// part of a multipart, or the message encapsulated in a message/rfc822 part.
///
/// Parts do not copy the message: `headerFields` and `body` are slices of the message's bytes
/// (or, for a message/rfc822 part sent base64 or quoted-printable, of its decoded body).
package struct MIMEPart: Sendable {
    /// Where the part is, numbered as IMAP numbers body sections (RFC 3501 §6.4.5): `1`, `1.2`,
    /// `2.1.3`. A single-part message's body is `1`; a multipart message itself is `` (empty), and
    /// the multipart inside a message/rfc822 part at `2` is `2` as well (its parts are `2.1`, ...).
    package let path: String
    /// Nesting depth: 0 for the message itself, one more for each multipart or message/rfc822 level.
    package let depth: Int
    /// The part's own header fields (for the message itself: all of the message's fields).
    package let headerFields: [HeaderField]
    /// The content type: as declared, or the default where none was (text/plain; charset=us-ascii,
    /// or message/rfc822 inside multipart/digest, RFC 2046 §5.1.5) or where it did not parse.
    package let contentType: ContentType
    /// The transfer encoding as declared (7bit when none was).
    package let contentTransferEncoding: ContentTransferEncoding
    /// The `Content-Disposition`, when given and parseable.
    package let contentDisposition: ContentDisposition?
    /// The body exactly as transmitted (still transfer-encoded): after the part's header section,
    /// up to (not including) the CRLF before the next boundary delimiter.
    package let body: ArraySlice<UInt8>
    /// The body parts of a multipart, in order; for a message/rfc822 part, the one encapsulated
    /// message; empty otherwise (and where a limit stopped the reader).
    package let children: [MIMEPart]
    /// True for a message/rfc822 (or message/global) part: someone else's mail, forwarded or
    /// bounced. It and everything inside it are never a source of the sender's markup.
    package let isAttachedMessage: Bool
    /// True for every part inside an attached message.
    package let isInsideAttachedMessage: Bool

    package init(
        path: String, depth: Int, headerFields: [HeaderField], contentType: ContentType,
        contentTransferEncoding: ContentTransferEncoding, contentDisposition: ContentDisposition?,
        body: ArraySlice<UInt8>, children: [MIMEPart], isAttachedMessage: Bool, isInsideAttachedMessage: Bool
    ) {
        self.path = path
        self.depth = depth
        self.headerFields = headerFields
        self.contentType = contentType
        self.contentTransferEncoding = contentTransferEncoding
        self.contentDisposition = contentDisposition
        self.body = body
        self.children = children
        self.isAttachedMessage = isAttachedMessage
        self.isInsideAttachedMessage = isInsideAttachedMessage
    }

    /// The fields named `name` (case-insensitive), top first.
    package func fields(named name: String) -> [HeaderField] {
        let wanted = name.lowercased()
        return headerFields.filter { $0.lowercasedName == wanted }
    }

    /// True when the sender marked the part as an attachment (RFC 2183 §2.2).
    package var isAttachment: Bool { contentDisposition?.isAttachment ?? false }
}
