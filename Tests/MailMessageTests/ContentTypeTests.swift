import Testing

@testable import MailMessage

@Suite struct ContentTypeTests {
    @Test func typeAndSubtypeAreLowerCased() throws {
        let type = try #require(ContentType(parsing: "Text/HTML; Charset=\"UTF-8\""))
        #expect(type.type == "text")
        #expect(type.subtype == "html")
        #expect(type.mediaType == "text/html")
        #expect(type.charset == "UTF-8")
        #expect(type.parameters["CHARSET"] == "UTF-8")
    }

    /// Names are lower-cased as `String.lowercased()` does (byte by byte when ASCII); RFC 2231 names too.
    @Test func parameterNamesAreLowerCasedWhateverTheirScript() throws {
        let type = try #require(
            ContentType(parsing: "text/plain; NAME=a; Näme=b; ÄBC=c; TITLE*=utf-8''%E2%82%AC; Z@[=d"))
        #expect(type.parameters.values == ["name": "a", "näme": "b", "äbc": "c", "title": "€", "z@[": "d"])
        for text in ["", "AZaz@[`{09", "content-type", "Content-Type", "ÉTÉ", "İSTANBUL", "ΣΑΣ", "ǅ", "x-\u{1F600}-Y"] {
            #expect(text.fastLowercased == text.lowercased())
        }
    }

    @Test func quotedStringsCommentsAndWhitespace() throws {
        let type = try #require(
            ContentType(parsing: "multipart/alternative (a comment) ;\r\n\tboundary = \"--==_a\\\"b;c\" ; x=y (note)"))
        #expect(type.isMultipart)
        #expect(type.boundary == "--==_a\"b;c")
        #expect(type.parameters["x"] == "y")
    }

    @Test func unquotedValuesWithTSpecialsAsSendersWriteThem() throws {
        let type = try #require(
            ContentType(parsing: "multipart/mixed; boundary=----=_NextPart_000_0012_01D9A1B2.3C4D5E60"))
        #expect(type.boundary == "----=_NextPart_000_0012_01D9A1B2.3C4D5E60")
    }

    @Test func missingSemicolonBeforeParameters() throws {
        let type = try #require(ContentType(parsing: "text/html charset=iso-8859-1"))
        #expect(type.charset == "iso-8859-1")
    }

    @Test func unterminatedQuoteRunsToTheEnd() throws {
        let type = try #require(ContentType(parsing: "text/plain; name=\"report.txt"))
        #expect(type.parameters["name"] == "report.txt")
    }

    @Test func firstOfDuplicateParametersWins() throws {
        let type = try #require(ContentType(parsing: "text/plain; charset=utf-8; charset=latin1"))
        #expect(type.charset == "utf-8")
    }

    @Test(arguments: ["", "text", "text/", "/html", "; charset=utf-8", "(only a comment)"])
    func malformed(value: String) {
        #expect(ContentType(parsing: value) == nil)
    }

    @Test func rfc2231ExtendedValue() throws {
        // RFC 2231 §4.
        let type = try #require(
            ContentType(parsing: "application/x-stuff; title*=us-ascii'en-us'This%20is%20%2A%2A%2Afun%2A%2A%2A"))
        #expect(type.parameters["title"] == "This is ***fun***")
    }

    @Test func rfc2231Continuations() throws {
        // RFC 2231 §3, the sections given out of order.
        let type = try #require(
            ContentType(
                parsing: "message/external-body; access-type=URL;\r\n"
                    + " URL*1=\"cs.utk.edu/pub/moore/bulk-mailer/bulk-mailer.tar\";\r\n URL*0=\"ftp://\""
            ))
        #expect(type.parameters["url"] == "ftp://cs.utk.edu/pub/moore/bulk-mailer/bulk-mailer.tar")
        #expect(type.parameters["access-type"] == "URL")
    }

    @Test func rfc2231EncodedContinuationsWithCharset() throws {
        // RFC 2231 §4.1: encoded and plain sections mixed; the charset of section 0 covers all.
        let type = try #require(
            ContentType(
                parsing: "application/pdf; title*0*=iso-8859-1'fr'R%E9servation%20;\r\n"
                    + " title*1=\"n\";\r\n title*2*=%B0%2042.pdf"
            ))
        #expect(type.parameters["title"] == "Réservation n° 42.pdf")
    }

    @Test func rfc2231UTF8FilenameAndPlainFallback() throws {
        let disposition = try #require(
            ContentDisposition(
                parsing: Array("attachment; filename=\"fallback.pdf\"; filename*=UTF-8''%E2%82%AC%20invoice.pdf".utf8)[
                    ...]
            ))
        #expect(disposition.isAttachment)
        #expect(disposition.filename == "€ invoice.pdf")
    }

    @Test func rfc2231GapStopsTheContinuation() throws {
        let type = try #require(ContentType(parsing: "text/plain; name*0=a; name*2=c"))
        #expect(type.parameters["name"] == "a")
    }

    @Test func transferEncodingIsCaseInsensitiveAndTrimmed() {
        #expect(ContentTransferEncoding(parsing: utf8(" Quoted-Printable (qp)")[...]) == .quotedPrintable)
        #expect(ContentTransferEncoding(parsing: utf8("BASE64")[...]) == .base64)
        #expect(ContentTransferEncoding(parsing: utf8("8Bit")[...]).isIdentity)
        #expect(!ContentTransferEncoding(parsing: utf8("x-uuencode")[...]).isKnown)
    }
}
