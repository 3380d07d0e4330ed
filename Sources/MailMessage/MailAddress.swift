/// One mailbox from an address field (RFC 5322 §3.4): `"Jane Doe" <jane.doe@example.com>`.
package struct MailAddress: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The display name, RFC 2047 encoded words and quoting removed; nil when none was given. An old
    /// style comment (`jane@example.com (Jane Doe)`) stands in for a missing display name.
    package var displayName: String?
    /// The local part, unquoted (`jane.doe`, or `jane doe` for `"jane doe"@example.com`).
    package var localPart: String
    /// The domain, lower-cased (domains are case-insensitive, RFC 5321 §2.4); a domain literal keeps
    /// its brackets (`[192.0.2.1]`).
    package var domain: String
    /// The addr-spec: local part (quoted again where RFC 5322 §3.4.1 requires it), `@`, domain.
    package var address: String

    package init(displayName: String? = nil, localPart: String, domain: String) {
        self.displayName = displayName
        self.localPart = localPart
        self.domain = domain.lowercased()
        self.address = MailAddress.quotedIfNeeded(localPart) + "@" + self.domain
    }

    package var description: String {
        guard let displayName else { return address }
        return "\"\(displayName)\" <\(address)>"
    }

    /// The local part as written in an addr-spec: as it is when it is a dot-atom, otherwise a quoted
    /// string with `"` and `\` escaped (RFC 5322 §3.2.4).
    static func quotedIfNeeded(_ localPart: String) -> String {
        let bytes = Array(localPart.utf8)
        let isDotAtom =
            !bytes.isEmpty && bytes.first != UInt8(ascii: ".") && bytes.last != UInt8(ascii: ".")
            && !localPart.contains("..") && bytes.allSatisfy { $0 == UInt8(ascii: ".") || isAtext($0) }
        if isDotAtom { return localPart }
        var quoted = "\""
        for character in localPart {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// atext (RFC 5322 §3.2.3), plus any 8-bit byte (RFC 6532 §3.2: UTF-8 in atoms).
    static func isAtext(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), 0x80...0xFF:
            return true
        default:
            return "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }
}
