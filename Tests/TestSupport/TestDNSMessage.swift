package import DNS

/// Builds DNS replies for the fake servers, written apart from the `DNS` target's parser so that
/// tests do not check the parser against itself (RFC 1035 §4.1).
package enum TestDNSMessage {
    /// The question section of `query` (name, type, class), or nil if the query is too short to have one.
    /// Queries carry uncompressed names, so the name is read label by label.
    package static func question(of query: [UInt8]) -> ArraySlice<UInt8>? {
        var position = 12
        while position < query.count {
            let length = Int(query[position])
            if length == 0 {
                let end = position + 1 + 4
                return end <= query.count ? query[12..<end] : nil
            }
            guard length < 64 else { return nil }
            position += 1 + length
        }
        return nil
    }

    /// Whether `query` carries an OPT record right after its question (RFC 6891 §6.1.1).
    package static func hasEDNS(_ query: [UInt8]) -> Bool {
        guard query.count >= 12, query[10] != 0 || query[11] != 0, let question = question(of: query) else {
            return false
        }
        let start = question.endIndex
        return start + 3 <= query.count && query[start] == 0 && query[start + 1] == 0 && query[start + 2] == 41
    }

    /// A reply to `query`.
    ///
    /// - Parameters:
    ///   - rcode: the response code.
    ///   - truncated: sets TC.
    ///   - answers: TXT records at the question's name (owner written as a pointer to the question);
    ///     strings longer than 255 bytes are split.
    ///   - id: overrides the query's ID.
    ///   - questionName: replaces the question's name (wire form), to answer another question.
    ///   - withEDNS: adds an OPT record advertising 1232 bytes.
    package static func response(
        to query: [UInt8], rcode: UInt8 = 0, truncated: Bool = false, answers: [TXTRecord] = [],
        id: UInt16? = nil, questionName: [UInt8]? = nil, withEDNS: Bool = false
    ) -> [UInt8]? {
        guard var question = question(of: query).map(Array.init) else { return nil }
        if let questionName { question = questionName + question.suffix(4) }
        let queryID = UInt16(query[0]) << 8 | UInt16(query[1])
        let replyID = id ?? queryID
        var flags: UInt16 = 0x8000 | 0x0080 | (UInt16(query[2] & 0x01) << 8) | UInt16(rcode & 0x0F)
        if truncated { flags |= 0x0200 }
        var message: [UInt8] = []
        for word in [replyID, flags, 1, UInt16(answers.count), 0, withEDNS ? 1 : 0] {
            message.append(contentsOf: [UInt8(word >> 8), UInt8(word & 0xFF)])
        }
        message.append(contentsOf: question)
        for record in answers {
            var data: [UInt8] = []
            for string in record.strings {
                if string.isEmpty { data.append(0) }
                for start in stride(from: 0, to: string.count, by: 255) {
                    let chunk = string[start..<min(start + 255, string.count)]
                    data.append(UInt8(chunk.count))
                    data.append(contentsOf: chunk)
                }
            }
            message.append(contentsOf: [0xC0, 0x0C, 0, 16, 0, 1])
            message.append(contentsOf: [
                UInt8(record.ttl >> 24), UInt8(record.ttl >> 16 & 0xFF), UInt8(record.ttl >> 8 & 0xFF),
                UInt8(record.ttl & 0xFF),
            ])
            message.append(contentsOf: [UInt8(data.count >> 8), UInt8(data.count & 0xFF)])
            message.append(contentsOf: data)
        }
        if withEDNS { message.append(contentsOf: [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0]) }
        return message
    }

    /// What a `FakeDNSResponder` sends back for `query`.
    static func replies(to query: [UInt8], behaviour: FakeDNSResponder.Behaviour, overTCP: Bool) -> [[UInt8]] {
        let edns = hasEDNS(query)
        let replies: [[UInt8]?]
        switch behaviour {
        case .answer(let records):
            replies = [response(to: query, answers: records, withEDNS: edns)]
        case .responseCode(let rcode):
            replies = [response(to: query, rcode: rcode, withEDNS: edns)]
        case .silence:
            replies = []
        case .truncatedOverUDP(let records):
            replies =
                overTCP
                ? [response(to: query, answers: records, withEDNS: edns)]
                : [response(to: query, truncated: true, withEDNS: edns)]
        case .mismatchedIDFirst(let records):
            let queryID = query.count >= 2 ? UInt16(query[0]) << 8 | UInt16(query[1]) : 0
            replies =
                overTCP
                ? [response(to: query, answers: records, withEDNS: edns)]
                : [
                    response(
                        to: query, answers: [TXTRecord(strings: [Array("spoofed".utf8)], ttl: 1)],
                        id: queryID ^ 0x5A5A, withEDNS: edns),
                    response(to: query, answers: records, withEDNS: edns),
                ]
        case .mismatchedQuestionFirst(let records):
            let other: [UInt8] = [5] + Array("other".utf8) + [4] + Array("test".utf8) + [0]
            replies =
                overTCP
                ? [response(to: query, answers: records, withEDNS: edns)]
                : [
                    response(
                        to: query, answers: [TXTRecord(strings: [Array("spoofed".utf8)], ttl: 1)],
                        questionName: other, withEDNS: edns),
                    response(to: query, answers: records, withEDNS: edns),
                ]
        case .formatErrorForEDNS(let records):
            replies = edns ? [response(to: query, rcode: 1)] : [response(to: query, answers: records)]
        case .custom(let reply):
            return reply(query, overTCP)
        }
        return replies.compactMap { $0 }
    }
}
