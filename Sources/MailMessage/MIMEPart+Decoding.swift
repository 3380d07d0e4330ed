extension MIMEPart {
    /// A part's body with its transfer encoding removed.
    package struct DecodedBody: Sendable {
        /// The decoded bytes.
        package var bytes: ArraySlice<UInt8>
        /// True when the body decoded to more than the limit and was cut there.
        package var truncated: Bool
        /// Problems met (malformed encoding, unknown encoding), with this part's path.
        package var warnings: [MIMEWarning]
    }

    /// A part's content as text.
    package struct DecodedText: Sendable {
        /// The text.
        package var text: String
        /// The charset used, as iconv names it (`UTF-8`, `WINDOWS-1252`).
        package var charset: String
        /// True when the body decoded to more than the limit and was cut there.
        package var truncated: Bool
        /// Problems met (encoding, charset), with this part's path.
        package var warnings: [MIMEWarning]
    }

    /// The body with its Content-Transfer-Encoding removed (RFC 2045 §6): quoted-printable and
    /// base64 decoded leniently, 7bit/8bit/binary as they are, an unknown encoding kept raw with
    /// `mime.unknown-transfer-encoding`. Truncation at `limit` is reported in `truncated`, not as
    /// a warning: the caller knows which of its limits it passed.
    package func decodedBody(limit: Int = .max) -> DecodedBody {
        let limit = max(0, limit)
        var warnings: [MIMEWarning] = []
        let encoding = contentTransferEncoding
        if encoding == .base64 {
            let decoded = Base64.decode(body, limit: limit)
            if decoded.hadJunk {
                warnings.append(
                    MIMEWarning(
                        code: MIMEWarning.Code.malformedEncoding, path: path,
                        message:
                            "base64 body with bytes outside the alphabet or a broken last quantum; they were skipped"))
            }
            return DecodedBody(bytes: decoded.bytes[...], truncated: decoded.truncated, warnings: warnings)
        }
        if encoding == .quotedPrintable {
            let decoded = QuotedPrintable.decode(body, limit: limit)
            if decoded.hadMalformedEscapes {
                warnings.append(
                    MIMEWarning(
                        code: MIMEWarning.Code.malformedEncoding, path: path,
                        message: "quoted-printable body with '=' not followed by two hex digits; kept literally"))
            }
            return DecodedBody(bytes: decoded.bytes[...], truncated: decoded.truncated, warnings: warnings)
        }
        if !encoding.isIdentity {
            warnings.append(
                MIMEWarning(
                    code: MIMEWarning.Code.unknownTransferEncoding, path: path,
                    message:
                        "unknown Content-Transfer-Encoding \(Self.clipped(encoding.name)); the body is read as it is"))
        }
        let truncated = body.count > limit
        return DecodedBody(bytes: truncated ? body.prefix(limit) : body, truncated: truncated, warnings: warnings)
    }

    /// The content as text: transfer encoding removed, then converted from its charset.
    ///
    /// The charset is the `charset` parameter; for text/html without one, a `<meta charset>` or
    /// `<meta http-equiv content="...; charset=...">` in the first 1024 bytes (the WHATWG prescan,
    /// simplified); else US-ASCII (RFC 2045 §5.2), which `Charset` reads as UTF-8 or Windows-1252
    /// when 8-bit bytes show up.
    package func decodedText(limit: Int = .max) -> DecodedText {
        let body = decodedBody(limit: limit)
        var warnings = body.warnings
        var label = contentType.charset
        if label == nil && contentType.type == "text" && contentType.subtype == "html" {
            label = Self.sniffedHTMLCharset(body.bytes)
        } else if label == nil && (contentType.subtype == "json" || contentType.subtype.hasSuffix("+json")) {
            label = "utf-8"  // JSON text is UTF-8 (RFC 8259 §8.1)
        }
        let decoded = Charset.decode(body.bytes, charset: label)
        if decoded.unknownCharset {
            warnings.append(
                MIMEWarning(
                    code: MIMEWarning.Code.unknownCharset, path: path,
                    message: "unknown charset \(Self.clipped(label ?? "")); read as UTF-8"))
        }
        if decoded.undeclared8Bit {
            warnings.append(
                MIMEWarning(
                    code: MIMEWarning.Code.undeclared8Bit, path: path,
                    message: "8-bit bytes in a part declared (or defaulting to) US-ASCII; read as \(decoded.charset)"))
        }
        if decoded.replacedInvalidBytes {
            warnings.append(
                MIMEWarning(
                    code: MIMEWarning.Code.invalidBytes, path: path,
                    message: "bytes invalid in \(decoded.charset) were replaced with U+FFFD"))
        }
        return DecodedText(text: decoded.text, charset: decoded.charset, truncated: body.truncated, warnings: warnings)
    }

    /// The charset a `<meta>` element declares in the first 1024 bytes of an HTML document, if any:
    /// the value after the first `charset=` inside a `<meta` tag. A UTF-16 declaration means UTF-8
    /// (HTML §13.2.3.2: bytes that reached the prescan are not UTF-16).
    static func sniffedHTMLCharset(_ bytes: ArraySlice<UInt8>) -> String? {
        let head = Array(bytes.prefix(1024))
        let lowered = head.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        let meta = Array("<meta".utf8)
        let charset = Array("charset".utf8)
        var index = 0
        while index + meta.count <= lowered.count {
            guard lowered[index..<(index + meta.count)].elementsEqual(meta) else {
                index += 1
                continue
            }
            // Within this tag, find charset[ ]=[ ]["']value.
            var cursor = index + meta.count
            let tagEnd = lowered[cursor...].firstIndex(of: UInt8(ascii: ">")) ?? lowered.count
            while cursor + charset.count <= tagEnd {
                if lowered[cursor..<(cursor + charset.count)].elementsEqual(charset) {
                    var value = cursor + charset.count
                    while value < tagEnd && (lowered[value] == .space || lowered[value] == .tab) { value += 1 }
                    guard value < tagEnd, lowered[value] == .equalsSign else { break }
                    value += 1
                    while value < tagEnd
                        && (lowered[value] == .space || lowered[value] == .tab || lowered[value] == .quotationMark
                            || lowered[value] == UInt8(ascii: "'"))
                    {
                        value += 1
                    }
                    let start = value
                    while value < tagEnd, ContentType.isTokenByte(lowered[value]) || lowered[value] == .colon {
                        value += 1
                    }
                    guard value > start else { break }
                    let label = String(decoding: lowered[start..<value], as: UTF8.self)
                    return label.hasPrefix("utf-16") ? "utf-8" : label
                }
                cursor += 1
            }
            index = tagEnd
        }
        return nil
    }

    static func clipped(_ text: String) -> String {
        let printable = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.map(Character.init))
        return printable.count <= 40 ? printable : String(printable.prefix(40)) + "…"
    }
}
