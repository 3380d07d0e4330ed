internal import NIOCore

extension LMTPReply {
    /// At most this many octets of text per reply line: the whole line stays under the 512 of RFC 5321 §4.5.3.1.5.
    static let maximumTextBytesPerLine = 480
    /// At most this many lines per reply, so that a handler's text cannot flood the client.
    static let maximumLines = 64

    /// The reply as a handler may send it: a code outside 2yz/4yz/5yz becomes `451 4.3.0` (a handler bug must
    /// not confuse the client), and a malformed or mismatched enhanced code becomes `<class>.0.0` (RFC 3463 §2:
    /// the class repeats the first digit of the reply code).
    var normalized: LMTPReply {
        guard (200...299).contains(code) || (400...599).contains(code) else { return .internalError }
        guard let enhancedCode, !LMTPReply.isValidEnhancedCode(enhancedCode, forCode: code) else { return self }
        var reply = self
        reply.enhancedCode = "\(code / 100).0.0"
        return reply
    }

    /// Whether `enhanced` is `class.subject.detail` (RFC 3463 §2: class 2, 4 or 5 equal to the reply's first
    /// digit; subject and detail of 1 to 3 digits).
    static func isValidEnhancedCode(_ enhanced: String, forCode code: Int) -> Bool {
        let parts = enhanced.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy(isDigit) }) else {
            return false
        }
        guard parts[0].count == 1, let classDigit = parts[0].first else { return false }
        return Int(classDigit - UInt8(ascii: "0")) == code / 100
    }

    /// Appends the reply in wire form: one `code[-| ][enhanced ]text` CRLF line per text line (RFC 5321 §4.2.1).
    /// Control characters and non-ASCII octets in the text are replaced, so a reply can never inject a line.
    func write(to buffer: inout ByteBuffer) {
        let clampedCode = min(max(code, 100), 999)
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.count > LMTPReply.maximumLines { lines = Array(lines.prefix(LMTPReply.maximumLines)) }
        for (index, line) in lines.enumerated() {
            buffer.writeString(String(clampedCode))
            buffer.writeInteger(UInt8(ascii: index == lines.count - 1 ? " " : "-"))
            if let enhancedCode {
                buffer.writeString(enhancedCode)
                if !line.isEmpty { buffer.writeInteger(UInt8(ascii: " ")) }
            }
            var written = 0
            for byte in line where byte != UInt8(ascii: "\r") {
                guard written < LMTPReply.maximumTextBytesPerLine else { break }
                buffer.writeInteger((0x20...0x7E).contains(byte) ? byte : UInt8(ascii: "?"))
                written += 1
            }
            buffer.writeStaticString("\r\n")
        }
    }
}

private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
