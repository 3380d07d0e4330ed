/// A cursor over a received DNS message (RFC 1035 §4.1) that checks bounds on every read.
///
/// Any read past the end, a bad label type or a compression loop throws `.malformedResponse`;
/// nothing in a hostile message can crash or stall the reader.
struct DNSMessageReader {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func readUInt8(_ what: @autoclosure () -> String) throws(DNSError) -> UInt8 {
        guard offset < bytes.count else { throw truncated(what()) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16(_ what: @autoclosure () -> String) throws(DNSError) -> UInt16 {
        guard remaining >= 2 else { throw truncated(what()) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func readUInt32(_ what: @autoclosure () -> String) throws(DNSError) -> UInt32 {
        guard remaining >= 4 else { throw truncated(what()) }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    mutating func skip(_ count: Int, _ what: @autoclosure () -> String) throws(DNSError) {
        guard count >= 0, remaining >= count else { throw truncated(what()) }
        offset += count
    }

    /// Reads a possibly compressed name (RFC 1035 §4.1.4), lower-cased.
    ///
    /// The cursor moves past the name as it appears here (up to and including the first pointer).
    /// Pointers may go anywhere inside the message, but at most `maximumPointerJumps` are followed
    /// and the expanded name may not exceed 255 bytes, so a pointer loop ends in an error.
    mutating func readName(_ what: @autoclosure () -> String) throws(DNSError) -> DomainName {
        var wire: [UInt8] = []
        wire.reserveCapacity(32)
        var position = offset
        var resumeAt: Int? = nil
        var jumps = 0
        while true {
            guard position < bytes.count else { throw truncated("\(what()) (name)") }
            let length = bytes[position]
            switch length & 0xC0 {
            case 0x00:
                if length == 0 {
                    wire.append(0)
                    offset = resumeAt ?? position + 1
                    return DomainName(lowercasedWire: wire)
                }
                let end = position + 1 + Int(length)
                guard end <= bytes.count else { throw truncated("\(what()) (label)") }
                guard wire.count + 1 + Int(length) + 1 <= DomainName.maximumWireLength else {
                    throw DNSError(
                        code: .malformedResponse,
                        reason: "\(what()): a name is longer than 255 bytes (RFC 1035 §2.3.4)")
                }
                wire.append(length)
                for index in (position + 1)..<end { wire.append(DomainName.lowercased(bytes[index])) }
                position = end
            case 0xC0:
                guard position + 1 < bytes.count else { throw truncated("\(what()) (compression pointer)") }
                jumps += 1
                guard jumps <= DNSWire.maximumPointerJumps else {
                    throw DNSError(
                        code: .malformedResponse,
                        reason: "\(what()): name compression pointers loop (RFC 1035 §4.1.4)")
                }
                let target = Int(length & 0x3F) << 8 | Int(bytes[position + 1])
                if resumeAt == nil { resumeAt = position + 2 }
                guard target < bytes.count else {
                    throw DNSError(
                        code: .malformedResponse,
                        reason: "\(what()): a compression pointer points past the end of the message")
                }
                position = target
            default:
                throw DNSError(
                    code: .malformedResponse,
                    reason: "\(what()): label type 0x\(String(length & 0xC0, radix: 16)) is not supported "
                        + "(RFC 6891 §5 retired extended labels)")
            }
        }
    }

    private func truncated(_ what: String) -> DNSError {
        DNSError(
            code: .malformedResponse,
            reason: "the message ends at byte \(bytes.count) in the middle of \(what)")
    }
}
