import Foundation
import Glibc

/// Messages built around one part, in the encodings and structures the MIME tests use, for the prefilter's
/// differential test.
enum MIMEVariant {
    /// A charset a document is encoded in, and the label the part declares (nil: no charset parameter).
    struct Charset: Sendable {
        var label: String?
        var iconvName: String
        var name: String { label ?? "no-charset" }

        /// Whether line ends stay CR and LF bytes (they can be quoted-printable hard breaks, and 8bit is allowed).
        var isASCIICompatible: Bool { !iconvName.hasPrefix("UTF-16") }

        /// `text` in this charset, or nil when it cannot be written in it.
        func encode(_ text: String) -> [UInt8]? {
            if iconvName == "UTF-8" { return Array(text.utf8) }
            guard let descriptor = iconv_open(iconvName, "UTF-8") as iconv_t?, descriptor != iconv_t(bitPattern: -1) else {
                return nil
            }
            defer { iconv_close(descriptor) }
            var input = Array(text.utf8)
            var output = [UInt8](repeating: 0, count: input.count * 4 + 64)
            let outputCount = output.count
            let converted = input.withUnsafeMutableBufferPointer { source in
                output.withUnsafeMutableBufferPointer { target -> Int? in
                    var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(source.baseAddress)?
                        .assumingMemoryBound(to: CChar.self)
                    var inLeft = source.count
                    var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(target.baseAddress)?
                        .assumingMemoryBound(to: CChar.self)
                    var outLeft = outputCount
                    guard iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft) != -1,
                        iconv(descriptor, nil, nil, &outPointer, &outLeft) != -1
                    else { return nil }
                    return outputCount - outLeft
                }
            }
            guard let converted else { return nil }
            return Array(output[..<converted])
        }
    }

    static let charsets: [Charset] = [
        Charset(label: "utf-8", iconvName: "UTF-8"),
        Charset(label: nil, iconvName: "UTF-8"),
        Charset(label: "windows-1252", iconvName: "WINDOWS-1252"),
        Charset(label: "iso-8859-1", iconvName: "ISO-8859-1"),
        Charset(label: "koi8-r", iconvName: "KOI8-R"),
        Charset(label: "shift_jis", iconvName: "CP932"),
        Charset(label: "iso-2022-jp", iconvName: "ISO-2022-JP"),
        Charset(label: "utf-16", iconvName: "UTF-16"),  // glibc writes a byte order mark
        Charset(label: "utf-16le", iconvName: "UTF-16LE"),
        Charset(label: "utf-7", iconvName: "UTF-7"),
    ]

    /// A Content-Transfer-Encoding and how to apply it.
    enum Transfer: String, CaseIterable, CustomStringConvertible {
        case eightBit = "8bit"
        case quotedPrintable = "quoted-printable"
        case base64
        /// base64 wrapped at 22 columns: quanta cut across lines.
        case narrowBase64 = "base64 (22 columns)"

        var description: String { rawValue }
        var header: String { self == .narrowBase64 ? "base64" : rawValue }

        /// - Parameter text: line ends are line breaks (quoted-printable keeps them as such); false escapes them.
        func encode(_ bytes: [UInt8], text: Bool = true) -> [UInt8] {
            switch self {
            case .eightBit: return bytes
            case .base64: return wrapped(Array(Data(bytes).base64EncodedString().utf8), width: 76)
            case .narrowBase64: return wrapped(Array(Data(bytes).base64EncodedString().utf8), width: 22)
            case .quotedPrintable: return MIMEVariant.quotedPrintable(bytes, text: text)
            }
        }

        private func wrapped(_ text: [UInt8], width: Int) -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(text.count + text.count / width * 2 + 2)
            var index = 0
            while index < text.count {
                output += text[index..<min(text.count, index + width)]
                output += [13, 10]
                index += width
            }
            return output
        }
    }

    /// Quoted-printable (RFC 2045 §6.7) at 76 columns; CRLF and LF are hard line breaks, every other byte outside
    /// printable ASCII is escaped, so soft breaks fall anywhere, inside tags and words.
    static func quotedPrintable(_ bytes: [UInt8], text: Bool = true) -> [UInt8] {
        var output: [UInt8] = []
        var column = 0
        let hex = Array("0123456789ABCDEF".utf8)
        func emit(_ piece: [UInt8]) {
            if column + piece.count > 75 {
                output += Array("=\r\n".utf8)
                column = 0
            }
            output += piece
            column += piece.count
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if text, byte == 13, index + 1 < bytes.count, bytes[index + 1] == 10 {
                output += [13, 10]
                column = 0
                index += 2
                continue
            }
            if text, byte == 10 {
                output += [13, 10]
                column = 0
                index += 1
                continue
            }
            let atLineEnd = index + 1 == bytes.count || bytes[index + 1] == 13 || bytes[index + 1] == 10
            if (byte >= 33 && byte <= 126 && byte != 61) || (byte == 32 && !atLineEnd) {
                emit([byte])
            } else {
                emit([61, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            }
            index += 1
        }
        return output
    }

    /// How the part sits in the message.
    enum Structure: String, CaseIterable, CustomStringConvertible {
        /// The message is the part.
        case single
        /// multipart/alternative: a text/plain part, then this one.
        case alternative
        /// multipart/mixed { related { alternative { text/plain, this }, an inline image }, a PDF attachment }.
        case mixed

        var description: String { rawValue }

        func message(
            type: String, charset: String?, transfer: Transfer, body: [UInt8], disposition: String? = nil
        ) -> [UInt8] {
            var part = "Content-Type: \(type)" + (charset.map { "; charset=\"\($0)\"" } ?? "") + "\r\n"
                + "Content-Transfer-Encoding: \(transfer.header)\r\n"
            if let disposition { part += "Content-Disposition: \(disposition)\r\n" }
            let head = "From: Bookings <bookings@example.com>\r\nTo: eva@guest.example.net\r\n"
                + "Subject: Your booking\r\nMessage-ID: <variant@example.com>\r\nMIME-Version: 1.0\r\n"
            let text = "Content-Type: text/plain; charset=utf-8\r\n\r\nYour booking is confirmed.\r\n"
            switch self {
            case .single:
                return Array((head + part + "\r\n").utf8) + body
            case .alternative:
                return Array(
                    (head + "Content-Type: multipart/alternative; boundary=\"alt-1\"\r\n\r\n--alt-1\r\n" + text
                        + "--alt-1\r\n" + part + "\r\n").utf8) + body + Array("\r\n--alt-1--\r\n".utf8)
            case .mixed:
                let image = "Content-Type: image/png\r\nContent-Transfer-Encoding: base64\r\nContent-ID: <logo>\r\n\r\n"
                    + Data(repeating: 0x89, count: 3000).base64EncodedString(options: .lineLength76Characters) + "\r\n"
                let pdf = "Content-Type: application/pdf; name=\"ticket.pdf\"\r\nContent-Transfer-Encoding: base64\r\n"
                    + "Content-Disposition: attachment; filename=\"ticket.pdf\"\r\n\r\n"
                    + Data(repeating: 0x25, count: 9000).base64EncodedString(options: .lineLength76Characters) + "\r\n"
                let start =
                    head + "Content-Type: multipart/mixed; boundary=\"=_mix\"\r\n\r\nThis is a MIME message.\r\n"
                    + "--=_mix\r\nContent-Type: multipart/related; type=\"multipart/alternative\"; boundary=\"=_rel\"\r\n\r\n"
                    + "--=_rel\r\nContent-Type: multipart/alternative; boundary=\"=_alt\"\r\n\r\n--=_alt\r\n" + text
                    + "--=_alt\r\n" + part + "\r\n"
                let end = "\r\n--=_alt--\r\n--=_rel\r\n" + image + "--=_rel--\r\n--=_mix\r\n" + pdf + "--=_mix--\r\n"
                return Array(start.utf8) + body + Array(end.utf8)
            }
        }
    }

    /// The text of each `<script type="application/ld+json">` element of `html` (a plain search: enough for the
    /// fixtures, whose blocks are written that way).
    static func jsonLDBlocks(in html: String) -> [String] {
        var blocks: [String] = []
        let lowered = html.lowercased()
        var searchFrom = lowered.startIndex
        while let open = lowered.range(of: "<script", range: searchFrom..<lowered.endIndex),
            let tagEnd = lowered.range(of: ">", range: open.upperBound..<lowered.endIndex),
            let close = lowered.range(of: "</script", range: tagEnd.upperBound..<lowered.endIndex)
        {
            if lowered[open.upperBound..<tagEnd.lowerBound].contains("ld+json"), lowered.count == html.count {
                let start = html.index(html.startIndex, offsetBy: lowered.distance(from: lowered.startIndex, to: tagEnd.upperBound))
                let end = html.index(html.startIndex, offsetBy: lowered.distance(from: lowered.startIndex, to: close.lowerBound))
                blocks.append(String(html[start..<end]))
            }
            searchFrom = close.upperBound
        }
        return blocks
    }

    /// `inner` forwarded as an attached message/rfc822 part.
    static func forwarded(_ inner: [UInt8]) -> [UInt8] {
        Array(
            ("From: eva@guest.example.net\r\nTo: tom@guest.example.net\r\nSubject: Fwd: Your booking\r\nMIME-Version: 1.0\r\n"
                + "Content-Type: multipart/mixed; boundary=\"fwd\"\r\n\r\n--fwd\r\nContent-Type: text/plain\r\n\r\n"
                + "See below.\r\n--fwd\r\nContent-Type: message/rfc822\r\n\r\n").utf8) + inner
            + Array("\r\n--fwd--\r\n".utf8)
    }
}

/// Realistic mail without schema.org markup: what most of a gateway's stream is.
struct NonMarkupMail: Sendable, CustomStringConvertible {
    var name: String
    var bytes: [UInt8]
    var description: String { name }

    static let all: [NonMarkupMail] = [
        NonMarkupMail(
            name: "newsletter (quoted-printable HTML, styles, tracking links)",
            bytes: MIMEVariant.Structure.alternative.message(
                type: "text/html", charset: "utf-8", transfer: .quotedPrintable,
                body: MIMEVariant.quotedPrintable(Array(newsletterHTML.utf8)))),
        NonMarkupMail(
            name: "SEO newsletter that talks about schema.org and itemtype",
            bytes: MIMEVariant.Structure.single.message(
                type: "text/html", charset: "utf-8", transfer: .eightBit,
                body: Array(("<html><body><h1>Rich results</h1><p>Mark up your pages with schema.org types: give the "
                    + "itemtype attribute a type such as https://schema.org/Event, or add JSON-LD.</p>"
                    + "<pre>&lt;script type=\"application/ld+json\"&gt;</pre></body></html>").utf8))),
        NonMarkupMail(
            name: "receipt (base64 HTML table)",
            bytes: MIMEVariant.Structure.alternative.message(
                type: "text/html", charset: "utf-8", transfer: .base64,
                body: MIMEVariant.Transfer.base64.encode(Array(receiptHTML.utf8)))),
        NonMarkupMail(
            name: "personal mail (text/plain, quoted-printable)",
            bytes: Array(
                ("From: Tom <tom@guest.example.net>\r\nTo: eva@guest.example.net\r\nSubject: Dinner on Friday?\r\n"
                    + "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
                    + "Content-Transfer-Encoding: quoted-printable\r\n\r\nHi Eva,\r\n\r\nCaf=C3=A9 Bleu at 7? I booked a "
                    + "table for four.\r\n\r\n-- \r\nTom\r\n").utf8)),
        NonMarkupMail(
            name: "reply with HTML and a quoted thread",
            bytes: MIMEVariant.Structure.alternative.message(
                type: "text/html", charset: "utf-8", transfer: .quotedPrintable,
                body: MIMEVariant.quotedPrintable(
                    Array(("<div dir=\"ltr\">Sounds good!</div><br><div class=\"gmail_quote\"><div dir=\"ltr\" "
                        + "class=\"gmail_attr\">On Fri, Tom wrote:<br></div><blockquote class=\"gmail_quote\" "
                        + "style=\"margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204)\">Dinner at 7?"
                        + "</blockquote></div>").utf8)))),
        NonMarkupMail(
            name: "3 MB PDF attachment",
            bytes: MIMEVariant.Structure.mixed.message(
                type: "text/html", charset: "utf-8", transfer: .eightBit, body: Array("<p>Your invoice is attached.</p>".utf8))
                .replacingLastPart(with: pdfAttachment(bytes: 3_000_000))),
        NonMarkupMail(
            name: "photos (two JPEG attachments)",
            bytes: photos()),
        NonMarkupMail(
            name: "calendar invitation (text/calendar)",
            bytes: Array(
                ("From: Tom <tom@guest.example.net>\r\nTo: eva@guest.example.net\r\nSubject: Invitation: Dinner\r\n"
                    + "MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"inv\"\r\n\r\n--inv\r\n"
                    + "Content-Type: text/plain; charset=utf-8\r\n\r\nDinner, Friday 19:00\r\n--inv\r\n"
                    + "Content-Type: text/html; charset=utf-8\r\n\r\n<p>Dinner, <b>Friday 19:00</b></p>\r\n--inv\r\n"
                    + "Content-Type: text/calendar; method=REQUEST; charset=utf-8\r\n\r\nBEGIN:VCALENDAR\r\n"
                    + "METHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:dinner-1\r\nDTSTART:20261127T180000Z\r\nSUMMARY:Dinner\r\n"
                    + "END:VEVENT\r\nEND:VCALENDAR\r\n--inv--\r\n").utf8)),
        NonMarkupMail(
            name: "Windows-1252 newsletter, 8bit",
            bytes: MIMEVariant.Structure.single.message(
                type: "text/html", charset: "windows-1252", transfer: .eightBit,
                body: MIMEVariant.Charset(label: "windows-1252", iconvName: "WINDOWS-1252").encode(
                    "<html><body><p>“Winter sale” – up to 50 % off, €9.99 only</p></body></html>")!)),
        NonMarkupMail(
            name: "ISO-2022-JP personal mail",
            bytes: MIMEVariant.Structure.alternative.message(
                type: "text/html", charset: "iso-2022-jp", transfer: .eightBit,
                body: MIMEVariant.Charset(label: "iso-2022-jp", iconvName: "ISO-2022-JP").encode(
                    "<p>こんにちは、金曜日の夕食はどうですか。</p>")!)),
        NonMarkupMail(
            name: "bounce of a booking confirmation (multipart/report, the original attached)",
            bytes: bounce()),
        NonMarkupMail(
            name: "booking confirmation forwarded as an attachment",
            bytes: MIMEVariant.forwarded(bookingWithMarkup)),
        NonMarkupMail(
            name: "e-ticket with markup sent as an HTML attachment",
            bytes: MIMEVariant.Structure.mixed.message(
                type: "text/html", charset: "utf-8", transfer: .base64,
                body: MIMEVariant.Transfer.base64.encode(Array(bookingHTML.utf8)),
                disposition: "attachment; filename=\"ticket.html\"")),
    ]

    static let bookingHTML =
        #"<html><body><script type="application/ld+json">{"@context":"https://schema.org","@type":"FlightReservation","#
        + #""reservationId":"RXJ34P","reservationStatus":"https://schema.org/ReservationConfirmed"}</script></body></html>"#

    static var bookingWithMarkup: [UInt8] {
        MIMEVariant.Structure.single.message(
            type: "text/html", charset: "utf-8", transfer: .eightBit, body: Array(bookingHTML.utf8))
    }

    static let newsletterHTML: String = {
        var html = """
            <!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0} .btn{background:#1a73e8;color:#fff}
            @media (max-width:600px){.col{width:100%!important}}</style><!--[if mso]><xml><o:OfficeDocumentSettings>
            </o:OfficeDocumentSettings></xml><![endif]--></head><body><div style="display:none">This week: 12 new items</div>
            <a href="https://news.example.com/view?id=123&amp;utm_source=newsletter">View in browser</a><table width="100%">
            """
        for item in 0..<60 {
            html += "<tr><td class=\"col\"><img src=\"https://cdn.example.com/i/\(item).jpg\" alt=\"Item \(item)\" width=\"280\">"
                + "<h2>New items in our shop, number \(item)</h2><p>Scope out this week’s picks — items you’ll love.</p>"
                + "<a class=\"btn\" href=\"https://click.example.com/ls/click?upn=\(item)abcdef\">Shop now</a></td></tr>\n"
        }
        return html + "</table><p><a href=\"https://news.example.com/unsubscribe\">Unsubscribe</a></p></body></html>"
    }()

    static let receiptHTML: String = {
        var html = "<html><body><h1>Thank you for your order #40213</h1><table>"
        for line in 0..<40 { html += "<tr><td>Item \(line)</td><td>1</td><td>€\(line).99</td></tr>" }
        return html + "<tr><td colspan=2>Total</td><td>€819.60</td></tr></table></body></html>"
    }()

    static func pdfAttachment(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return "Content-Type: application/pdf; name=\"invoice.pdf\"\r\nContent-Transfer-Encoding: base64\r\n"
            + "Content-Disposition: attachment; filename=\"invoice.pdf\"\r\n\r\n"
            + data.base64EncodedString(options: .lineLength76Characters) + "\r\n"
    }

    static func photos() -> [UInt8] {
        var message = "From: Tom <tom@guest.example.net>\r\nTo: eva@guest.example.net\r\nSubject: Photos from Oslo\r\n"
            + "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"ph\"\r\n\r\n--ph\r\n"
            + "Content-Type: text/html; charset=utf-8\r\n\r\n<p>Here they are!</p>\r\n"
        for index in 1...2 {
            message += "--ph\r\nContent-Type: image/jpeg; name=\"IMG_\(index).jpg\"\r\nContent-Transfer-Encoding: base64\r\n"
                + "Content-Disposition: attachment; filename=\"IMG_\(index).jpg\"\r\n\r\n"
                + Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
                .base64EncodedString(options: .lineLength76Characters) + "\r\n"
        }
        return Array((message + "--ph--\r\n").utf8)
    }

    static func bounce() -> [UInt8] {
        Array(
            ("From: MAILER-DAEMON@mx.example.net\r\nTo: bookings@example.com\r\nSubject: Undelivered Mail Returned to Sender\r\n"
                + "MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=\"rep\"\r\n\r\n"
                + "--rep\r\nContent-Type: text/plain\r\n\r\nI'm sorry to have to inform you that your message could not be "
                + "delivered.\r\n--rep\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n\r\n"
                + "Final-Recipient: rfc822; nobody@guest.example.net\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--rep\r\n"
                + "Content-Type: message/rfc822\r\n\r\n").utf8) + bookingWithMarkup + Array("\r\n--rep--\r\n".utf8)
    }
}

extension Array where Element == UInt8 {
    /// The message with its last body part (the PDF of `Structure.mixed`) replaced by `part` (header and body).
    func replacingLastPart(with part: String) -> [UInt8] {
        let text = String(decoding: self, as: UTF8.self)
        guard let last = text.range(of: "--=_mix\r\n", options: .backwards) else { return self }
        return Array((text[..<last.upperBound] + part + "--=_mix--\r\n").utf8)
    }
}
