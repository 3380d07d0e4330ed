/// A parsed `Content-Type` field (RFC 2045 §5.1): `type/subtype` lower-cased, and its parameters.
package struct ContentType: Sendable, Hashable, CustomStringConvertible {
    /// The top-level media type, lower-cased (`text`, `multipart`, `message`).
    package var type: String
    /// The subtype, lower-cased (`html`, `alternative`, `rfc822`).
    package var subtype: String
    /// The parameters (`charset`, `boundary`, `name`), RFC 2231 continuations and charsets decoded.
    package var parameters: MIMEParameters

    package init(type: String, subtype: String, parameters: MIMEParameters = MIMEParameters()) {
        self.type = type.fastLowercased
        self.subtype = subtype.fastLowercased
        self.parameters = parameters
    }

    /// Parses a field value (`text/html; charset="utf-8"`). Returns nil when there is no
    /// `type/subtype`: RFC 2045 §5.2 then says to read the part as text/plain; charset=us-ascii.
    /// A missing `;` before the parameters (`text/html charset=utf-8`) is tolerated.
    package init?(parsing value: String) {
        self.init(parsing: Array(value.utf8)[...])
    }

    /// Parses a field value given as bytes (a header field's unfolded value).
    package init?(parsing value: ArraySlice<UInt8>) {
        var scanner = FieldScanner(value)
        scanner.skipCFWS()
        let type = scanner.run(while: ContentType.isTokenByte)
        scanner.skipCFWS()
        guard !type.isEmpty, scanner.current == UInt8(ascii: "/") else { return nil }
        scanner.advance()
        scanner.skipCFWS()
        let subtype = scanner.run(while: ContentType.isTokenByte)
        guard !subtype.isEmpty else { return nil }
        self.init(
            type: String(decoding: type, as: UTF8.self),
            subtype: String(decoding: subtype, as: UTF8.self),
            parameters: MIMEParameters.parse(&scanner)
        )
    }

    /// `type/subtype`.
    package var mediaType: String { "\(type)/\(subtype)" }
    /// The `charset` parameter, if any.
    package var charset: String? { parameters["charset"] }
    /// The `boundary` parameter of a multipart type (RFC 2046 §5.1.1), if any and not empty.
    package var boundary: String? {
        guard let boundary = parameters["boundary"], !boundary.isEmpty else { return nil }
        return boundary
    }
    /// multipart/* (RFC 2046 §5.1).
    package var isMultipart: Bool { type == "multipart" }
    /// An encapsulated message: message/rfc822 (RFC 2046 §5.2.1) or message/global (RFC 6532 §3.5).
    package var isEncapsulatedMessage: Bool { type == "message" && (subtype == "rfc822" || subtype == "global") }

    package var description: String { mediaType }

    /// text/plain; charset=us-ascii: the default for a part without a Content-Type (RFC 2045 §5.2).
    package static let defaultText = ContentType(
        type: "text", subtype: "plain", parameters: MIMEParameters(["charset": "us-ascii"]))
    /// message/rfc822: the default inside multipart/digest (RFC 2046 §5.1.5).
    package static let defaultDigestEntry = ContentType(type: "message", subtype: "rfc822")

    /// RFC 2045 §5.1 token characters: printable ASCII except SPACE and tspecials.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        guard byte > 0x20 && byte < 0x7F else { return false }
        switch byte {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "\\"), UInt8(ascii: "\""),
            UInt8(ascii: "/"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "?"), UInt8(ascii: "="):
            return false
        default:
            return true
        }
    }
}
