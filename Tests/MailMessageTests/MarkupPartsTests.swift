import Foundation
import Testing

@testable import MailMessage

/// Messages written the way real senders write them: header order, folding, boundaries and
/// encodings as found in airline, hotel and restaurant confirmations.
@Suite struct MarkupPartsTests {
    /// multipart/alternative with quoted-printable HTML whose soft line breaks fall inside tags,
    /// attribute values and the JSON-LD itself (Java Mail's `----=_Part_` boundaries).
    static let quotedPrintableAlternative =
        "Return-Path: <bounce-123@mail.example-air.com>\r\n"
        + "DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example-air.com; s=s1;\r\n"
        + "\th=from:to:subject:date; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=; b=abc\r\n"
        + "From: \"Example Air\" <noreply@example-air.com>\r\n"
        + "To: Eva Green <eva@example.net>\r\n"
        + "Subject: =?UTF-8?Q?Your_flight_to_New_York_=E2=9C=88?=\r\n"
        + "Date: Thu, 4 Mar 2027 10:00:00 +0000\r\n"
        + "MIME-Version: 1.0\r\n"
        + "Content-Type: multipart/alternative; \r\n"
        + "\tboundary=\"----=_Part_1234_567890.1700000000000\"\r\n"
        + "\r\n"
        + "------=_Part_1234_567890.1700000000000\r\n"
        + "Content-Type: text/plain; charset=UTF-8\r\n"
        + "Content-Transfer-Encoding: quoted-printable\r\n"
        + "\r\n"
        + "Your booking RXJ34P is confirmed. Caf=C3=A9 on board.\r\n"
        + "------=_Part_1234_567890.1700000000000\r\n"
        + "Content-Type: text/html; charset=UTF-8\r\n"
        + "Content-Transfer-Encoding: quoted-printable\r\n"
        + "\r\n"
        + "<html><head><script type=3D\"application/ld+json\">{\"@context\": \"http://schem=\r\n"
        + "a.org\", \"@type\": \"FlightReservation\", \"reservationNumber\": \"RXJ34P\", \"underN=\r\n"
        + "ame\": {\"@type\": \"Person\", \"name\": \"Eva Green\"}}</script></he=\r\n"
        + "ad><body><a href=3D\"https://example-air.com/manage?pnr=3DRXJ34P&amp;last=3D=\r\n"
        + "Green\" style=3D\"color:#1a73e8\">Manage</a><p>Caf=C3=A9 =E2=82=AC5</p></bo=\r\n"
        + "dy></html>\r\n"
        + "------=_Part_1234_567890.1700000000000--\r\n"

    @Test func quotedPrintableHTMLInAlternative() throws {
        let message = try RawMessage(Self.quotedPrintableAlternative)
        let markup = message.markupParts()
        #expect(markup.warnings.isEmpty)
        let part = try #require(markup.parts.first)
        #expect(markup.parts.count == 1)
        #expect(part.kind == .html)
        #expect(part.path == "2")
        #expect(part.charset == "UTF-8")
        #expect(
            part.text
                == "<html><head><script type=\"application/ld+json\">{\"@context\": \"http://schema.org\", "
                + "\"@type\": \"FlightReservation\", \"reservationNumber\": \"RXJ34P\", \"underName\": "
                + "{\"@type\": \"Person\", \"name\": \"Eva Green\"}}</script></head><body>"
                + "<a href=\"https://example-air.com/manage?pnr=RXJ34P&amp;last=Green\" style=\"color:#1a73e8\">"
                + "Manage</a><p>Café €5</p></body></html>")
        #expect(message.fields(named: "subject").first?.decodedValue == "Your flight to New York ✈")
        #expect(message.from.first?.domain == "example-air.com")
    }

    @Test func base64HTML() throws {
        // "<p>Réservation confirmée</p>" in UTF-8, base64, wrapped at 20 columns.
        let message = try RawMessage(
            "From: reservations@example-hotel.com\r\n"
                + "Subject: Booking\r\n"
                + "MIME-Version: 1.0\r\n"
                + "Content-Type: text/html; charset=\"utf-8\"\r\n"
                + "Content-Transfer-Encoding: base64\r\n"
                + "\r\n"
                + "PHA+UsOpc2VydmF0aW9u\r\n"
                + "IGNvbmZpcm3DqWU8L3A+\r\n")
        let markup = message.markupParts()
        #expect(markup.parts.map(\.text) == ["<p>Réservation confirmée</p>"])
        #expect(markup.parts.map(\.path) == ["1"])
        #expect(markup.warnings.isEmpty)
    }

    @Test func iso88591QuotedPrintableBody() throws {
        let message = try RawMessage(
            "From: info@example-restaurant.fr\r\n"
                + "Content-Type: text/html; charset=ISO-8859-1\r\n"
                + "Content-Transfer-Encoding: quoted-printable\r\n"
                + "\r\n"
                + "<p>R=E9servation au caf=E9 confirm=E9e</p>\r\n")
        let part = try #require(message.markupParts().parts.first)
        #expect(part.text == "<p>Réservation au café confirmée</p>\r\n")
    }

    @Test func windows1252EightBitBody() throws {
        // Raw 8-bit bytes, as Outlook sends them: curly quotes 0x93/0x94, € 0x80, é 0xE9.
        let bytes = latin1(
            "From: booking@example.com\r\n"
                + "Content-Type: text/html; charset=\"windows-1252\"\r\n"
                + "Content-Transfer-Encoding: 8bit\r\n"
                + "\r\n"
                + "<p>\u{93}Caf\u{E9} Bleu\u{94} \u{96} total \u{80}42</p>\r\n")
        let markup = try RawMessage(bytes: bytes).markupParts()
        #expect(markup.parts.first?.text == "<p>“Café Bleu” – total €42</p>\r\n")
        #expect(markup.parts.first?.charset == "WINDOWS-1252")
        #expect(markup.warnings.isEmpty)
    }

    @Test func iso88591LabelWithWindows1252Bytes() throws {
        let bytes = latin1(
            "Content-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n\u{93}x\u{94} \u{80}"
        )
        #expect(try RawMessage(bytes: bytes).markupParts().parts.first?.text == "“x” €")
    }

    @Test func metaCharsetUTF16MeansUTF8() {
        let html = utf8("<html><head><meta charset=\"UTF-16LE\">")
        #expect(MIMEPart.sniffedHTMLCharset(html[...]) == "utf-8")
        #expect(MIMEPart.sniffedHTMLCharset(utf8("<meta charset=shift_jis>")[...]) == "shift_jis")
        #expect(MIMEPart.sniffedHTMLCharset(utf8("<p>charset=koi8-r</p>")[...]) == nil)
    }

    @Test func htmlWithoutCharsetUsesMetaCharset() throws {
        let bytes = latin1(
            "Content-Type: text/html\r\n\r\n<html><head><META http-equiv=\"Content-Type\" content=\"text/html; "
                + "charset=ISO-8859-15\"></head><body>\u{A4}</body></html>")
        let part = try #require(try RawMessage(bytes: bytes).markupParts().parts.first)
        #expect(part.text.hasSuffix("<body>€</body></html>"))
        #expect(part.charset == "ISO-8859-15")
    }

    @Test func jsonLDWithoutCharsetIsUTF8() throws {
        let message = try RawMessage("Content-Type: application/ld+json\r\n\r\n{\"name\": \"Café\"}")
        let markup = message.markupParts()
        #expect(markup.parts.map(\.text) == ["{\"name\": \"Café\"}"])
        #expect(markup.parts.map(\.kind) == [.jsonLD])
        #expect(markup.warnings.isEmpty)
    }

    @Test func htmlWithoutCharsetWithUTF8BytesIsUTF8WithWarning() throws {
        let message = try RawMessage("Content-Type: text/html\r\n\r\n<p>café</p>")
        let markup = message.markupParts()
        #expect(markup.parts.first?.text == "<p>café</p>")
        #expect(markup.warnings.codes == [MIMEWarning.Code.undeclared8Bit])
    }

    @Test func bogusCharsetIsUTF8WithWarning() throws {
        let message = try RawMessage(
            "Content-Type: text/html; charset=x-made-up-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                + "<p>caf=C3=A9 =FF</p>")
        let markup = message.markupParts()
        #expect(markup.parts.first?.text == "<p>café \u{FFFD}</p>")
        #expect(markup.warnings.codes == [MIMEWarning.Code.unknownCharset, MIMEWarning.Code.invalidBytes])
        #expect(markup.warnings.allSatisfy { $0.path == "1" })
    }

    @Test func nestedMixedRelatedAlternativeWithJSONLDPart() throws {
        let message = try RawMessage(
            "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=\"=_mixed\"\r\n\r\n"
                + "--=_mixed\r\nContent-Type: multipart/related; boundary=\"=_related\"\r\n\r\n"
                + "--=_related\r\nContent-Type: multipart/alternative; boundary=\"=_alt\"\r\n\r\n"
                + "--=_alt\r\nContent-Type: text/plain\r\n\r\nplain\r\n"
                + "--=_alt\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n"
                + "<p>first</p>\r\n--=_alt--\r\n"
                + "--=_related\r\nContent-Type: image/gif\r\nContent-Transfer-Encoding: base64\r\n\r\nR0lGODlh\r\n"
                + "--=_related--\r\n"
                + "--=_mixed\r\nContent-Type: application/ld+json; charset=utf-8\r\n"
                + "Content-Disposition: attachment; filename=\"booking.jsonld\"\r\n\r\n"
                + "{\"@type\": \"LodgingReservation\"}\r\n"
                + "--=_mixed--\r\n")
        let markup = message.markupParts()
        #expect(markup.parts.map(\.kind) == [.html, .jsonLD])
        #expect(markup.parts.map(\.path) == ["1.1.2", "2"])
        #expect(markup.parts.map(\.text) == ["<p>first</p>", "{\"@type\": \"LodgingReservation\"}"])
        #expect(markup.parts.map(\.isAttachment) == [false, true])
        #expect(markup.warnings.isEmpty)
    }

    @Test func htmlInsideAttachedMessageIsExcluded() throws {
        let message = try RawMessage(
            "From: Eva <eva@example.net>\r\nSubject: Fwd: your booking\r\n"
                + "Content-Type: multipart/mixed; boundary=\"fwd\"\r\n\r\n"
                + "--fwd\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>see below</p>\r\n"
                + "--fwd\r\nContent-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\n"
                + "From: noreply@example-air.com\r\nSubject: Your booking\r\n"
                + "Content-Type: multipart/alternative; boundary=\"inner\"\r\n\r\n"
                + "--inner\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
                + "<script type=\"application/ld+json\">{\"@type\":\"FlightReservation\"}</script>\r\n"
                + "--inner\r\nContent-Type: application/ld+json\r\n\r\n{}\r\n"
                + "--inner--\r\n"
                + "--fwd--\r\n")
        let markup = message.markupParts()
        #expect(markup.parts.map(\.text) == ["<p>see below</p>"])
        #expect(markup.parts.map(\.path) == ["1"])
    }

    @Test func attachedMessageAtTheTopIsExcludedToo() throws {
        let message = try RawMessage(
            "Content-Type: message/rfc822\r\n\r\nContent-Type: text/html\r\n\r\n<p>theirs</p>\r\n")
        #expect(message.markupParts().parts.isEmpty)
    }

    @Test func singlePartHTMLMessageCounts() throws {
        let message = try RawMessage("From: a@example.com\r\nContent-Type: TEXT/HTML\r\n\r\n<p>hi</p>\r\n")
        let markup = message.markupParts()
        #expect(markup.parts.map(\.path) == ["1"])
        #expect(markup.parts.map(\.kind) == [.html])
    }

    @Test func plainTextOnlyMessageHasNoMarkupParts() throws {
        #expect(try RawMessage("From: a@example.com\r\n\r\n<p>not html</p>").markupParts().parts.isEmpty)
    }

    @Test func missingClosingBoundaryStillYieldsTheHTML() throws {
        let message = try RawMessage(
            "Content-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n"
                + "--b1\r\nContent-Type: text/plain\r\n\r\ntext\r\n"
                + "--b1\r\nContent-Type: text/html; charset=utf-8\r\n"
                + "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
                + "<p>caf=C3=A9</p>\r\n")
        let markup = message.markupParts()
        #expect(markup.parts.map(\.text) == ["<p>café</p>\r\n"])
        #expect(markup.warnings.codes == [MIMEWarning.Code.missingCloseDelimiter])
    }

    @Test func rfc2231CharsetOnTheHTMLPart() throws {
        // RFC 2231 §4: the charset parameter itself written in extended form.
        let message = try RawMessage(
            "Content-Type: text/html; charset*=''iso-8859-15\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=A4")
        #expect(message.markupParts().parts.first?.text == "€")
    }

    @Test func warningsAreCodable() throws {
        let warning = MIMEWarning(code: MIMEWarning.Code.unknownCharset, path: "1.2", message: "m")
        let json = try JSONEncoder().encode(warning)
        #expect(try JSONDecoder().decode(MIMEWarning.self, from: json) == warning)
        #expect(String(decoding: json, as: UTF8.self).contains("\"code\":\"mime.unknown-charset\""))
        #expect(warning.description == "mime.unknown-charset at 1.2: m")
    }
}
