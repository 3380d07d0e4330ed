import Testing

@testable import DNS

/// Hand-built messages: bytes written out so each test shows exactly what is on the wire (RFC 1035 §4.1).
private enum Wire {
    static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func u32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Uncompressed wire form of a dotted name.
    static func name(_ text: String) -> [UInt8] {
        text.split(separator: ".").flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } + [0]
    }

    static func header(
        id: UInt16 = 0x1234, flags: UInt16 = 0x8180, questions: UInt16 = 1, answers: UInt16 = 0,
        authority: UInt16 = 0, additional: UInt16 = 0
    ) -> [UInt8] {
        [id, flags, questions, answers, authority, additional].flatMap(u16)
    }

    static func question(_ text: String, type: UInt16 = 16) -> [UInt8] { name(text) + u16(type) + u16(1) }

    static func record(owner: [UInt8], type: UInt16, ttl: UInt32, data: [UInt8], recordClass: UInt16 = 1) -> [UInt8] {
        owner + u16(type) + u16(recordClass) + u32(ttl) + u16(UInt16(data.count)) + data
    }

    static func txt(owner: [UInt8] = [0xC0, 12], ttl: UInt32 = 300, _ strings: String...) -> [UInt8] {
        record(owner: owner, type: 16, ttl: ttl, data: strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) })
    }

    static func cname(owner: [UInt8], ttl: UInt32 = 300, target: [UInt8]) -> [UInt8] {
        record(owner: owner, type: 5, ttl: ttl, data: target)
    }
}

@Suite struct DNSMessageTests {
    static let questionName = "sel._domainkey.example.test"
    let query: DNSQuery

    init() throws {
        query = DNSQuery(id: 0x1234, name: try DomainName(validating: Self.questionName), ednsPayloadSize: nil)
    }

    private func records(_ message: [UInt8]) throws -> [TXTRecord] {
        guard case .response(let response) = DNSResponse.match(message, to: query) else {
            Issue.record("not matched as a response: \(DNSResponse.match(message, to: query))")
            return []
        }
        return try response.txtRecords(for: query.name, from: .localhost)
    }

    private func answerError(_ message: [UInt8]) -> DNSError? {
        switch DNSResponse.match(message, to: query) {
        case .response(let response): thrownError { try response.txtRecords(for: query.name, from: .localhost) }
        case .malformed(let error): error
        case .unrelated: nil
        }
    }

    private func isUnrelated(_ message: [UInt8]) -> Bool {
        if case .unrelated = DNSResponse.match(message, to: query) { return true }
        return false
    }

    // MARK: Queries

    @Test func encodesAPlainQuery() throws {
        let query = DNSQuery(id: 0xBEEF, name: try DomainName(validating: "Sel.Example.TEST."), ednsPayloadSize: nil)
        #expect(
            query.bytes == [0xBE, 0xEF, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0] + Wire.name("sel.example.test") + [
                0, 16, 0, 1,
            ])
    }

    @Test func encodesAnEDNSQuery() throws {
        let query = DNSQuery(id: 7, name: try DomainName(validating: "a.test"), ednsPayloadSize: 1232)
        #expect(
            query.bytes == [0, 7, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1] + Wire.name("a.test") + [0, 16, 0, 1]
                + [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0])
        #expect(query.withoutEDNS().bytes.count == query.bytes.count - 11)
    }

    @Test func queryIDsAreRandom() throws {
        let name = try DomainName(validating: "a.test")
        let ids = Set((0..<200).map { _ in DNSQuery(name: name, ednsPayloadSize: nil).id })
        #expect(ids.count > 190)
    }

    // MARK: Answers

    @Test func readsASingleStringRecord() throws {
        let message = Wire.header(answers: 1) + Wire.question(Self.questionName) + Wire.txt(ttl: 3600, "v=DKIM1; p=abc")
        #expect(try records(message) == [TXTRecord(strings: [bytes("v=DKIM1; p=abc")], ttl: 3600)])
    }

    @Test func readsSeveralStringsAndRecords() throws {
        let long = String(repeating: "A", count: 255)
        let message =
            Wire.header(answers: 2) + Wire.question(Self.questionName)
            + Wire.txt(ttl: 60, "v=DKIM1; ", "p=", long) + Wire.txt(ttl: 90, "", "second")
        let found = try records(message)
        #expect(found.count == 2)
        #expect(found[0].strings == [bytes("v=DKIM1; "), bytes("p="), bytes(long)])
        #expect(found[0].joined == bytes("v=DKIM1; p=" + long))
        #expect(found[0].ttl == 60)
        #expect(found[1].strings == [[], bytes("second")])
        #expect(found[1].text == "second")
    }

    @Test func followsCompressionIntoTheMiddleOfAName() throws {
        // Question at offset 12: 3 "sel" (12) 10 "_domainkey" (16) 7 "example" (27) 4 "test" (35) 0.
        let owner = [3] + bytes("SEL") + [10] + bytes("_DomainKey") + [0xC0, 27]
        let message = Wire.header(answers: 1) + Wire.question(Self.questionName) + Wire.txt(owner: owner, "k")
        #expect(try records(message).map(\.text) == ["k"])
    }

    @Test func matchesTheQuestionIgnoringCase() throws {
        let message = Wire.header(answers: 1) + Wire.question("SeL._DoMaInKeY.ExAmPlE.TeSt") + Wire.txt("x")
        #expect(try records(message).map(\.text) == ["x"])
    }

    @Test func ignoresRecordsForOtherNamesAndTypes() throws {
        let message =
            Wire.header(answers: 3) + Wire.question(Self.questionName)
            + Wire.txt(owner: Wire.name("other.example.test"), "not this")
            + Wire.record(owner: [0xC0, 12], type: 1, ttl: 5, data: [192, 0, 2, 1])
            + Wire.txt("this")
        #expect(try records(message).map(\.text) == ["this"])
    }

    @Test func followsACNAMEChainAndCapsTheTTL() throws {
        // sel._domainkey.example.test CNAME key.provider.test (TTL 120); key.provider.test CNAME k2.provider.test;
        // k2.provider.test TXT (TTL 3600). The target names are compressed against earlier records.
        var message = Wire.header(answers: 3) + Wire.question(Self.questionName)
        let firstTargetOffset = message.count + 12  // after owner pointer (2), type, class, TTL, length (10)
        message += Wire.cname(owner: [0xC0, 12], ttl: 120, target: Wire.name("key.provider.test"))
        // "provider.test" starts 4 bytes into the first target.
        message += Wire.cname(
            owner: [0xC0, UInt8(firstTargetOffset)], ttl: 600,
            target: [2] + bytes("k2") + [0xC0, UInt8(firstTargetOffset + 4)])
        message += Wire.txt(owner: Wire.name("k2.provider.test"), ttl: 3600, "v=DKIM1")
        #expect(try records(message) == [TXTRecord(strings: [bytes("v=DKIM1")], ttl: 120)])
    }

    @Test func aCNAMEToANameWithoutTXTIsNoData() throws {
        let message =
            Wire.header(answers: 1) + Wire.question(Self.questionName)
            + Wire.cname(owner: [0xC0, 12], target: Wire.name("elsewhere.test"))
        #expect(answerError(message)?.code == .noData)
    }

    @Test func aCNAMELoopIsMalformed() throws {
        let message =
            Wire.header(answers: 2) + Wire.question(Self.questionName)
            + Wire.cname(owner: [0xC0, 12], target: Wire.name("b.test"))
            + Wire.cname(owner: Wire.name("b.test"), target: Wire.name(Self.questionName))
        #expect(answerError(message)?.code == .malformedResponse)
    }

    @Test func aTTLWithTheTopBitSetIsZero() throws {
        let message = Wire.header(answers: 1) + Wire.question(Self.questionName) + Wire.txt(ttl: 0x8000_0001, "x")
        #expect(try records(message).first?.ttl == 0)
    }

    // MARK: Response codes

    @Test(arguments: [
        (UInt16(0x8183), DNSError.Code.nameNotFound), (0x8182, .serverFailure), (0x8185, .refused),
        (0x8184, .malformedResponse), (0x8181, .malformedResponse), (0x818B, .malformedResponse),
    ])
    func mapsResponseCodes(flags: UInt16, code: DNSError.Code) {
        let message = Wire.header(flags: flags) + Wire.question(Self.questionName)
        #expect(answerError(message)?.code == code)
    }

    @Test func noErrorWithoutTXTIsNoData() {
        let empty = Wire.header() + Wire.question(Self.questionName)
        #expect(answerError(empty)?.code == .noData)
        // An SOA in the authority section, as a real server sends with NODATA (RFC 2308 §2.2).
        let withSOA =
            Wire.header(authority: 1) + Wire.question(Self.questionName)
            + Wire.record(owner: Wire.name("test"), type: 6, ttl: 60, data: [0, 0] + [UInt8](repeating: 0, count: 20))
        #expect(answerError(withSOA)?.code == .noData)
    }

    @Test func extendedResponseCodeFromOPTIsMalformed() {
        // OPT with extended RCODE 1 on top of header RCODE 0: BADVERS (16), RFC 6891 §6.1.3.
        let message =
            Wire.header(additional: 1) + Wire.question(Self.questionName)
            + [0] + Wire.u16(41) + Wire.u16(1232) + Wire.u32(0x0100_0000) + Wire.u16(0)
        guard case .response(let response) = DNSResponse.match(message, to: query) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.responseCode == 16)
        #expect(response.hasEDNS)
        #expect(answerError(message)?.code == .malformedResponse)
    }

    @Test func anErrorReplyMayOmitTheQuestion() {
        let message = Wire.header(flags: 0x8182, questions: 0)
        #expect(answerError(message)?.code == .serverFailure)
        #expect(isUnrelated(Wire.header(flags: 0x8183, questions: 0)))
        #expect(isUnrelated(Wire.header(flags: 0x8180, questions: 0)))
    }

    @Test func truncatedFlagSkipsTheRecords() {
        // TC=1 and the records cut off mid-way: only the signal matters.
        let message = Wire.header(flags: 0x8380, answers: 5) + Wire.question(Self.questionName) + [0xC0]
        guard case .response(let response) = DNSResponse.match(message, to: query) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.isTruncated)
    }

    // MARK: Not ours (anti-spoofing)

    @Test func rejectsMessagesThatDoNotAnswerThisQuery() {
        let answer = Wire.txt("x")
        #expect(isUnrelated(Wire.header(id: 0x4321, answers: 1) + Wire.question(Self.questionName) + answer))
        #expect(isUnrelated(Wire.header(flags: 0x0100, answers: 1) + Wire.question(Self.questionName) + answer))
        #expect(isUnrelated(Wire.header(flags: 0x8980, answers: 1) + Wire.question(Self.questionName) + answer))
        #expect(isUnrelated(Wire.header(answers: 1) + Wire.question("other._domainkey.example.test") + answer))
        #expect(isUnrelated(Wire.header(answers: 1) + Wire.question(Self.questionName, type: 1) + answer))
        #expect(isUnrelated(Wire.header(questions: 2, answers: 1) + Wire.question(Self.questionName) + answer))
        #expect(isUnrelated([0x12, 0x34, 0x81]))
        #expect(isUnrelated([]))
    }

    // MARK: Hostile input

    @Test func aPointerToItselfIsALoop() {
        let answerOffset = UInt8(12 + Wire.question(Self.questionName).count)
        let message =
            Wire.header(answers: 1) + Wire.question(Self.questionName)
            + Wire.txt(owner: [0xC0, answerOffset], "x")
        #expect(answerError(message)?.code == .malformedResponse)
    }

    @Test func twoPointersToEachOtherAreALoop() {
        let base = 12 + Wire.question(Self.questionName).count
        // Owner: pointer to base+2, which is a pointer back to base.
        let message =
            Wire.header(answers: 1) + Wire.question(Self.questionName)
            + [0xC0, UInt8(base + 2), 0xC0, UInt8(base)]
            + Wire.u16(16) + Wire.u16(1) + Wire.u32(1) + Wire.u16(2) + [1, 0x78]
        #expect(answerError(message)?.code == .malformedResponse)
    }

    @Test func aNameLongerThan255BytesIsMalformed() {
        // 63-byte labels chained by pointers back to the previous label: the expansion never ends at 255.
        var message = Wire.header(answers: 1) + Wire.question(Self.questionName)
        let start = message.count
        message += [63] + [UInt8](repeating: 0x61, count: 63) + [0xC0, UInt8(start)]
        message += Wire.u16(16) + Wire.u16(1) + Wire.u32(1) + Wire.u16(2) + [1, 0x78]
        #expect(answerError(message)?.code == .malformedResponse)
    }

    @Test func extendedLabelTypesAreMalformed() {
        let message = Wire.header(answers: 1) + Wire.question(Self.questionName) + Wire.txt(owner: [0x41, 0, 0], "x")
        #expect(answerError(message)?.code == .malformedResponse)
    }

    @Test func lengthsPastTheEndAreMalformed() {
        let question = Wire.question(Self.questionName)
        // RDLENGTH says 50, 3 bytes follow.
        let shortData =
            Wire.header(answers: 1) + question + [0xC0, 12] + Wire.u16(16) + Wire.u16(1) + Wire.u32(1)
            + Wire.u16(50) + [2, 0x61, 0x62]
        #expect(answerError(shortData)?.code == .malformedResponse)
        // A character-string longer than its RDATA.
        let overrun =
            Wire.header(answers: 1) + question + Wire.record(owner: [0xC0, 12], type: 16, ttl: 1, data: [9, 0x61])
        #expect(answerError(overrun)?.code == .malformedResponse)
        // Empty TXT RDATA (RFC 1035 §3.3.14 needs one string).
        let empty = Wire.header(answers: 1) + question + Wire.record(owner: [0xC0, 12], type: 16, ttl: 1, data: [])
        #expect(answerError(empty)?.code == .malformedResponse)
        // More answers announced than present.
        let missing = Wire.header(answers: 2) + question + Wire.txt("x")
        #expect(answerError(missing)?.code == .malformedResponse)
        // A pointer past the end.
        let farPointer = Wire.header(answers: 1) + question + Wire.txt(owner: [0xFF, 0xFF], "x")
        #expect(answerError(farPointer)?.code == .malformedResponse)
    }

    @Test func everyPrefixOfAnAnswerIsRejectedWithoutCrashing() {
        var message = Wire.header(answers: 2, additional: 1) + Wire.question(Self.questionName)
        message += Wire.cname(owner: [0xC0, 12], target: Wire.name("k.provider.test"))
        message += Wire.txt(owner: Wire.name("k.provider.test"), "v=DKIM1; ", "p=MIGf")
        message += [0] + Wire.u16(41) + Wire.u16(1232) + Wire.u32(0) + Wire.u16(0)
        #expect((try? records(message))?.map(\.text) == ["v=DKIM1; p=MIGf"])
        let questionEnd = 12 + Wire.question(Self.questionName).count
        for length in 0..<message.count {
            let prefix = Array(message[0..<length])
            switch DNSResponse.match(prefix, to: query) {
            case .unrelated:
                #expect(length < questionEnd)
            case .malformed(let error):
                #expect(length >= questionEnd)
                #expect(error.code == .malformedResponse)
            case .response:
                Issue.record("a \(length)-byte prefix was taken as a whole answer")
            }
        }
    }

    @Test func randomCorruptionNeverCrashes() {
        let message =
            Wire.header(answers: 2) + Wire.question(Self.questionName)
            + Wire.cname(owner: [0xC0, 12], target: Wire.name("k.provider.test"))
            + Wire.txt(owner: Wire.name("k.provider.test"), "v=DKIM1; ", "p=MIGf")
        var generator = SystemRandomNumberGenerator()
        var outcomes = (unrelated: 0, malformed: 0, response: 0)
        for _ in 0..<5000 {
            var corrupted = message
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                corrupted[Int.random(in: 12..<corrupted.count, using: &generator)] = UInt8.random(in: 0...255)
            }
            switch DNSResponse.match(corrupted, to: query) {
            case .unrelated: outcomes.unrelated += 1
            case .malformed: outcomes.malformed += 1
            case .response(let response):
                outcomes.response += 1
                _ = try? response.txtRecords(for: query.name, from: .localhost)
            }
        }
        #expect(outcomes.unrelated + outcomes.malformed + outcomes.response == 5000)
    }
}
