/// A `Content-Transfer-Encoding` (RFC 2045 §6.1), lower-cased. A part without one is 7bit.
package struct ContentTransferEncoding: Sendable, Hashable, CustomStringConvertible {
    /// The mechanism, lower-cased and trimmed (`base64`, `quoted-printable`, `x-uuencode`).
    package let name: String

    package init(_ name: String) { self.name = name.fastLowercased }

    /// Parses a field value: comments and whitespace around the token are skipped.
    package init(parsing value: ArraySlice<UInt8>) {
        var scanner = FieldScanner(value)
        scanner.skipCFWS()
        let token = scanner.run { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "(") && $0 != .semicolon }
        self.init(String(decoding: token, as: UTF8.self))
    }

    package static let sevenBit = ContentTransferEncoding("7bit")
    package static let eightBit = ContentTransferEncoding("8bit")
    package static let binary = ContentTransferEncoding("binary")
    package static let quotedPrintable = ContentTransferEncoding("quoted-printable")
    package static let base64 = ContentTransferEncoding("base64")

    /// 7bit, 8bit and binary: the body is the content as it is (RFC 2045 §6.2). An empty value is
    /// taken as the default, 7bit.
    package var isIdentity: Bool {
        name == "7bit" || name == "8bit" || name == "binary" || name.isEmpty
    }

    /// One of the five encodings RFC 2045 defines.
    package var isKnown: Bool { isIdentity || self == .quotedPrintable || self == .base64 }

    package var description: String { name }
}
