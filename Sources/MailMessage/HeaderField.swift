/// One header field, kept as the exact bytes of the message (RFC 5322 §2.2).
package struct HeaderField: Sendable {
    /// The field name as written (`DKIM-Signature`, `from`, ...).
    package let name: String
    /// The field name in lower case, for case-insensitive matching.
    package let lowercasedName: String
    /// The whole field, name through the CRLF that ends its last line, exactly as in the message.
    package let raw: ArraySlice<UInt8>
    /// The value: from just after the colon to just before the final CRLF (folding kept).
    package let valueRange: Range<Int>

    package init(name: String, raw: ArraySlice<UInt8>, valueRange: Range<Int>) {
        self.name = name
        self.lowercasedName = name.fastLowercased
        self.raw = raw
        self.valueRange = valueRange
    }

    /// The raw value bytes (after the colon, folding CRLFs kept, final CRLF removed).
    package var rawValue: ArraySlice<UInt8> { raw[valueRange] }

    /// The field without its final CRLF: what DKIM signs for the `DKIM-Signature` field itself.
    package var rawWithoutTrailingCRLF: ArraySlice<UInt8> { raw[raw.startIndex..<valueRange.upperBound] }

    /// The value unfolded (RFC 5322 §2.2.3: CRLF before WSP removed), leading and trailing WSP trimmed.
    package var unfoldedValue: String {
        String(decoding: unfoldedBytes, as: UTF8.self)
    }

    /// The value as text for people: unfolded, trimmed, RFC 2047 encoded words decoded
    /// (`=?utf-8?Q?Caf=C3=A9?=` → `Café`), raw 8-bit text read as UTF-8 (RFC 6532) or, when it is not
    /// valid UTF-8, Windows-1252. For unstructured fields (Subject, Comments); address fields parse
    /// with `MailAddress.list(parsing:)`, which decodes display names the same way.
    package var decodedValue: String {
        EncodedWords.decode(unfoldedBytes[...])
    }

    /// The value bytes unfolded (every CR and LF removed) and trimmed of leading and trailing WSP.
    var unfoldedBytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(valueRange.count)
        for byte in rawValue where byte != .carriageReturn && byte != .lineFeed { out.append(byte) }
        var start = out.startIndex
        var end = out.endIndex
        while start < end && (out[start] == .space || out[start] == .tab) { start += 1 }
        while end > start && (out[end - 1] == .space || out[end - 1] == .tab) { end -= 1 }
        if start > 0 || end < out.count { return Array(out[start..<end]) }
        return out
    }
}
