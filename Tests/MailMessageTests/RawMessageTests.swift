import Testing

@testable import MailMessage

@Suite struct RawMessageTests {
    @Test(arguments: [
        ("From: a@b.example\r\nTo: c@d.example\r\n\r\nbody\r\n", "From: a@b.example\r\nTo: c@d.example\r\n\r\n"),
        ("From: a@b.example\nTo: c@d.example\n\nbody\n\nmore", "From: a@b.example\nTo: c@d.example\n\n"),
        ("From: a@b.example\r\n", "From: a@b.example\r\n"),
        ("\r\nbody", "\r\n"),
    ])
    func theHeaderSectionEndsAtTheFirstEmptyLine(_ message: String, _ header: String) {
        #expect(RawMessage.headerSection(of: utf8(message)) == utf8(header))
    }

    @Test func aHeaderSectionParsesLikeTheWholeMessageWithoutItsBody() throws {
        let text = "From: a@example.com\nTo: b@example.org,\n c@example.org\n\n<html>From: x@y.z</html>\n"
        let header = try RawMessage(headerSectionOf: utf8(text))
        let whole = try RawMessage(text)
        #expect(header.headerFields.map(\.name) == whole.headerFields.map(\.name))
        #expect(header.headerFields.map { Array($0.rawValue) } == whole.headerFields.map { Array($0.rawValue) })
        #expect(header.body.isEmpty)
        #expect(header.from == whole.from)
    }

    @Test func bareLineFeedsBecomeCRLF() throws {
        let message = try RawMessage("From: a@example.com\nSubject: hi\n\nline 1\nline 2\n")
        #expect(message.bytes == utf8("From: a@example.com\r\nSubject: hi\r\n\r\nline 1\r\nline 2\r\n"))
        #expect(Array(message.body) == utf8("line 1\r\nline 2\r\n"))
        #expect(message.headerFields.map(\.name) == ["From", "Subject"])
    }

    @Test func crlfInputIsKeptAsIs() throws {
        let text = "From: a@example.com\r\nSubject: hi\r\n\r\nbody\r\n"
        let message = try RawMessage(text)
        #expect(message.bytes == utf8(text))
        #expect(message.bodyStart == text.utf8.count - 6)
    }

    @Test func mixedLineEndingsAreNormalized() throws {
        let message = try RawMessage("A: 1\r\nB: 2\n\r\nbody\nmore\r\n")
        #expect(message.bytes == utf8("A: 1\r\nB: 2\r\n\r\nbody\r\nmore\r\n"))
    }

    @Test func foldedFieldKeepsItsBytesAndUnfolds() throws {
        let text = "Subject: a long\r\n\tsubject  \r\n  line\r\nTo: b@example.com\r\n\r\n"
        let message = try RawMessage(text)
        let subject = try #require(message.fields(named: "subject").first)
        #expect(Array(subject.raw) == utf8("Subject: a long\r\n\tsubject  \r\n  line\r\n"))
        #expect(Array(subject.rawValue) == utf8(" a long\r\n\tsubject  \r\n  line"))
        #expect(Array(subject.rawWithoutTrailingCRLF) == utf8("Subject: a long\r\n\tsubject  \r\n  line"))
        #expect(subject.unfoldedValue == "a long\tsubject    line")
        #expect(message.value(of: "TO") == "b@example.com")
    }

    @Test func mboxSeparatorLineIsDropped() throws {
        let message = try RawMessage("From sender@example.com Sat Jan  3 01:05:34 1996\nFrom: a@example.com\n\nhi\n")
        #expect(message.bytes == utf8("From: a@example.com\r\n\r\nhi\r\n"))
        #expect(message.headerFields.count == 1)
    }

    @Test func obsoleteFromFieldWithSpaceBeforeColonIsNotAnMboxLine() throws {
        // RFC 5322 §4.5.3: WSP between the field name and the colon.
        let message = try RawMessage("From : a@example.com\r\nSubject\t: hi\r\n\r\n")
        #expect(message.headerFields.map(\.name) == ["From", "Subject"])
        #expect(message.value(of: "from") == "a@example.com")
        #expect(message.value(of: "subject") == "hi")
        #expect(Array(message.headerFields[0].raw) == utf8("From : a@example.com\r\n"))
    }

    @Test func messageWithoutBody() throws {
        let text = "From: a@example.com\r\nSubject: no body\r\n"
        let message = try RawMessage(text)
        #expect(message.bodyStart == message.bytes.count)
        #expect(message.body.isEmpty)
        #expect(message.headerFields.count == 2)
        #expect(message.value(of: "subject") == "no body")
    }

    @Test func messageWithoutFinalCRLF() throws {
        let message = try RawMessage("From: a@example.com\r\nSubject: x")
        #expect(message.value(of: "subject") == "x")
        #expect(Array(message.headerFields[1].rawValue) == utf8(" x"))
    }

    @Test func emptyBodyAfterEmptyLine() throws {
        let message = try RawMessage("From: a@example.com\r\n\r\n")
        #expect(message.body.isEmpty)
        #expect(message.bodyStart == message.bytes.count)
    }

    @Test(arguments: ["", "\r\n", "\r\nbody only\r\n", "no colon here\r\n\r\nbody"])
    func noHeaderFieldIsNotAMessage(text: String) {
        let error = #expect(throws: MailMessageError.self) { try RawMessage(text) }
        #expect(error?.code == "mail.not-a-message")
    }

    @Test func emptyFieldValue() throws {
        let message = try RawMessage("Subject:\r\nFrom: a@example.com\r\n\r\nx")
        let subject = try #require(message.fields(named: "Subject").first)
        #expect(subject.rawValue.isEmpty)
        #expect(subject.unfoldedValue == "")
        #expect(message.value(of: "from") == "a@example.com")
    }

    @Test func linesThatAreNotFieldsAreSkipped() throws {
        let message = try RawMessage("From: a@example.com\r\ngarbage line\r\n continued\r\nTo: b@example.com\r\n\r\n")
        #expect(message.headerFields.map(\.lowercasedName) == ["from", "to"])
    }

    @Test func repeatedFieldsKeepTheirOrder() throws {
        let message = try RawMessage("Received: one\r\nReceived: two\r\nFrom: a@example.com\r\n\r\n")
        #expect(message.fields(named: "received").map(\.unfoldedValue) == ["one", "two"])
        #expect(message.value(of: "received") == "one")
    }

    @Test func truncatingBodyKeepsHeadersByteExact() throws {
        let message = try RawMessage("From: a@example.com\r\nSubject: s\r\n\r\n0123456789")
        let cut = message.truncatingBody(to: 4)
        #expect(Array(cut.body) == utf8("0123"))
        #expect(cut.headerFields.map { Array($0.raw) } == message.headerFields.map { Array($0.raw) })
        #expect(cut.value(of: "subject") == "s")
        #expect(Array(message.truncatingBody(to: 100).body) == utf8("0123456789"))
        #expect(message.truncatingBody(to: -1).body.isEmpty)
    }

    @Test func headerSectionOfASliceUsesBaseIndices() {
        let bytes = utf8("xxxxContent-Type: text/html\r\n\r\nbody")
        let (fields, bodyStart) = RawMessage.parseHeaderSection(bytes[4...])
        #expect(fields.count == 1)
        #expect(fields.first?.raw.startIndex == 4)
        #expect(bodyStart == 31)
        #expect(Array(bytes[bodyStart...]) == utf8("body"))
    }

    @Test func decodedValueDecodesEncodedWords() throws {
        let message = try RawMessage("Subject: =?UTF-8?B?Q2Fmw6k=?= ok\r\nFrom: a@example.com\r\n\r\n")
        #expect(message.fields(named: "subject").first?.decodedValue == "Café ok")
    }
}
