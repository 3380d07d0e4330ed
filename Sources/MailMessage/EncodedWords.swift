/// RFC 2047 encoded words (`=?charset?B?...?=`, `=?charset?Q?...?=`) in header text.
///
/// Decoding follows RFC 2047 §6 with the leniency real mail needs:
/// - any charset goes through `Charset` (so `=?windows-1252?Q?...?=` and `=?gb2312?B?...?=` work),
///   with an RFC 2231 §5 language suffix (`=?utf-8*en?Q?...?=`) ignored;
/// - linear whitespace between two adjacent encoded words is dropped (§6.2), and adjacent words in
///   the same charset are joined before conversion, so a character split across words survives;
/// - in `Q`, `_` is a space and `=XX` a byte (§4.2); a malformed `=` is kept;
/// - a word is recognised even when text touches it (`Re:=?utf-8?Q?...?=`), as mail readers do;
/// - a malformed word (unknown encoding, no `?=` before whitespace) is left as written.
/// Text outside encoded words is UTF-8 (RFC 6532), or Windows-1252 when it is not valid UTF-8.
/// Decoded CR, LF and NUL become spaces, so a decoded value stays on one line.
package enum EncodedWords {
    /// The longest encoded word considered; RFC 2047 §2 allows 75 bytes, senders write longer ones.
    static let maximumWordLength = 1024

    /// Decodes the encoded words in `text`.
    package static func decode(_ text: String) -> String {
        decode(Array(text.utf8)[...])
    }

    /// Decodes the encoded words in header bytes (an unfolded value).
    package static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        guard containsWordStart(bytes) else { return Charset.decode(bytes, charset: nil).text }
        var result = ""
        result.reserveCapacity(bytes.count)
        var plainStart = bytes.startIndex  // start of text not yet written
        var pending: (charset: String, bytes: [UInt8])? = nil  // decoded words not yet converted
        var index = bytes.startIndex

        func flushPending() {
            guard let words = pending else { return }
            pending = nil
            result += sanitized(Charset.decode(words.bytes[...], charset: words.charset).text)
        }

        while index < bytes.endIndex {
            guard bytes[index] == .equalsSign, index + 1 < bytes.endIndex, bytes[index + 1] == .questionMark,
                let word = parseWord(bytes, at: index)
            else {
                index += 1
                continue
            }
            let between = bytes[plainStart..<index]
            let onlyWhitespace = between.allSatisfy {
                $0 == .space || $0 == .tab || $0 == .carriageReturn || $0 == .lineFeed
            }
            if pending != nil && onlyWhitespace {
                // Adjacent encoded words: the whitespace between them is not part of the text (§6.2).
                if pending?.charset.lowercased() != word.charset.lowercased() { flushPending() }
            } else {
                flushPending()
                result += Charset.decode(between, charset: nil).text
            }
            if pending == nil {
                pending = (word.charset, word.bytes)
            } else {
                pending?.bytes.append(contentsOf: word.bytes)
            }
            index = word.end
            plainStart = word.end
        }
        flushPending()
        result += Charset.decode(bytes[plainStart...], charset: nil).text
        return result
    }

    /// Parses `=?charset?encoding?text?=` at `start`; nil when it is not a well-formed word.
    private static func parseWord(_ bytes: ArraySlice<UInt8>, at start: Int) -> (
        charset: String, bytes: [UInt8], end: Int
    )? {
        let limit = min(bytes.endIndex, start + maximumWordLength)
        var index = start + 2
        let charsetStart = index
        while index < limit && bytes[index] != .questionMark {
            let byte = bytes[index]
            if byte <= .space || byte >= 0x7F { return nil }
            index += 1
        }
        guard index < limit, index > charsetStart else { return nil }
        let charset = String(decoding: bytes[charsetStart..<index], as: UTF8.self)
        // The encoding letter and the '?' after it.
        guard index + 2 < limit, bytes[index + 2] == .questionMark else { return nil }
        let encoding = bytes[index + 1] | 0x20  // lower-cased
        guard encoding == UInt8(ascii: "b") || encoding == UInt8(ascii: "q") else { return nil }
        let textStart = index + 3
        index = textStart
        // The text runs to the first "?=", and has no whitespace in it.
        while index + 1 < limit {
            let byte = bytes[index]
            if byte == .space || byte == .tab || byte == .carriageReturn || byte == .lineFeed { return nil }
            if byte == .questionMark && bytes[index + 1] == .equalsSign { break }
            index += 1
        }
        guard index + 1 < limit else { return nil }
        let text = bytes[textStart..<index]
        let decoded = encoding == UInt8(ascii: "b") ? Base64.decode(text).bytes : decodeQ(text)
        return (charset, decoded, index + 2)
    }

    /// The `Q` encoding (RFC 2047 §4.2): quoted-printable with `_` for space, no soft line breaks.
    static func decodeQ(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: "_") {
                output.append(.space)
            } else if byte == .equalsSign, index + 2 < text.endIndex,
                let high = text[index + 1].hexDigitValue,
                let low = text[index + 2].hexDigitValue
            {
                output.append(high << 4 | low)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return output
    }

    private static func containsWordStart(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == .equalsSign && bytes[index + 1] == .questionMark { return true }
            index += 1
        }
        return false
    }

    private static func sanitized(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == .carriageReturn || $0 == .lineFeed || $0 == 0 }) else { return text }
        return String(
            decoding: text.utf8.map { $0 == .carriageReturn || $0 == .lineFeed || $0 == 0 ? .space : $0 }, as: UTF8.self
        )
    }
}
