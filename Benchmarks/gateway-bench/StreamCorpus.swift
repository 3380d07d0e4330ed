import Foundation

/// The mixed mail stream a gateway behind an MX sees (`gateway-bench stream`): 95% of the messages carry no markup —
/// newsletters, receipts, notifications, personal mail — from 2 KB to 10 MB, a tenth of them with attachments (PDFs,
/// photos, archives); 5% are signed booking confirmations with JSON-LD (the ingest suite's).
///
/// Sizes: a message without attachments is log-uniform between 2 and 150 KB; one with attachments has a body of 5
/// to 50 KB and one to three attachments, the whole message log-uniform between 10 KB past its body and 10 MB (the
/// attachments base64-encoded). Messages without
/// markup come from a pool of distinct ones, reused (the prefilter keeps no state between messages, so repeating
/// one costs what a new one costs); markup messages are each unique (a new reservation each time).
enum StreamCorpus {
    /// One message without markup and what it is.
    struct Message {
        var bytes: [UInt8]
        var hasAttachments: Bool
    }

    static let markupShare = 0.05
    static let attachmentShare = 0.10

    /// `count` messages without markup, deterministic for a seed.
    static func messagesWithoutMarkup(count: Int, seed: UInt64) -> [Message] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { index in
            let withAttachments = Double(generator.next() % 10_000) / 10_000 < attachmentShare
            if withAttachments {
                // The whole message between 10 KB and 10 MB; the attachments are what the body leaves, base64 (4/3).
                let body = logUniform(5_000, 50_000, &generator)
                let total = logUniform(body + 10_000, 10_000_000, &generator)
                let attachments = (total - body) * 3 / 4
                return Message(
                    bytes: message(index: index, bodyBytes: body, attachmentBytes: attachments, using: &generator),
                    hasAttachments: true)
            }
            return Message(
                bytes: message(index: index, bodyBytes: logUniform(2_000, 150_000, &generator), attachmentBytes: 0,
                               using: &generator),
                hasAttachments: false)
        }
    }

    static func logUniform<G: RandomNumberGenerator>(_ low: Int, _ high: Int, _ generator: inout G) -> Int {
        let fraction = Double(generator.next() % 1_000_000) / 1_000_000
        return Int(exp(log(Double(low)) + fraction * (log(Double(high)) - log(Double(low)))))
    }

    private static let words = [
        "the", "new", "season", "sale", "your", "order", "has", "shipped", "team", "meeting", "notes", "update",
        "weekly", "digest", "price", "offer", "members", "only", "read", "more", "about", "our", "latest", "stories",
        "thanks", "for", "subscribing", "invoice", "attached", "payment", "received", "photos", "from", "trip",
    ]

    /// One message of `bodyBytes` (about) and attachments of `attachmentBytes` in all (none when 0), of a kind chosen
    /// by `index`: an HTML newsletter in quoted-printable, a base64 HTML receipt, a notification in plain text, or
    /// a personal message with an HTML alternative.
    static func message<G: RandomNumberGenerator>(
        index: Int, bodyBytes: Int, attachmentBytes: Int, using generator: inout G
    ) -> [UInt8] {
        let kind = index % 4
        var out: [UInt8] = []
        out.reserveCapacity(bodyBytes + attachmentBytes * 4 / 3 + 4096)
        func add(_ text: String) { out.append(contentsOf: text.utf8) }
        let sender = ["news@shop.example", "receipts@store.example", "notify@service.example", "tom@friends.example"][kind]
        add("Return-Path: <bounce-\(index)@\(sender.split(separator: "@")[1])>\r\n")
        add("DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=\(sender.split(separator: "@")[1]); s=s1;\r\n")
        add("\th=from:to:subject:date:message-id; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;\r\n")
        add("\tb=dGhpcyBpcyBub3QgYSByZWFsIHNpZ25hdHVyZSwgb25seSBpdHMgc2hhcGU=\r\n")
        add("From: <\(sender)>\r\nTo: Eva Green <eva@guest.example.net>\r\nSubject: Message \(index)\r\n")
        add("Date: Mon, 02 Nov 2026 09:14:03 +0100\r\nMessage-ID: <s\(index).stream@\(sender.split(separator: "@")[1])>\r\n")
        add("MIME-Version: 1.0\r\n")
        let mixed = "=_mixed_\(index)"
        let alternative = "=_alt_\(index)"
        if attachmentBytes > 0 {
            add("Content-Type: multipart/mixed; boundary=\"\(mixed)\"\r\n\r\nThis is a multi-part message in MIME format.\r\n")
            add("--\(mixed)\r\n")
        }
        add("Content-Type: multipart/alternative; boundary=\"\(alternative)\"\r\n\r\n")
        add("--\(alternative)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
        let textShare = kind == 2 ? bodyBytes : bodyBytes / 4
        appendText(&out, bytes: textShare, using: &generator)
        if kind != 2 {
            add("\r\n--\(alternative)\r\nContent-Type: text/html; charset=utf-8\r\n")
            let html = htmlBody(bytes: bodyBytes - textShare, using: &generator)
            if kind == 1 {
                add("Content-Transfer-Encoding: base64\r\n\r\n")
                appendBase64(&out, html)
            } else {
                add("Content-Transfer-Encoding: quoted-printable\r\n\r\n")
                appendQuotedPrintable(&out, html)
            }
        }
        add("\r\n--\(alternative)--\r\n")
        if attachmentBytes > 0 {
            let count = 1 + Int(generator.next() % 3)
            let types = [("application/pdf", "pdf"), ("image/jpeg", "jpg"), ("application/zip", "zip")]
            for number in 0..<count {
                let (type, suffix) = types[(index + number) % types.count]
                add("--\(mixed)\r\nContent-Type: \(type); name=\"file\(number).\(suffix)\"\r\n")
                add("Content-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=\"file\(number).\(suffix)\"\r\n\r\n")
                var data = [UInt8](repeating: 0, count: attachmentBytes / count)
                for offset in stride(from: 0, to: data.count, by: 8) {
                    let value = generator.next()
                    for byte in 0..<min(8, data.count - offset) { data[offset + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte)) }
                }
                appendBase64(&out, data)
                add("\r\n")
            }
            add("--\(mixed)--\r\n")
        }
        return out
    }

    /// Plain text of about `bytes`, quoted-printable (all ASCII here: words and line breaks).
    private static func appendText<G: RandomNumberGenerator>(_ out: inout [UInt8], bytes: Int, using generator: inout G) {
        var written = 0
        var column = 0
        while written < bytes {
            let word = words[Int(generator.next() % UInt64(words.count))]
            if column + word.utf8.count > 72 {
                out += [13, 10]
                written += 2
                column = 0
            }
            out.append(contentsOf: word.utf8)
            out.append(32)
            written += word.utf8.count + 1
            column += word.utf8.count + 1
        }
    }

    /// A newsletter's HTML of about `bytes`: styles, a table of items with images and tracking links.
    private static func htmlBody<G: RandomNumberGenerator>(bytes: Int, using generator: inout G) -> [UInt8] {
        var html = Array(
            ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0;padding:0} .btn{background:#1a73e8;"
                + "color:#ffffff;border-radius:4px} @media (max-width:600px){.col{width:100%!important}}</style></head>"
                + "<body><div style=\"display:none\">This week’s picks</div><table width=\"100%\" cellpadding=\"0\">\n").utf8)
        var item = 0
        while html.count < bytes {
            html.append(contentsOf: "<tr><td class=\"col\" style=\"padding:8px 12px;font-family:Arial\"><img src=\"https://cdn.shop.example/i/\(item).jpg\" width=\"280\" alt=\"\">".utf8)
            for _ in 0..<(12 + Int(generator.next() % 12)) {
                html.append(contentsOf: words[Int(generator.next() % UInt64(words.count))].utf8)
                html.append(32)
            }
            html.append(contentsOf: "<a class=\"btn\" href=\"https://click.shop.example/ls/click?upn=\(generator.next() % 1_000_000)\">Shop now</a></td></tr>\n".utf8)
            item += 1
        }
        html.append(contentsOf: "</table><p><a href=\"https://shop.example/unsubscribe\">Unsubscribe</a></p></body></html>\n".utf8)
        return html
    }

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Base64 in lines of 76 characters, CRLF.
    static func appendBase64(_ out: inout [UInt8], _ data: [UInt8]) {
        var index = 0
        var column = 0
        while index < data.count {
            let a = UInt32(data[index])
            let b = index + 1 < data.count ? UInt32(data[index + 1]) : 0
            let c = index + 2 < data.count ? UInt32(data[index + 2]) : 0
            let value = a << 16 | b << 8 | c
            out.append(base64Alphabet[Int(value >> 18 & 63)])
            out.append(base64Alphabet[Int(value >> 12 & 63)])
            out.append(index + 1 < data.count ? base64Alphabet[Int(value >> 6 & 63)] : 61)
            out.append(index + 2 < data.count ? base64Alphabet[Int(value & 63)] : 61)
            index += 3
            column += 4
            if column == 76 {
                out += [13, 10]
                column = 0
            }
        }
        if column > 0 { out += [13, 10] }
    }

    /// Quoted-printable at 76 columns with soft breaks; "=" and bytes outside printable ASCII escaped.
    static func appendQuotedPrintable(_ out: inout [UInt8], _ data: [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        var column = 0
        for byte in data {
            if byte == 10 {
                out += [13, 10]
                column = 0
                continue
            }
            let escaped = byte == 61 || byte < 32 || byte > 126
            let width = escaped ? 3 : 1
            if column + width > 75 {
                out += [61, 13, 10]
                column = 0
            }
            if escaped {
                out += [61, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            } else {
                out.append(byte)
            }
            column += width
        }
    }
}
