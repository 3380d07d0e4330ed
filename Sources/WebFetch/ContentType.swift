/// A Content-Type field value taken apart (RFC 9110 §8.3.1): the media type and its charset.
struct ContentType: Sendable, Hashable {
    /// `type/subtype`, lowercased.
    let mediaType: String
    /// The `charset` parameter, lowercased and unquoted.
    let charset: String?

    /// Returns nil when the value has no `type/subtype`.
    init?(_ value: String) {
        var pieces = value.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let first = pieces.next() else { return nil }
        let media = first.trimmingHTTPWhitespace().lowercased()
        let halves = media.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, !halves[0].isEmpty, !halves[1].isEmpty else { return nil }
        mediaType = media
        var charset: String?
        while let piece = pieces.next() {
            let parameter = piece.trimmingHTTPWhitespace()
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            guard parameter[..<equals].lowercased() == "charset" else { continue }
            var value = parameter[parameter.index(after: equals)...]
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            if !value.isEmpty { charset = value.lowercased() }
            break
        }
        self.charset = charset
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (RFC 9110 §5.6.3 OWS).
    func trimmingHTTPWhitespace() -> Substring {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let trimmedStart = self.drop(while: isWhitespace)
        var end = trimmedStart.endIndex
        while end > trimmedStart.startIndex, isWhitespace(trimmedStart[trimmedStart.index(before: end)]) {
            end = trimmedStart.index(before: end)
        }
        return Substring(trimmedStart[trimmedStart.startIndex..<end])
    }
}
