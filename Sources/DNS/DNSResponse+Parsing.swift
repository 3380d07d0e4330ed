extension DNSResponse {
    /// How a received message relates to the query that is waiting for an answer.
    enum Match: Sendable {
        /// Not an answer to this query (wrong ID, not a response, another question, unreadable header):
        /// ignore it and keep waiting, since it may be spoofed or stale (RFC 5452 §4.3).
        case unrelated(String)
        /// The answer to this query.
        case response(DNSResponse)
        /// The answer to this query, but its records cannot be read.
        case malformed(DNSError)
    }

    /// Parses `bytes` as an answer to `query`, defensively: every length is checked against the message.
    ///
    /// A message counts as the answer only if its ID, QR bit, opcode and question (name compared
    /// ignoring ASCII case, type and class) all match the query (RFC 5452 §9.1). A server may leave
    /// the question out of an error reply (RFC 6891 §7 FORMERR, SERVFAIL, NOTIMP, REFUSED); that
    /// is accepted only for those RCODEs and only without records.
    static func match(_ bytes: [UInt8], to query: DNSQuery) -> Match {
        var reader = DNSMessageReader(bytes)
        let header: Header
        do throws(DNSError) {
            header = try Header(&reader)
        } catch {
            return .unrelated("shorter than a DNS header")
        }
        guard header.id == query.id else { return .unrelated("ID \(header.id) instead of \(query.id)") }
        guard header.flags & DNSWire.Flag.response != 0 else { return .unrelated("a query, not a response") }
        guard header.flags & DNSWire.Flag.opcodeMask == 0 else { return .unrelated("an opcode other than QUERY") }
        let headerCode = header.flags & DNSWire.Flag.responseCodeMask
        switch header.questions {
        case 1:
            do throws(DNSError) {
                let name = try reader.readName("the question")
                let type = try reader.readUInt16("the question")
                let recordClass = try reader.readUInt16("the question")
                guard name == query.name, type == DNSWire.RecordType.txt,
                    recordClass == DNSWire.RecordClass.internet
                else { return .unrelated("a different question") }
            } catch {
                return .unrelated("an unreadable question")
            }
        case 0:
            let errorCodes = [
                DNSWire.ResponseCode.formatError, DNSWire.ResponseCode.serverFailure,
                DNSWire.ResponseCode.notImplemented, DNSWire.ResponseCode.refused,
            ]
            guard errorCodes.contains(headerCode), header.answers == 0 else {
                return .unrelated("an answer without a question")
            }
        default:
            return .unrelated("\(header.questions) questions")
        }

        var response = DNSResponse(
            id: header.id, isTruncated: header.flags & DNSWire.Flag.truncated != 0, responseCode: headerCode,
            answers: [], hasEDNS: false)
        // A truncated reply is only a signal to retry over TCP; its records may be cut anywhere.
        if response.isTruncated { return .response(response) }
        do throws(DNSError) {
            response.answers.reserveCapacity(Int(header.answers))
            for index in 0..<Int(header.answers) {
                response.answers.append(try readRecord(&reader, "answer record \(index + 1)"))
            }
            for index in 0..<Int(header.authority) {
                _ = try readRecord(&reader, "authority record \(index + 1)")
            }
            for index in 0..<Int(header.additional) {
                let what = "additional record \(index + 1)"
                let recordStart = reader.offset
                let name = try reader.readName(what)
                let type = try reader.readUInt16(what)
                if type == DNSWire.RecordType.opt {
                    // RFC 6891 §6.1.1: at most one OPT, owned by the root; its TTL holds the upper RCODE bits.
                    guard !response.hasEDNS, name.wire == [0] else {
                        throw DNSError(
                            code: .malformedResponse, reason: "\(what): a second or misplaced OPT record")
                    }
                    _ = try reader.readUInt16(what)
                    let extended = try reader.readUInt32(what)
                    let length = try reader.readUInt16(what)
                    try reader.skip(Int(length), what)
                    response.hasEDNS = true
                    response.responseCode |= UInt16(extended >> 24) << 4
                } else {
                    reader = DNSMessageReader(bytes, offset: recordStart)
                    _ = try readRecord(&reader, what)
                }
            }
        } catch {
            return .malformed(error)
        }
        return .response(response)
    }

    /// The fixed 12-byte header (RFC 1035 §4.1.1).
    private struct Header {
        var id: UInt16
        var flags: UInt16
        var questions: UInt16
        var answers: UInt16
        var authority: UInt16
        var additional: UInt16

        init(_ reader: inout DNSMessageReader) throws(DNSError) {
            id = try reader.readUInt16("the header")
            flags = try reader.readUInt16("the header")
            questions = try reader.readUInt16("the header")
            answers = try reader.readUInt16("the header")
            authority = try reader.readUInt16("the header")
            additional = try reader.readUInt16("the header")
        }
    }

    /// Reads one resource record (RFC 1035 §4.1.3), decoding TXT and CNAME data.
    private static func readRecord(_ reader: inout DNSMessageReader, _ what: String) throws(DNSError) -> Record {
        let name = try reader.readName(what)
        let type = try reader.readUInt16(what)
        let recordClass = try reader.readUInt16(what)
        let rawTTL = try reader.readUInt32(what)
        let length = Int(try reader.readUInt16(what))
        let dataStart = reader.offset
        try reader.skip(length, "\(what) data")
        let dataEnd = reader.offset
        var data = RecordData.other
        if recordClass == DNSWire.RecordClass.internet {
            switch type {
            case DNSWire.RecordType.txt:
                data = .txt(try characterStrings(reader.bytes, from: dataStart, to: dataEnd, what))
            case DNSWire.RecordType.cname:
                var dataReader = DNSMessageReader(reader.bytes, offset: dataStart)
                let target = try dataReader.readName("\(what) CNAME target")
                guard dataReader.offset == dataEnd else {
                    throw DNSError(
                        code: .malformedResponse, reason: "\(what): the CNAME target does not fill its RDATA")
                }
                data = .cname(target)
            default:
                break
            }
        }
        // RFC 2181 §8: a TTL with the most significant bit set is treated as zero.
        let ttl = rawTTL & 0x8000_0000 == 0 ? rawTTL : 0
        return Record(name: name, type: type, recordClass: recordClass, ttl: ttl, data: data)
    }

    /// Splits TXT RDATA into its character-strings (RFC 1035 §3.3.14): each a length byte and that many bytes,
    /// exactly filling the RDATA, at least one.
    private static func characterStrings(
        _ bytes: [UInt8], from start: Int, to end: Int, _ what: String
    ) throws(DNSError) -> [[UInt8]] {
        guard start < end else {
            throw DNSError(
                code: .malformedResponse, reason: "\(what): empty TXT RDATA; RFC 1035 §3.3.14 requires a string")
        }
        var strings: [[UInt8]] = []
        var position = start
        while position < end {
            let stringEnd = position + 1 + Int(bytes[position])
            guard stringEnd <= end else {
                throw DNSError(
                    code: .malformedResponse, reason: "\(what): a TXT character-string runs past its RDATA")
            }
            strings.append(Array(bytes[(position + 1)..<stringEnd]))
            position = stringEnd
        }
        return strings
    }
}
