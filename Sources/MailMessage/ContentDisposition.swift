/// A parsed `Content-Disposition` field (RFC 2183 §2): `inline` or `attachment`, and its parameters
/// (`filename`, RFC 2231 encoded or continued).
package struct ContentDisposition: Sendable, Hashable {
    /// The disposition type, lower-cased (`inline`, `attachment`, or an extension).
    package var type: String
    /// The parameters (`filename`, `size`, ...).
    package var parameters: MIMEParameters

    package init(type: String, parameters: MIMEParameters = MIMEParameters()) {
        self.type = type.lowercased()
        self.parameters = parameters
    }

    /// Parses a field value; nil when it has no disposition type.
    package init?(parsing value: ArraySlice<UInt8>) {
        var scanner = FieldScanner(value)
        scanner.skipCFWS()
        let type = scanner.run(while: ContentType.isTokenByte)
        guard !type.isEmpty else { return nil }
        self.init(type: String(decoding: type, as: UTF8.self), parameters: MIMEParameters.parse(&scanner))
    }

    /// True for `attachment` (RFC 2183 §2.2): the sender meant it to be saved, not shown.
    package var isAttachment: Bool { type == "attachment" }
    /// The `filename` parameter, if any.
    package var filename: String? { parameters["filename"] }
}
