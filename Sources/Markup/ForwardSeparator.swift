internal import Glibc

/// The text line mail clients write above a quoted or forwarded message when they mark it with no
/// element of its own (Outlook's "-----Original Message-----", "---------- Forwarded message
/// ---------", and the same in the languages clients are most used in): everything after it is the
/// earlier message (see `QuoteMarker`).
///
/// A separator is two or more hyphens, one of the phrases below (ASCII letters in any case), and two
/// or more hyphens, with spaces between allowed. The phrases are narrow on purpose: a confirmation's
/// own "----- Your booking -----" line must not hide its markup.
enum ForwardSeparator {
    static let phrases: [[UInt8]] = [
        "original message", "forwarded message", "ursprüngliche nachricht", "weitergeleitete nachricht",
        "message d'origine", "message transféré", "mensaje original", "mensaje reenviado", "messaggio originale",
        "messaggio inoltrato", "oorspronkelijk bericht", "doorgestuurd bericht", "mensagem original",
        "mensagem encaminhada",
    ].map { Array($0.utf8) }

    /// The offset just past the first separator in `text` (all text runs of a document), or nil.
    /// Every document's text is searched: hyphens are found with glibc's vectorized `memchr`, and a
    /// run of them is passed over once.
    static func firstEnd(in text: [UInt8]) -> Int? {
        let hyphen = UInt8(ascii: "-")
        return text.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            var index = 0
            while index < buffer.count {
                guard let found = memchr(base + index, Int32(hyphen), buffer.count - index) else { return nil }
                let start = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
                let runEnd = skipHyphens(text, from: start)
                if runEnd - start >= 2, let end = separatorEnd(in: text, afterHyphensAt: runEnd) { return end }
                index = runEnd
            }
            return nil
        }
    }

    /// The end of a separator whose opening hyphens end at `cursor`, or nil.
    private static func separatorEnd(in text: [UInt8], afterHyphensAt cursor: Int) -> Int? {
        guard let phraseEnd = phrase(in: text, at: skipSpaces(text, from: cursor)) else { return nil }
        let closingStart = skipSpaces(text, from: phraseEnd)
        let closing = skipHyphens(text, from: closingStart)
        return closing - closingStart >= 2 ? closing : nil
    }

    private static func skipHyphens(_ text: [UInt8], from start: Int) -> Int {
        var index = start
        while index < text.count, text[index] == UInt8(ascii: "-") { index += 1 }
        return index
    }

    /// Skips spaces, tabs and no-break spaces (U+00A0, as HTML's `&nbsp;` decodes).
    private static func skipSpaces(_ text: [UInt8], from start: Int) -> Int {
        var index = start
        while index < text.count {
            if text[index] == 0x20 || text[index] == 0x09 {
                index += 1
            } else if text[index] == 0xC2, index + 1 < text.count, text[index + 1] == 0xA0 {
                index += 2
            } else {
                break
            }
        }
        return index
    }

    /// The end of a phrase starting at `start`, ASCII letters compared in any case.
    private static func phrase(in text: [UInt8], at start: Int) -> Int? {
        for phrase in phrases where start + phrase.count <= text.count {
            var matches = true
            for (offset, expected) in phrase.enumerated() {
                var byte = text[start + offset]
                if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
                if byte != expected {
                    matches = false
                    break
                }
            }
            if matches { return start + phrase.count }
        }
        return nil
    }
}
