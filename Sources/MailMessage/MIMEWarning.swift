/// A problem met while reading a message's MIME structure or decoding a part: never fatal, the
/// reader went on as the warning says (RFC 2045 §2, RFC 2046 §5.1: be liberal in what you accept).
///
/// `MailMessage` does not depend on `Markup`; the extraction stage turns these into its own
/// diagnostics (`path` becomes `mime[1.2]`).
package struct MIMEWarning: Codable, Sendable, Hashable, CustomStringConvertible {
    /// A stable code, one of the `MIMEWarning.Code` constants (`mime.unknown-charset`).
    package var code: String
    /// The MIME path of the part concerned (`1.2`, IMAP numbering, RFC 3501 §6.4.5); empty for the
    /// message as a whole.
    package var path: String
    /// What was wrong and what the reader did; never carries body text or addresses.
    package var message: String

    package init(code: String, path: String, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    package var description: String { "\(code)\(path.isEmpty ? "" : " at \(path)"): \(message)" }

    /// The stable warning codes. Tests and later stages compare these, never the message text.
    package enum Code {
        /// The declared charset is unknown: decoded as UTF-8 with replacement characters.
        package static let unknownCharset = "mime.unknown-charset"
        /// US-ASCII (declared or by default) but 8-bit bytes present: decoded as UTF-8 or Windows-1252.
        package static let undeclared8Bit = "mime.undeclared-8bit"
        /// Bytes that are invalid in the charset were replaced with U+FFFD.
        package static let invalidBytes = "mime.invalid-bytes"
        /// A Content-Transfer-Encoding other than 7bit, 8bit, binary, quoted-printable or base64: kept raw.
        package static let unknownTransferEncoding = "mime.unknown-transfer-encoding"
        /// A quoted-printable or base64 body with malformed content (kept literally or skipped).
        package static let malformedEncoding = "mime.malformed-encoding"
        /// A transfer encoding on a multipart part, which RFC 2045 §6.4 forbids: ignored.
        package static let encodedMultipart = "mime.encoded-multipart"
        /// A Content-Type field that does not parse: the part is read as text/plain (RFC 2045 §5.2).
        package static let malformedContentType = "mime.malformed-content-type"
        /// A multipart part without a boundary parameter: its body is read as one part.
        package static let missingBoundary = "mime.missing-boundary"
        /// A multipart part whose boundary never appears in its body: the body is read as one part.
        package static let boundaryNotFound = "mime.boundary-not-found"
        /// A multipart body without its close-delimiter: the last part runs to the end of the body.
        package static let missingCloseDelimiter = "mime.missing-close-delimiter"
        /// More parts than `Configuration.maxParts`: the rest are not read.
        package static let tooManyParts = "mime.too-many-parts"
        /// Nesting deeper than `Configuration.maxDepth`: the part is kept as a leaf.
        package static let tooDeep = "mime.too-deep"
        /// A part decodes to more than `Configuration.maxDecodedBytesPerPart`: truncated.
        package static let partTooLarge = "mime.part-too-large"
        /// The decoded parts exceed `Configuration.maxDecodedBytesTotal`: later parts are not decoded.
        package static let totalTooLarge = "mime.total-too-large"
    }
}
