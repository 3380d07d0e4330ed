/// Reverse- and forward-paths of MAIL and RCPT (RFC 5321 §4.1.2).
enum MailPath {
    /// The longest domain (RFC 5321 §4.5.3.1.2).
    static let maximumDomainBytes = 255

    /// Finds `<...>` at the start of `bytes`, honouring quoted strings (a quoted local-part may hold `>`), and
    /// returns what is between the brackets and the index after the closing one.
    static func angleBracketed(_ bytes: ArraySlice<UInt8>) -> (path: ArraySlice<UInt8>, end: Int)? {
        guard bytes.first == UInt8(ascii: "<") else { return nil }
        var index = bytes.startIndex + 1
        var quoted = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { quoted = false }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ">") {
                return (bytes[(bytes.startIndex + 1)..<index], index + 1)
            } else if byte == UInt8(ascii: "<") {
                return nil
            }
            index += 1
        }
        return nil
    }

    /// `Reverse-path = Path / "<>"`: the mailbox, or "" for the null sender; nil if malformed.
    static func reversePath(_ path: ArraySlice<UInt8>) -> String? {
        if path.isEmpty { return "" }
        guard let mailbox = withoutSourceRoute(path), isValidMailbox(mailbox) else { return nil }
        return String(decoding: mailbox, as: UTF8.self)
    }

    /// `Forward-path = Path`, or the special `<Postmaster>` without a domain (RFC 5321 §4.1.1.3); nil if malformed.
    static func forwardPath(_ path: ArraySlice<UInt8>) -> String? {
        if path.equalsIgnoringCase("Postmaster") { return String(decoding: path, as: UTF8.self) }
        guard let mailbox = withoutSourceRoute(path), isValidMailbox(mailbox) else { return nil }
        return String(decoding: mailbox, as: UTF8.self)
    }

    /// `Path = "<" [ A-d-l ":" ] Mailbox ">"`: a source route `@a,@b:` is accepted and ignored (RFC 5321 §4.1.1.3
    /// and appendix C: servers MUST accept it and SHOULD ignore it). Nil if the route is malformed.
    static func withoutSourceRoute(_ path: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard path.first == UInt8(ascii: "@") else { return path }
        guard let colon = path.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        // A-d-l = At-domain *( "," At-domain ); At-domain = "@" Domain
        for atDomain in path[..<colon].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            guard atDomain.first == UInt8(ascii: "@"), isValidDomain(atDomain.dropFirst()) else { return nil }
        }
        return path[(colon + 1)...]
    }

    /// `Mailbox = Local-part "@" ( Domain / address-literal )` (RFC 5321 §4.1.2). The local-part is a
    /// dot-string of atext (consecutive or edge dots tolerated, as mail systems do) or a quoted string.
    /// Only US-ASCII: SMTPUTF8 (RFC 6531) is not offered.
    static func isValidMailbox(_ mailbox: ArraySlice<UInt8>) -> Bool {
        var index = mailbox.startIndex
        if mailbox.first == UInt8(ascii: "\"") {
            index += 1
            var closed = false
            while index < mailbox.endIndex {
                let byte = mailbox[index]
                if byte == UInt8(ascii: "\\") {
                    // quoted-pairSMTP = %d92 %d32-126
                    guard index + 1 < mailbox.endIndex, (32...126).contains(mailbox[index + 1]) else { return false }
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    closed = true
                    index += 1
                    break
                }
                // qtextSMTP = %d32-33 / %d35-91 / %d93-126
                guard (32...126).contains(byte) else { return false }
                index += 1
            }
            guard closed else { return false }
        } else {
            while index < mailbox.endIndex, mailbox[index] != UInt8(ascii: "@") {
                guard isAtext(mailbox[index]) || mailbox[index] == .dot else { return false }
                index += 1
            }
            guard index > mailbox.startIndex else { return false }
        }
        guard index < mailbox.endIndex, mailbox[index] == UInt8(ascii: "@") else { return false }
        let domain = mailbox[(index + 1)...]
        if domain.first == UInt8(ascii: "[") { return isValidAddressLiteral(domain) }
        return isValidDomain(domain)
    }

    /// `Domain = sub-domain *("." sub-domain)` of letters, digits and hyphens (underscores tolerated, as found in
    /// real host names); at most 255 octets.
    static func isValidDomain(_ domain: ArraySlice<UInt8>) -> Bool {
        guard !domain.isEmpty, domain.count <= maximumDomainBytes else { return false }
        var labelLength = 0
        for byte in domain {
            if byte == .dot {
                guard labelLength > 0 else { return false }
                labelLength = 0
            } else {
                guard byte.isASCIIAlphanumeric || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") else {
                    return false
                }
                labelLength += 1
            }
        }
        return labelLength > 0
    }

    /// `address-literal = "[" ( IPv4 / IPv6 / General ) "]"` (RFC 5321 §4.1.3), checked for shape only: printable
    /// dcontent between the brackets.
    static func isValidAddressLiteral(_ literal: ArraySlice<UInt8>) -> Bool {
        guard literal.count >= 3, literal.count <= maximumDomainBytes, literal.last == UInt8(ascii: "]") else {
            return false
        }
        // dcontent = %d33-90 / %d94-126
        return literal.dropFirst().dropLast().allSatisfy { (33...90).contains($0) || (94...126).contains($0) }
    }

    /// atext of RFC 5322 §3.2.3.
    private static func isAtext(_ byte: UInt8) -> Bool {
        if byte.isASCIIAlphanumeric { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "/"),
            UInt8(ascii: "="), UInt8(ascii: "?"), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"),
            UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
