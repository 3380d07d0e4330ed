@testable import MailMessage

/// The bytes of `text` with every Unicode scalar below 256 written as that one byte: ISO-8859-1,
/// and Windows-1252 for scalars written as `\u{80}`...`\u{9F}`. For fixtures with raw 8-bit bytes.
func latin1(_ text: String) -> [UInt8] {
    text.unicodeScalars.map { scalar in
        precondition(scalar.value < 256, "latin1 fixture with a scalar above U+00FF")
        return UInt8(scalar.value)
    }
}

/// The UTF-8 bytes of `text`.
func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

extension Array where Element == MIMEWarning {
    /// The warning codes, in order.
    var codes: [String] { map(\.code) }
}
