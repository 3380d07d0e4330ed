/// The RFC 1035 §5.1 master-file reader behind `ZoneFileResolver`.
///
/// Works on bytes in two passes per entry: a tokenizer turns the text into entries (one logical line,
/// parentheses joining physical lines), then each entry is read as a directive or a record.
struct ZoneFileParser {
    /// One token of an entry: a quoted string or a bare word, escapes already decoded.
    struct Token {
        var bytes: [UInt8]
        var quoted: Bool
        /// Whether the bare word contained a `\` escape (not allowed in names).
        var escaped: Bool
    }

    /// One logical line: its tokens, the physical line it starts on, and whether it began with
    /// blank space (then the owner is the previous record's, RFC 1035 §5.1).
    struct Entry {
        var tokens: [Token] = []
        var line: Int
        var ownerOmitted: Bool
    }

    /// RFC 2181 §8: TTLs are at most 2^31 − 1.
    static let maximumTTL: UInt64 = 0x7FFF_FFFF
    /// RFC 1035 §3.3: a character-string is at most 255 bytes.
    static let maximumStringLength = 255

    private let defaultTTL: UInt32
    /// The current origin: lower-cased, without the final dot; "" is the root; nil is unset.
    private var origin: String?
    /// The `$TTL` in effect.
    private var zoneTTL: UInt32?
    /// The last TTL given explicitly on a record (RFC 1035 §5.1: the default when there is no `$TTL`).
    private var lastExplicitTTL: UInt32?
    private var lastOwner: String?
    private var records: [String: [TXTRecord]] = [:]

    init(defaultTTL: UInt32) {
        self.defaultTTL = defaultTTL
    }

    mutating func setInitialOrigin(_ text: String) throws(ZoneFileError) {
        origin = try Self.absoluteName(Array(text.utf8), relativeTo: nil, line: 0, forceAbsolute: true)
    }

    mutating func parse(_ text: [UInt8]) throws(ZoneFileError) -> [String: [TXTRecord]] {
        for entry in try Self.entries(text) {
            try read(entry)
        }
        return records
    }

    // MARK: - Entries

    private mutating func read(_ entry: Entry) throws(ZoneFileError) {
        let tokens = entry.tokens
        let line = entry.line
        if !entry.ownerOmitted, let first = tokens.first, !first.quoted, first.bytes.first == UInt8(ascii: "$") {
            try readDirective(entry)
            return
        }
        var index = 0
        let owner: String
        if entry.ownerOmitted {
            guard let lastOwner else {
                throw ZoneFileError(
                    code: .syntax, line: line,
                    reason: "the record starts with blank space but no earlier record names an owner")
            }
            owner = lastOwner
        } else {
            owner = try name(tokens[0], line: line)
            index = 1
        }
        var ttl: UInt32? = nil
        var recordClass: [UInt8]? = nil
        while index < tokens.count, !tokens[index].quoted {
            let word = tokens[index].bytes
            if ttl == nil, let first = word.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") {
                ttl = try Self.ttl(word, line: line)
            } else if recordClass == nil, Self.isClass(word) {
                recordClass = word
            } else {
                break
            }
            index += 1
        }
        guard index < tokens.count, !tokens[index].quoted else {
            throw ZoneFileError(code: .syntax, line: line, reason: "the record for \(owner) has no type")
        }
        if let recordClass, Self.uppercased(recordClass) != Array("IN".utf8) {
            throw ZoneFileError(
                code: .unsupportedClass, line: line,
                reason: "class \(String(decoding: recordClass, as: UTF8.self)) is not supported; use IN")
        }
        let type = Self.uppercased(tokens[index].bytes)
        index += 1
        guard let firstTypeByte = type.first, Self.isLetter(firstTypeByte),
            type.allSatisfy({ Self.isLetter($0) || Self.isDigit($0) || $0 == UInt8(ascii: "-") })
        else {
            throw ZoneFileError(
                code: .syntax, line: line,
                reason: "'\(String(decoding: tokens[index - 1].bytes, as: UTF8.self))' is not a record type")
        }
        if let ttl { lastExplicitTTL = ttl }
        let effectiveTTL = ttl ?? zoneTTL ?? lastExplicitTTL ?? defaultTTL
        lastOwner = owner
        if records[owner] == nil { records[owner] = [] }
        guard type == Array("TXT".utf8) else { return }
        guard index < tokens.count else {
            throw ZoneFileError(code: .syntax, line: line, reason: "the TXT record for \(owner) has no strings")
        }
        var strings: [[UInt8]] = []
        for token in tokens[index...] {
            // A string longer than 255 bytes cannot be sent as one character-string; keep it as the
            // 255-byte strings a server would have to publish (DKIM joins them again, RFC 6376 §3.6.2.2).
            if token.bytes.isEmpty {
                strings.append([])
                continue
            }
            var start = 0
            while start < token.bytes.count {
                let end = min(start + Self.maximumStringLength, token.bytes.count)
                strings.append(Array(token.bytes[start..<end]))
                start = end
            }
        }
        records[owner, default: []].append(TXTRecord(strings: strings, ttl: effectiveTTL))
    }

    private mutating func readDirective(_ entry: Entry) throws(ZoneFileError) {
        let directive = Self.uppercased(entry.tokens[0].bytes)
        let arguments = entry.tokens.dropFirst()
        let text = String(decoding: entry.tokens[0].bytes, as: UTF8.self)
        switch directive {
        case Array("$ORIGIN".utf8):
            guard arguments.count == 1, let argument = arguments.first, !argument.quoted else {
                throw ZoneFileError(code: .syntax, line: entry.line, reason: "$ORIGIN takes one domain name")
            }
            guard !argument.escaped else {
                throw ZoneFileError(
                    code: .invalidName, line: entry.line, reason: "escapes in names are not supported")
            }
            origin = try Self.absoluteName(argument.bytes, relativeTo: origin, line: entry.line, forceAbsolute: false)
        case Array("$TTL".utf8):
            guard arguments.count == 1, let argument = arguments.first, !argument.quoted else {
                throw ZoneFileError(code: .syntax, line: entry.line, reason: "$TTL takes one TTL")
            }
            zoneTTL = try Self.ttl(argument.bytes, line: entry.line)
        case Array("$INCLUDE".utf8), Array("$GENERATE".utf8):
            throw ZoneFileError(
                code: .unsupportedDirective, line: entry.line,
                reason: "\(text) is not supported in a key file; put the records in this file")
        default:
            throw ZoneFileError(
                code: .unsupportedDirective, line: entry.line,
                reason: "unknown directive \(text); only $ORIGIN and $TTL are supported")
        }
    }

    private func name(_ token: Token, line: Int) throws(ZoneFileError) -> String {
        guard !token.quoted, !token.escaped else {
            throw ZoneFileError(
                code: .invalidName, line: line,
                reason: "owner names are plain words; quotes and escapes are not supported")
        }
        return try Self.absoluteName(token.bytes, relativeTo: origin, line: line, forceAbsolute: false)
    }

    /// Resolves `@`, relative and absolute names (RFC 1035 §5.1) to a validated, lower-cased name without
    /// the final dot ("" for the root).
    private static func absoluteName(
        _ word: [UInt8], relativeTo origin: String?, line: Int, forceAbsolute: Bool
    ) throws(ZoneFileError) -> String {
        let text = String(decoding: word, as: UTF8.self)
        var absolute: String
        if word == [UInt8(ascii: "@")] {
            guard let origin else {
                throw ZoneFileError(code: .missingOrigin, line: line, reason: "@ is used before any $ORIGIN")
            }
            return origin
        } else if word == [UInt8(ascii: ".")] {
            return ""
        } else if word.last == UInt8(ascii: ".") || forceAbsolute {
            absolute = text
        } else {
            guard let origin else {
                throw ZoneFileError(
                    code: .missingOrigin, line: line,
                    reason: "\(text) is a relative name but no $ORIGIN is set; end it with a dot or add $ORIGIN")
            }
            absolute = origin.isEmpty ? text : "\(text).\(origin)"
        }
        do throws(DNSError) {
            return try DomainName(validating: absolute).description
        } catch {
            throw ZoneFileError(code: .invalidName, line: line, reason: error.reason)
        }
    }

    /// A TTL: decimal seconds, or BIND's units (`1w2d3h4m5s`, case-insensitive).
    private static func ttl(_ word: [UInt8], line: Int) throws(ZoneFileError) -> UInt32 {
        var total: UInt64 = 0
        var number: UInt64? = nil
        var usedUnits = false
        let invalid = ZoneFileError(
            code: .invalidTTL, line: line,
            reason: "'\(String(decoding: word, as: UTF8.self))' is not a TTL; give seconds (3600) or units (1h)")
        for byte in word {
            if isDigit(byte) {
                number = (number ?? 0) * 10 + UInt64(byte - UInt8(ascii: "0"))
                guard number! <= maximumTTL else { throw invalid }
                continue
            }
            let multiplier: UInt64
            switch byte | 0x20 {
            case UInt8(ascii: "s"): multiplier = 1
            case UInt8(ascii: "m"): multiplier = 60
            case UInt8(ascii: "h"): multiplier = 3600
            case UInt8(ascii: "d"): multiplier = 86400
            case UInt8(ascii: "w"): multiplier = 604_800
            default: throw invalid
            }
            guard let value = number else { throw invalid }
            total += value * multiplier
            guard total <= maximumTTL else { throw invalid }
            number = nil
            usedUnits = true
        }
        if let number {
            total += number
        } else if !usedUnits {
            throw invalid
        }
        guard total <= maximumTTL else { throw invalid }
        return UInt32(total)
    }

    private static func isClass(_ word: [UInt8]) -> Bool {
        let upper = uppercased(word)
        return upper == Array("IN".utf8) || upper == Array("CH".utf8) || upper == Array("HS".utf8)
            || upper == Array("CS".utf8)
    }

    private static func uppercased(_ word: [UInt8]) -> [UInt8] {
        word.map { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") ? $0 & 0xDF : $0 }
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }
}
