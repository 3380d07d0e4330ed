/// The parameters of a structured MIME field (`Content-Type`, `Content-Disposition`): names are
/// case-insensitive and stored lower-cased, values are decoded text.
///
/// Parsing follows RFC 2045 §5.1 with RFC 2231 on top: `title*=utf-8'en'%E2%82%AC`,
/// continuations `title*0=...; title*1=...` (encoded ones `title*0*=utf-8''...`) joined in order
/// before the charset is applied. It is lenient where senders are sloppy: unquoted values may hold
/// tspecials (`boundary=----=_Part_1`), an unterminated quoted string runs to the end, comments are
/// skipped, a parameter without `=` is ignored, and the first of two same-named parameters wins.
package struct MIMEParameters: Sendable, Hashable {
    /// Parameter values by lower-cased name.
    package private(set) var values: [String: String]

    package init(_ values: [String: String] = [:]) {
        self.values = [:]
        for (name, value) in values { self.values[name.fastLowercased] = value }
    }

    /// The value of `name` (case-insensitive), or nil.
    package subscript(name: String) -> String? { values[name.fastLowercased] }

    /// The most continuation sections one parameter may have (RFC 2231 §3 sets no limit).
    static let maximumSections = 1000

    /// Parses `; name=value; ...` from the scanner's position to the end.
    static func parse(_ scanner: inout FieldScanner) -> MIMEParameters {
        var plain: [String: String] = [:]
        var extended: [String: (sections: [Int: (bytes: [UInt8], encoded: Bool)], order: Int)] = [:]
        var order: [String] = []

        while !scanner.isAtEnd {
            scanner.skipCFWS()
            if scanner.current == .semicolon {
                scanner.advance()
                continue
            }
            guard !scanner.isAtEnd else { break }
            let nameBytes = scanner.run { byte in
                byte != .equalsSign && byte != .semicolon && byte != UInt8(ascii: "(")
                    && !FieldScanner.isWhitespace(byte)
            }
            scanner.skipCFWS()
            guard scanner.current == .equalsSign, !nameBytes.isEmpty else {
                // Not a parameter: skip to the next ';'.
                _ = scanner.run { $0 != .semicolon }  // also consumes a stray '=' (an empty name)
                continue
            }
            scanner.advance()
            scanner.skipCFWS()
            let value: [UInt8]
            if scanner.current == .quotationMark {
                value = scanner.quotedString()
            } else {
                value = Array(
                    scanner.run { byte in
                        byte != .semicolon && byte != UInt8(ascii: "(") && !FieldScanner.isWhitespace(byte)
                    })
            }
            let name = String(decoding: nameBytes, as: UTF8.self).fastLowercased

            // RFC 2231: name*, name*N, name*N*.
            if let star = name.utf8.firstIndex(of: UInt8(ascii: "*")) {
                let base = String(name[..<star])
                var rest = name[name.index(after: star)...]
                var encoded = false
                if rest.hasSuffix("*") {
                    encoded = true
                    rest = rest.dropLast()
                }
                let section: Int?
                if rest.isEmpty {
                    section = 0
                    encoded = true  // "name*=" is always charset'language'value
                } else if rest.count <= 4, rest.allSatisfy(\.isASCII), let number = Int(rest),
                    number >= 0, number < maximumSections
                {
                    section = number
                } else {
                    section = nil
                }
                guard let section, !base.isEmpty else { continue }
                if extended[base] == nil {
                    extended[base] = ([:], order.count)
                    order.append(base)
                }
                if extended[base]?.sections[section] == nil {
                    extended[base]?.sections[section] = (value, encoded)
                }
            } else if plain[name] == nil {
                plain[name] = Charset.decode(value[...], charset: nil).text
            }
        }

        var values = plain
        for base in order {
            guard let sections = extended[base]?.sections else { continue }
            if let joined = joinSections(sections) { values[base] = joined }
        }
        return MIMEParameters(lowercased: values)
    }

    private init(lowercased values: [String: String]) { self.values = values }

    /// Joins RFC 2231 §3 sections 0, 1, 2... (stopping at the first gap), percent-decoding the
    /// encoded ones, and decodes the whole in the charset named by section 0 (§4).
    private static func joinSections(_ sections: [Int: (bytes: [UInt8], encoded: Bool)]) -> String? {
        guard sections[0] != nil else { return nil }
        var charset: String? = nil
        var bytes = [UInt8]()
        var number = 0
        while let section = sections[number] {
            var value = section.bytes[...]
            if number == 0 && section.encoded {
                // charset'language'value; a value without the two quotes is taken as it is.
                if let quote = value.firstIndex(of: UInt8(ascii: "'")),
                    let second = value[(quote + 1)...].firstIndex(of: UInt8(ascii: "'"))
                {
                    let name = String(decoding: value[..<quote], as: UTF8.self)
                    charset = name.isEmpty ? nil : name
                    value = value[(second + 1)...]
                }
            }
            bytes.append(contentsOf: section.encoded ? percentDecoded(value) : Array(value))
            number += 1
        }
        return Charset.decode(bytes[...], charset: charset ?? "utf-8").text
    }

    /// `%XX` to the byte XX; a malformed `%` is kept.
    static func percentDecoded(_ value: ArraySlice<UInt8>) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(value.count)
        var index = value.startIndex
        while index < value.endIndex {
            let byte = value[index]
            if byte == UInt8(ascii: "%"), index + 2 < value.endIndex,
                let high = value[index + 1].hexDigitValue,
                let low = value[index + 2].hexDigitValue
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }
}
