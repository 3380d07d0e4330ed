import Testing

@testable import MailMessage

@Suite struct MIMETreeTests {
    @Test func singlePartMessageIsPartOne() throws {
        let message = try RawMessage("From: a@example.com\r\nSubject: hi\r\n\r\nJust text.\r\n")
        let tree = message.mimeTree()
        #expect(tree.root.path == "1")
        #expect(tree.root.contentType == .defaultText)
        #expect(tree.root.contentType.charset == "us-ascii")
        #expect(tree.root.children.isEmpty)
        #expect(Array(tree.root.body) == utf8("Just text.\r\n"))
        #expect(tree.warnings.isEmpty)
    }

    @Test func nestedMixedRelatedAlternativeWithIMAPPaths() throws {
        let message = try RawMessage(
            "From: a@example.com\r\n"
                + "MIME-Version: 1.0\r\n"
                + "Content-Type: multipart/mixed; boundary=\"outer\"\r\n"
                + "\r\n"
                + "This is a multi-part message in MIME format.\r\n"  // preamble
                + "--outer\r\n"
                + "Content-Type: multipart/related; boundary=\"rel\"; type=\"multipart/alternative\"\r\n"
                + "\r\n"
                + "--rel\r\n"
                + "Content-Type: multipart/alternative; boundary=\"alt\"\r\n"
                + "\r\n"
                + "--alt\r\n"
                + "Content-Type: text/plain; charset=utf-8\r\n"
                + "\r\n"
                + "plain\r\n"
                + "--alt\r\n"
                + "Content-Type: text/html; charset=utf-8\r\n"
                + "\r\n"
                + "<p>html</p>\r\n"
                + "--alt--\r\n"
                + "--rel\r\n"
                + "Content-Type: image/png\r\n"
                + "Content-Transfer-Encoding: base64\r\n"
                + "Content-ID: <logo@example.com>\r\n"
                + "\r\n"
                + "iVBORw0KGgo=\r\n"
                + "--rel--\r\n"
                + "--outer\r\n"
                + "Content-Type: application/pdf; name=\"ticket.pdf\"\r\n"
                + "Content-Disposition: attachment; filename=\"ticket.pdf\"\r\n"
                + "Content-Transfer-Encoding: base64\r\n"
                + "\r\n"
                + "JVBERi0=\r\n"
                + "--outer--\r\n"
                + "epilogue, ignored\r\n")
        let tree = message.mimeTree()
        #expect(tree.warnings.isEmpty)
        #expect(tree.root.path == "")
        #expect(tree.root.contentType.mediaType == "multipart/mixed")
        let summary = tree.parts.map { "\($0.path) \($0.contentType.mediaType)" }
        #expect(
            summary == [
                " multipart/mixed", "1 multipart/related", "1.1 multipart/alternative", "1.1.1 text/plain",
                "1.1.2 text/html", "1.2 image/png", "2 application/pdf",
            ])
        let html = tree.parts[4]
        #expect(Array(html.body) == utf8("<p>html</p>"))  // the CRLF before the delimiter is not content
        #expect(html.depth == 3)
        #expect(tree.parts[6].isAttachment)
        #expect(tree.parts[6].contentDisposition?.filename == "ticket.pdf")
        #expect(tree.parts[5].decodedBody().bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(tree.partCount == 7)
    }

    @Test func delimiterLinesMayHaveTrailingWhitespaceAndBareLF() throws {
        let message = try RawMessage(
            "Content-Type: multipart/alternative; boundary=b\n\n"
                + "--b \t\nContent-Type: text/plain\n\none\n--b\t\n\ntwo\n--b-- \n"
        )
        let tree = message.mimeTree()
        #expect(tree.root.children.map { Array($0.body) } == [utf8("one"), utf8("two")])
        #expect(tree.root.children[1].headerFields.isEmpty)
        #expect(tree.warnings.isEmpty)
    }

    @Test func boundaryThatIsAPrefixOfALongerLineDoesNotSplit() throws {
        let message = try RawMessage(
            "Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n--bx is content\r\n--b--\r\n")
        let tree = message.mimeTree()
        #expect(tree.root.children.count == 1)
        #expect(Array(tree.root.children[0].body) == utf8("--bx is content"))
    }

    @Test func missingCloseDelimiterIsTolerated() throws {
        let message = try RawMessage(
            "Content-Type: multipart/alternative; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\none\r\n"
                + "--b\r\nContent-Type: text/html\r\n\r\n<b>two</b>\r\n")
        let tree = message.mimeTree()
        #expect(tree.root.children.count == 2)
        #expect(Array(tree.root.children[1].body) == utf8("<b>two</b>\r\n"))
        #expect(tree.warnings.codes == [MIMEWarning.Code.missingCloseDelimiter])
        #expect(tree.warnings.first?.path == "")
    }

    @Test func boundaryThatNeverAppearsMakesOnePart() throws {
        let message = try RawMessage(
            "Content-Type: multipart/mixed; boundary=\"nowhere\"\r\n\r\nThis is a multi-part message.\r\n--other\r\n")
        let tree = message.mimeTree()
        #expect(tree.warnings.codes == [MIMEWarning.Code.boundaryNotFound])
        #expect(tree.root.children.count == 1)
        #expect(tree.root.children[0].path == "1")
        #expect(tree.root.children[0].contentType == .defaultText)
        #expect(Array(tree.root.children[0].body) == utf8("This is a multi-part message.\r\n--other\r\n"))
    }

    @Test func multipartWithoutBoundaryMakesOnePart() throws {
        let message = try RawMessage("Content-Type: multipart/mixed\r\n\r\nbody\r\n")
        let tree = message.mimeTree()
        #expect(tree.warnings.codes == [MIMEWarning.Code.missingBoundary])
        #expect(tree.root.children.count == 1)
    }

    @Test func unknownMultipartSubtypeIsSplitLikeMixed() throws {
        let message = try RawMessage(
            "Content-Type: multipart/x-weird; boundary=z\r\n\r\n--z\r\n\r\na\r\n--z\r\n\r\nb\r\n--z--\r\n")
        #expect(message.mimeTree().root.children.count == 2)
    }

    @Test func digestPartsDefaultToMessageRFC822() throws {
        let message = try RawMessage(
            "Content-Type: multipart/digest; boundary=d\r\n\r\n"
                + "--d\r\n\r\nFrom: x@example.com\r\nSubject: one\r\n\r\nfirst\r\n"
                + "--d\r\nContent-Type: text/plain\r\n\r\nnot a message\r\n--d--\r\n")
        let tree = message.mimeTree()
        let first = tree.root.children[0]
        #expect(first.contentType.mediaType == "message/rfc822")
        #expect(first.isAttachedMessage)
        #expect(first.children.first?.path == "1.1")
        #expect(first.children.first?.isInsideAttachedMessage == true)
        #expect(first.children.first.map { Array($0.body) } == utf8("first"))
        #expect(tree.root.children[1].contentType.mediaType == "text/plain")
    }

    @Test func attachedMessageIsParsedAndFlagged() throws {
        let message = try RawMessage(
            "Content-Type: multipart/mixed; boundary=m\r\n\r\n--m\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n"
                + "--m\r\nContent-Type: message/rfc822\r\n\r\n"
                + "From: other@example.org\r\nContent-Type: multipart/alternative; boundary=i\r\n\r\n"
                + "--i\r\nContent-Type: text/html\r\n\r\n<p>theirs</p>\r\n--i--\r\n"
                + "--m--\r\n")
        let parts = message.mimeTree().parts
        #expect(parts.map(\.path) == ["", "1", "2", "2", "2.1"])
        #expect(parts[2].isAttachedMessage && !parts[2].isInsideAttachedMessage)
        #expect(parts[3].isInsideAttachedMessage && parts[4].isInsideAttachedMessage)
        #expect(parts[3].fields(named: "from").first?.unfoldedValue == "other@example.org")
        #expect(!parts[1].isInsideAttachedMessage)
    }

    @Test func base64EncodedAttachedMessageIsDecodedFirst() throws {
        // "Subject: inner\n\n<p>x</p>\n" in base64, bare LFs inside.
        let message = try RawMessage(
            "Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                + "U3ViamVjdDogaW5uZXIKCjxwPng8L3A+Cg==\r\n"
        )
        let inner = try #require(message.mimeTree().root.children.first)
        #expect(inner.path == "1.1")
        #expect(inner.fields(named: "subject").first?.unfoldedValue == "inner")
        #expect(Array(inner.body) == utf8("<p>x</p>\r\n"))
    }

    @Test func malformedContentTypeFallsBackToText() throws {
        let message = try RawMessage("Content-Type: html\r\n\r\n<p>x</p>")
        let tree = message.mimeTree()
        #expect(tree.root.contentType == .defaultText)
        #expect(tree.warnings.codes == [MIMEWarning.Code.malformedContentType])
    }

    @Test func encodedMultipartIsSplitAnyway() throws {
        let message = try RawMessage(
            "Content-Type: multipart/mixed; boundary=b\r\nContent-Transfer-Encoding: base64\r\n\r\n"
                + "--b\r\n\r\nx\r\n--b--\r\n"
        )
        let tree = message.mimeTree()
        #expect(tree.root.children.count == 1)
        #expect(tree.warnings.codes == [MIMEWarning.Code.encodedMultipart])
    }

    @Test func partWithoutHeaderSectionIsAllContent() throws {
        // No empty line after the delimiter: the first line is content, not a malformed header.
        let message = try RawMessage("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nhello world\r\n--b--\r\n")
        let part = try #require(message.mimeTree().root.children.first)
        #expect(part.headerFields.isEmpty)
        #expect(Array(part.body) == utf8("hello world"))
    }

    @Test func emptyPartsAndAdjacentDelimiters() throws {
        let message = try RawMessage("Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n--b\r\n\r\n\r\n--b--")
        let tree = message.mimeTree()
        #expect(tree.root.children.count == 2)
        #expect(tree.root.children.allSatisfy { $0.body.isEmpty })
        #expect(tree.warnings.isEmpty)
    }

    @Test func unknownTransferEncodingIsRawWithWarning() throws {
        let message = try RawMessage("Content-Type: text/html\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\n<p>x</p>")
        let decoded = message.mimeTree().root.decodedBody()
        #expect(Array(decoded.bytes) == utf8("<p>x</p>"))
        #expect(decoded.warnings.codes == [MIMEWarning.Code.unknownTransferEncoding])
        #expect(decoded.warnings.first?.path == "1")
    }
}
