extension MailAddress {
    /// The most addresses one field yields; the rest are ignored.
    package static let maximumAddressesPerField = 10_000

    /// Parses an address list (RFC 5322 §3.4: `address-list`, `mailbox-list`) from a field value.
    ///
    /// Mailboxes are `Name <local@domain>` or a bare `local@domain`; display names may be quoted
    /// strings or words, with RFC 2047 encoded words (decoded, also inside quotes as senders write
    /// them). Groups (`Friends: a@example.com, b@example.com;`) contribute their members, and an
    /// empty group (`undisclosed-recipients:;`) nothing. Comments are skipped (the last one names a
    /// mailbox that has no display name). Obsolete forms (RFC 5322 §4.4) are accepted: routes
    /// (`<@relay:a@example.com>`), empty list elements, whitespace around dots. Something that is not
    /// an address (no `@`) is skipped. Never fails.
    package static func list(parsing value: String) -> [MailAddress] {
        list(parsing: Array(value.utf8)[...])
    }

    /// Parses an address list from a header field (unfolded first).
    package static func list(in field: HeaderField) -> [MailAddress] {
        list(parsing: field.unfoldedBytes[...])
    }

    /// Parses an address list from raw value bytes.
    package static func list(parsing value: ArraySlice<UInt8>) -> [MailAddress] {
        var parser = AddressListParser(tokens: AddressListParser.tokenize(value))
        return parser.parse()
    }
}

/// The RFC 5322 §3.4 address grammar over a token stream, written to accept what senders write.
struct AddressListParser {
    /// A lexical token of an address field (RFC 5322 §3.2).
    enum Token {
        /// An atom (dots included, so `john.doe` and `Q.` are one word) or a quoted string's content.
        case word([UInt8], quoted: Bool)
        /// `[...]`, brackets included.
        case domainLiteral([UInt8])
        /// One of `< > : ; @ , ]` or another stray special.
        case special(UInt8)
        /// A comment's text.
        case comment([UInt8])
    }

    let tokens: [Token]
    var index = 0
    /// The first `:` or `>` at or after some earlier `index`, and whether it was the `:`; still the
    /// first one at or after `index` while `index` has not passed it (`index` never moves back).
    private var routeLookahead: (position: Int, isColon: Bool)? = nil

    init(tokens: [Token]) { self.tokens = tokens }

    static func tokenize(_ value: ArraySlice<UInt8>) -> [Token] {
        var scanner = FieldScanner(value)
        var tokens: [Token] = []
        while let byte = scanner.current {
            switch byte {
            case .space, .tab, .carriageReturn, .lineFeed:
                scanner.advance()
            case UInt8(ascii: "("):
                tokens.append(.comment(scanner.comment()))
            case .quotationMark:
                tokens.append(.word(scanner.quotedString(), quoted: true))
            case UInt8(ascii: "["):
                var literal = Array(scanner.run { $0 != UInt8(ascii: "]") })
                if scanner.current == UInt8(ascii: "]") {
                    literal.append(UInt8(ascii: "]"))
                    scanner.advance()
                }
                tokens.append(.domainLiteral(literal.filter { !FieldScanner.isWhitespace($0) }))
            case UInt8(ascii: "<"), UInt8(ascii: ">"), .colon, .semicolon, UInt8(ascii: "@"), UInt8(ascii: ","),
                UInt8(ascii: ")"), UInt8(ascii: "]"), .backslash:
                tokens.append(.special(byte))
                scanner.advance()
            default:
                let atom = scanner.run { byte in
                    MailAddress.isAtext(byte) || byte == UInt8(ascii: ".")
                }
                if atom.isEmpty {  // a control character or DEL: skip it
                    scanner.advance()
                } else {
                    tokens.append(.word(Array(atom), quoted: false))
                }
            }
        }
        return tokens
    }

    private var current: Token? { index < tokens.count ? tokens[index] : nil }

    private func isSpecial(_ token: Token?, _ byte: UInt8) -> Bool {
        if case .special(let special) = token, special == byte { return true }
        return false
    }

    mutating func parse() -> [MailAddress] {
        var addresses: [MailAddress] = []
        while index < tokens.count && addresses.count < MailAddress.maximumAddressesPerField {
            // Empty list elements, group ends and stray closers (RFC 5322 §4.4 obs-addr-list).
            if case .special(let byte) = current,
                byte == UInt8(ascii: ",") || byte == .semicolon
                    || byte == UInt8(ascii: ">") || byte == UInt8(ascii: ")") || byte == UInt8(ascii: "]")
                    || byte == .backslash
            {
                index += 1
                continue
            }
            // The phrase: everything up to the special that says what it was.
            let phraseStart = index
            while let token = current {
                if case .special(let byte) = token,
                    byte == UInt8(ascii: "<") || byte == .colon || byte == UInt8(ascii: "@")
                        || byte == UInt8(ascii: ",") || byte == .semicolon
                {
                    break
                }
                index += 1
            }
            let phrase = tokens[phraseStart..<index]
            switch current {
            case .special(let byte) where byte == .colon:
                index += 1  // a group: its members follow as ordinary mailboxes, up to ';'
            case .special(let byte) where byte == UInt8(ascii: "<"):
                index += 1
                if let address = angleAddress(displayName: phrase) { addresses.append(address) }
            case .special(let byte) where byte == UInt8(ascii: "@"):
                // `jane@example.com <jane@example.com>`: an unquoted display name with an '@' in it.
                if let angle = angleAfterAddrSpec() {
                    let name = tokens[phraseStart..<angle]
                    index = angle + 1
                    if let address = angleAddress(displayName: name) { addresses.append(address) }
                } else {
                    index += 1
                    let domainStart = index
                    while let token = current, !isListSeparator(token) { index += 1 }
                    if let address = addrSpec(local: phrase, domain: tokens[domainStart..<index], displayName: nil) {
                        addresses.append(address)
                    }
                }
            default:
                break  // a phrase with no address: not a mailbox (`undisclosed-recipients`), skipped
            }
        }
        return addresses
    }

    private func isListSeparator(_ token: Token) -> Bool {
        if case .special(let byte) = token { return byte == UInt8(ascii: ",") || byte == .semicolon }
        return false
    }

    /// When the addr-spec starting at the current `@` is followed by `<` before the next separator,
    /// the index of that `<`.
    private func angleAfterAddrSpec() -> Int? {
        var cursor = index
        while cursor < tokens.count {
            if case .special(let byte) = tokens[cursor] {
                if byte == UInt8(ascii: "<") { return cursor }
                if byte == UInt8(ascii: ",") || byte == .semicolon { return nil }
            }
            cursor += 1
        }
        return nil
    }

    /// Reads `[route:] local@domain >` after a `<`, and what follows up to the next separator.
    private mutating func angleAddress(displayName phrase: ArraySlice<Token>) -> MailAddress? {
        let start = index
        while let token = current, !isSpecial(token, UInt8(ascii: ">")),
            !isListSeparator(token) || isInRoute(from: start)
        {
            index += 1
        }
        var inside = tokens[start..<index]
        if isSpecial(current, UInt8(ascii: ">")) { index += 1 }
        // obs-route (RFC 5322 §4.4): `@relay1,@relay2:` before the addr-spec.
        if let colon = inside.lastIndex(where: { isSpecial($0, .colon) }) { inside = inside[(colon + 1)...] }
        // Anything after '>' up to the separator (comments, junk) is ignored.
        while let token = current, !isListSeparator(token) { index += 1 }
        guard let at = inside.lastIndex(where: { isSpecial($0, UInt8(ascii: "@")) }) else { return nil }
        return addrSpec(local: inside[..<at], domain: inside[(at + 1)...], displayName: phrase)
    }

    /// True while a `<` opened at `start` holds a route whose ':' is still ahead: commas inside it
    /// (`<@a,@b:x@y>`) are not list separators.
    ///
    /// The look-ahead is remembered, so a field of many commas with no `:` or `>` after them
    /// (`<@,<@,<@,…`) is scanned once, not once per comma.
    private mutating func isInRoute(from start: Int) -> Bool {
        guard start < tokens.count, isSpecial(tokens[start], UInt8(ascii: "@")) else { return false }
        if let lookahead = routeLookahead, lookahead.position >= index { return lookahead.isColon }
        var cursor = index
        while cursor < tokens.count {
            if isSpecial(tokens[cursor], .colon) || isSpecial(tokens[cursor], UInt8(ascii: ">")) { break }
            cursor += 1
        }
        let isColon = cursor < tokens.count && isSpecial(tokens[cursor], .colon)
        routeLookahead = (cursor, isColon)
        return isColon
    }

    private func addrSpec(local: ArraySlice<Token>, domain: ArraySlice<Token>, displayName phrase: ArraySlice<Token>?)
        -> MailAddress?
    {
        var localBytes = [UInt8]()
        var comment: [UInt8]? = nil
        for token in local {
            switch token {
            case .word(let bytes, _): localBytes += bytes
            case .comment(let text): comment = text
            default: break
            }
        }
        var domainBytes = [UInt8]()
        for token in domain {
            switch token {
            case .word(let bytes, quoted: false): domainBytes += bytes
            case .domainLiteral(let bytes): domainBytes += bytes
            case .comment(let text): comment = text
            default: return nil  // a quoted string or special in a domain: not an address
            }
        }
        guard !localBytes.isEmpty, !domainBytes.isEmpty else { return nil }
        var name = phrase.flatMap(displayName(from:))
        if name == nil, let comment {
            name = displayName(from: [.word(comment, quoted: true)][...])
        }
        return MailAddress(
            displayName: name, localPart: Charset.decode(localBytes[...], charset: nil).text,
            domain: Charset.decode(domainBytes[...], charset: nil).text)
    }

    /// The display name: words joined by single spaces, encoded words decoded (RFC 2047 §5(3)),
    /// whitespace collapsed; nil when empty.
    private func displayName(from phrase: ArraySlice<Token>) -> String? {
        var joined = [UInt8]()
        var glued = false  // the previous token was a special written without spaces around it
        for token in phrase {
            switch token {
            case .word(let bytes, _):
                if !joined.isEmpty && !glued { joined.append(.space) }
                joined += bytes
                glued = false
            case .special(let byte):  // an '@' in an unquoted name (`jane@example.com <...>`)
                joined.append(byte)
                glued = true
            case .domainLiteral(let bytes):
                joined += bytes
                glued = false
            case .comment:
                continue
            }
        }
        let decoded = EncodedWords.decode(joined[...])
        let words = decoded.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return words.isEmpty ? nil : words.joined(separator: " ")
    }
}
