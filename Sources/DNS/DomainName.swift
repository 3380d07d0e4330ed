/// A validated domain name, kept in wire form (RFC 1035 §3.1): length-prefixed labels ending in the
/// root label, with ASCII letters lower-cased so that names compare case-insensitively (RFC 4343 §3).
struct DomainName: Hashable, Sendable, CustomStringConvertible {
    /// RFC 1035 §2.3.4: a label holds at most 63 octets.
    static let maximumLabelLength = 63
    /// RFC 1035 §2.3.4: a name holds at most 255 octets on the wire, which is 253 characters of text
    /// without the final dot.
    static let maximumWireLength = 255
    static let maximumTextLength = 253

    /// Length-prefixed labels, lower-cased, ending in a zero byte.
    let wire: [UInt8]

    /// Wraps wire bytes that the message reader has already bounded and lower-cased.
    init(lowercasedWire: [UInt8]) {
        wire = lowercasedWire
    }

    /// Validates a name as a caller writes it: `sel._domainkey.example.com`, with or without the final dot.
    ///
    /// Labels are 1–63 bytes of printable ASCII other than `.` (RFC 1035 §2.3.4; underscores are allowed,
    /// RFC 2181 §11); internationalized names must be given in their A-label (`xn--`) form (RFC 5890).
    /// - Throws: `DNSError.invalidName` saying which rule the name breaks.
    init(validating text: String) throws(DNSError) {
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        guard !bytes.isEmpty else {
            throw DNSError(code: .invalidName, reason: "the name is empty; give a fully qualified domain name")
        }
        guard bytes.count <= Self.maximumTextLength else {
            throw DNSError(
                code: .invalidName,
                reason: "the name is \(bytes.count) characters long; a domain name has at most 253 (RFC 1035 §2.3.4)"
            )
        }
        var wire: [UInt8] = []
        wire.reserveCapacity(bytes.count + 2)
        var labelStart = 0
        var labelNumber = 1
        for index in 0...bytes.count {
            if index == bytes.count || bytes[index] == UInt8(ascii: ".") {
                let length = index - labelStart
                guard length > 0 else {
                    throw DNSError(
                        code: .invalidName, reason: "label \(labelNumber) of the name is empty (two dots in a row?)")
                }
                guard length <= Self.maximumLabelLength else {
                    throw DNSError(
                        code: .invalidName,
                        reason: "label \(labelNumber) of the name is \(length) bytes; a label has at most 63 "
                            + "(RFC 1035 §2.3.4)"
                    )
                }
                wire.append(UInt8(length))
                for byte in bytes[labelStart..<index] { wire.append(Self.lowercased(byte)) }
                labelStart = index + 1
                labelNumber += 1
                continue
            }
            let byte = bytes[index]
            guard byte > 0x20 && byte < 0x7F else {
                throw DNSError(
                    code: .invalidName,
                    reason: byte >= 0x80
                        ? "label \(labelNumber) of the name is not ASCII; give internationalized names in their "
                            + "A-label (xn--) form (RFC 5890)"
                        : "label \(labelNumber) of the name contains a space or control character"
                )
            }
        }
        wire.append(0)
        self.wire = wire
    }

    /// The name as text, without the final dot; bytes outside printable ASCII appear as `\DDD` (RFC 1035 §5.1).
    var description: String {
        var text: [UInt8] = []
        text.reserveCapacity(wire.count)
        var index = 0
        while index < wire.count, wire[index] != 0 {
            let length = Int(wire[index])
            if !text.isEmpty { text.append(UInt8(ascii: ".")) }
            for byte in wire[(index + 1)..<min(index + 1 + length, wire.count)] {
                if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ".") && byte != UInt8(ascii: "\\") {
                    text.append(byte)
                } else {
                    let digits = [0x30 + byte / 100, 0x30 + byte / 10 % 10, 0x30 + byte % 10]
                    text.append(UInt8(ascii: "\\"))
                    text.append(contentsOf: digits)
                }
            }
            index += 1 + length
        }
        return text.isEmpty ? "." : String(decoding: text, as: UTF8.self)
    }

    /// ASCII lower-casing only: DNS compares names ignoring ASCII case and nothing else (RFC 4343 §3).
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
