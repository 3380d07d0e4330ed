import Foundation
import Glibc
import MailMessage
import Markup
import Sandbox
import Testing

/// The markup prefilter (`RawMessage.markupEvidence`) against the full extractor (`DocumentExtraction`, the handler
/// the sandboxed worker runs): for every markup case the project has, wrapped in every MIME encoding the MIME tests
/// use, the prefilter says "has markup" whenever extraction yields a node; and for realistic mail without markup it
/// says "none".
///
/// Markup cases: the conformance corpus (`shared/corpus/markup`), the Markup, extraction and DKIM test fixtures, the
/// examples, and the cases the prefilter's rule must not be fooled by (upper case, character references, no or an
/// object `@context`, a bare `itemtype`, odd quoting). Each HTML document (a page, or an email's decoded HTML and
/// JSON-LD parts) is sent as the text/html part of new messages: transfer encodings 8bit, quoted-printable and base64
/// (at 76 and at 22 columns), charsets UTF-8, Windows-1252, ISO-8859-1, KOI8-R, Shift_JIS, ISO-2022-JP, UTF-16 with
/// and without a byte order mark, none (the `<meta>` or US-ASCII default), as a single part, in multipart/alternative,
/// and deep in mixed/related/alternative beside an attachment; each JSON-LD block also as an application/ld+json part.
@Suite struct PrefilterDifferentialTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A markup source: a page (HTML) or a whole email, by name.
    struct Source: Sendable, CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        var isEmail: Bool
        var description: String { name }
    }

    static let sources: [Source] = {
        var sources: [Source] = []
        func add(_ path: URL, name: String) {
            guard let data = FileManager.default.contents(atPath: path.path) else { return }
            sources.append(Source(name: name, bytes: Array(data), isEmail: path.pathExtension == "eml"))
        }
        for name in CorpusComparisonCases.names {
            for file in ["input.html", "input.eml"] {
                add(CorpusComparisonCases.directory!.appendingPathComponent("\(name)/\(file)"), name: "corpus/\(name)")
            }
        }
        for folder in [
            "Tests/MarkupTests/Fixtures", "Tests/MarkupTests/Fixtures/fuzz", "Tests/GatewayIntegrationTests/Fixtures/extraction",
            "Tests/DKIMTests/Fixtures", "examples", "examples/unsigned",
        ] {
            let directory = root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() where name.hasSuffix(".html") || name.hasSuffix(".eml") {
                add(directory.appendingPathComponent(name), name: "\(folder)/\(name)")
            }
        }
        for (name, html) in trickyCases { sources.append(Source(name: "tricky/\(name)", bytes: Array(html.utf8), isEmail: false)) }
        return sources
    }()

    /// Markup written the ways the prefilter's rule must still see: every one of them is extracted.
    static let trickyCases: [(String, String)] = [
        ("upper-case-script", #"<HTML><BODY><SCRIPT TYPE="APPLICATION/LD+JSON">{"@context":"https://schema.org","@type":"FoodEstablishmentReservation","reservationId":"R1"}</SCRIPT></BODY></HTML>"#),
        ("type-with-references", #"<p>x</p><script type="application&#x2F;ld&#43;json">{"@context":"http://schema.org","@type":"LodgingReservation","reservationId":"L1"}</script>"#),
        ("no-context", #"<script type="application/ld+json">{"@type":"FoodEstablishmentReservation","reservationNumber":"N1"}</script>"#),
        ("context-object", #"<script type='application/ld+json'>{"@context":{"@vocab":"http://schema.org/"},"@type":"FlightReservation","reservationId":"F1"}</script>"#),
        ("escaped-context", #"<script type="application/ld+json">{"@context":"https://schema\u002eorg","@type":"EventReservation","reservationId":"E1"}</script>"#),
        ("bare-itemtype", #"<div itemscope itemtype="FoodEstablishmentReservation"><meta itemprop="reservationId" content="B1"></div>"#),
        ("unquoted-itemtype", #"<div itemscope itemtype=http://schema.org/FlightReservation><span itemprop=reservationId>U1</span></div>"#),
        ("single-quoted-upper", #"<DIV ITEMSCOPE ITEMTYPE='HTTPS://SCHEMA.ORG/TrainReservation'><SPAN ITEMPROP='reservationId'>T1</SPAN></DIV>"#),
        ("itemscope-with-value", #"<div itemScope="itemscope" itemtype="http://schema&#46;org/BusReservation"><meta itemprop="reservationId" content="S1"></div>"#),
        ("entity-itemtype", #"<div itemscope itemtype="&#104;ttp://&#115;chema.org/LodgingReservation"><meta itemprop="reservationId" content="H1"></div>"#),
        ("no-itemtype", #"<div itemscope><meta itemprop="reservationId" content="X1"></div>"#),
        ("script-in-body-after-long-text", String(repeating: "<p>lorem ipsum dolor sit amet</p>\n", count: 4000) + #"<script type="application/ld+json">{"@type":"BoatReservation","reservationId":"B2"}</script>"#),
        ("non-ascii-around", #"<p>Café “Bleu” — 東京 Ωμέγα</p><div itemscope itemtype="https://schema.org/EventReservation"><span itemprop="reservationId">Ü1</span></div>"#),
    ]

    /// The HTML and JSON-LD documents a source gives: a page itself; an email's decoded markup parts.
    static func documents(_ source: Source) -> [(html: String?, jsonLD: String?)] {
        guard source.isEmail else { return [(String(decoding: source.bytes, as: UTF8.self), nil)] }
        guard let message = try? RawMessage(bytes: source.bytes) else { return [] }
        return message.markupParts().parts.filter { !$0.isAttachment }.map { part -> (html: String?, jsonLD: String?) in
            part.kind == .html ? (html: part.text, jsonLD: nil) : (html: nil, jsonLD: part.text)
        }
    }

    /// Every variant message of one source, with a label.
    static func variants(_ source: Source) -> [(String, [UInt8])] {
        var variants: [(String, [UInt8])] = []
        if source.isEmail { variants.append(("as sent", source.bytes)) }
        for (index, document) in documents(source).enumerated() {
            if let html = document.html {
                // Every charset in every transfer encoding as a single part; every structure in every transfer
                // encoding in UTF-8 (each encoding variant meets each case; the full product would only repeat them).
                for charset in MIMEVariant.charsets {
                    guard let encoded = charset.encode(html) else { continue }
                    // 8bit is for text in lines; UTF-16 is not (its line feeds are two bytes): base64 or quoted-printable.
                    for transfer in MIMEVariant.Transfer.allCases where charset.isASCIICompatible || transfer != .eightBit {
                        let structures = charset.label == "utf-8" ? MIMEVariant.Structure.allCases : [.single]
                        for structure in structures {
                            let label = "html \(index + 1) \(charset.name) \(transfer) \(structure)"
                            variants.append(
                                (label, structure.message(type: "text/html", charset: charset.label, transfer: transfer,
                                                          body: transfer.encode(encoded, text: charset.isASCIICompatible))))
                        }
                    }
                }
                // Each JSON-LD block of the page on its own, as an application/ld+json part.
                for (block, json) in MIMEVariant.jsonLDBlocks(in: html).enumerated() {
                    for transfer in MIMEVariant.Transfer.allCases {
                        variants.append(
                            ("json-ld block \(block + 1) \(transfer)",
                             MIMEVariant.Structure.alternative.message(
                                type: "application/ld+json", charset: "utf-8", transfer: transfer, body: transfer.encode(Array(json.utf8)))))
                    }
                }
            }
            if let json = document.jsonLD {
                for transfer in MIMEVariant.Transfer.allCases {
                    variants.append(
                        ("json-ld part \(transfer)",
                         MIMEVariant.Structure.mixed.message(
                            type: "application/ld+json", charset: nil, transfer: transfer, body: transfer.encode(Array(json.utf8)))))
                }
            }
        }
        return variants
    }

    /// A message with its CRLF line endings made bare LF (as `.eml` files are often stored): all of them, or every
    /// second one (the header section and the body's lines mixed).
    static func withBareLineFeeds(_ message: [UInt8], everySecond: Bool) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(message.count)
        var lineEnds = 0
        for (index, byte) in message.enumerated() {
            if byte == 13, index + 1 < message.count, message[index + 1] == 10 {
                lineEnds += 1
                if !everySecond || lineEnds % 2 == 0 { continue }
            }
            output.append(byte)
        }
        return output
    }

    /// The prefilter on the bytes as received (`RawMessage.markupEvidence(inBytes:)`, what `Ingestor` and LMTP run),
    /// which makes CRLF only the parts it decodes, finds what it finds on the parsed message, whose every bare LF was
    /// made CRLF: the same kind, part and parts read, and without markup the same bytes scanned (with markup, the
    /// bytes scanned up to it count whole chunks, which a part's bare LFs cut elsewhere).
    static func expectSameEvidenceAsReceived(_ message: [UInt8], parsed evidence: MarkupEvidence, _ label: String) {
        let asReceived = RawMessage.markupEvidence(inBytes: message)
        let description = "\(label): \(asReceived.map(String.init(describing:)) ?? "not a message") as received, \(evidence) parsed"
        #expect(asReceived?.kind == evidence.kind, "\(description)")
        #expect(asReceived?.path == evidence.path, "\(description)")
        #expect(asReceived?.partsRead == evidence.partsRead, "\(description)")
        if !evidence.hasMarkup { #expect(asReceived?.bytesScanned == evidence.bytesScanned, "\(description)") }
    }

    @Test(arguments: sources)
    func prefilterSeesWhateverTheExtractorFinds(source: Source) throws {
        let extraction = DocumentExtraction()
        var extracted = 0
        let variants = Self.variants(source)
        for (label, message) in variants {
            // As generated (CRLF), with every line ending a bare LF, and with every second one (which the prefilter
            // on the parsed message reads as the CRLF message again, so the extractor is not run on it once more).
            for (ending, bytes) in [
                ("CRLF", message), ("LF", Self.withBareLineFeeds(message, everySecond: false)),
                ("mixed line ends", Self.withBareLineFeeds(message, everySecond: true)),
            ] {
                let evidence = try RawMessage(bytes: bytes).markupEvidence()
                Self.expectSameEvidenceAsReceived(bytes, parsed: evidence, "\(source.name), \(label), \(ending)")
                guard ending != "mixed line ends" else { continue }
                let graph = extraction.extract(ExtractionRequest(id: 0, kind: .email, document: bytes))
                if !graph.nodes.isEmpty {
                    if ending == "CRLF" { extracted += 1 }
                    #expect(evidence.hasMarkup, "\(source.name), \(label), \(ending): the extractor found \(graph.nodes.count) nodes")
                }
            }
        }
        // The variants carry the markup (a mistake in their encoding would leave the comparison empty): all but a
        // few of them (a JSON-LD block that is not JSON on its own) when the source as written has any.
        let original = source.isEmail ? source.bytes : variants[0].1
        if !extraction.extract(ExtractionRequest(id: 0, kind: .email, document: original)).nodes.isEmpty {
            #expect(extracted * 10 >= variants.count * 9, "\(source.name): \(extracted) of \(variants.count) variants carry markup")
        }
    }

    @Test func everyKindOfSourceIsThere() {
        let names = Self.sources.map(\.name)
        #expect(names.count { $0.hasPrefix("corpus/") } == CorpusComparisonCases.names.count)
        #expect(names.count { $0.hasPrefix("tricky/") } == Self.trickyCases.count)
        #expect(names.count { $0.hasSuffix(".eml") } >= 35)
        // The repository's own sources alone (the shared corpus beside the checkout adds its cases when present).
        #expect(names.count { !$0.hasPrefix("corpus/") } >= 65)
    }

    // MARK: - Mail without markup

    @Test(arguments: NonMarkupMail.all)
    func realisticMailWithoutMarkupIsNone(mail: NonMarkupMail) throws {
        let graph = DocumentExtraction().extract(ExtractionRequest(id: 0, kind: .email, document: mail.bytes))
        #expect(graph.nodes.isEmpty, "\(mail.name): the extractor found markup; not a negative case")
        let evidence = try RawMessage(bytes: mail.bytes).markupEvidence()
        #expect(!evidence.hasMarkup, "\(mail.name): \(evidence)")
        for bytes in [mail.bytes, Self.withBareLineFeeds(mail.bytes, everySecond: false)] {
            Self.expectSameEvidenceAsReceived(bytes, parsed: try RawMessage(bytes: bytes).markupEvidence(), mail.name)
        }
    }

    /// Markup where the extractor never takes it from: an attached HTML file, a forwarded message. The prefilter
    /// says none too (it neither decodes the attachment nor opens the attached message).
    @Test func markupOnlyInAttachmentsOrForwardedMailIsNone() throws {
        let html = #"<script type="application/ld+json">{"@type":"FlightReservation","reservationId":"Z1"}</script>"#
        let attached = MIMEVariant.Structure.mixed.message(
            type: "text/html", charset: "utf-8", transfer: .base64, body: MIMEVariant.Transfer.base64.encode(Array(html.utf8)),
            disposition: "attachment; filename=\"booking.html\"")
        let inner = MIMEVariant.Structure.single.message(type: "text/html", charset: "utf-8", transfer: .eightBit, body: Array(html.utf8))
        let forwarded = MIMEVariant.forwarded(inner)
        for message in [attached, forwarded] {
            #expect(DocumentExtraction().extract(ExtractionRequest(id: 0, kind: .email, document: message)).nodes.isEmpty)
            #expect(try !RawMessage(bytes: message).markupEvidence().hasMarkup)
            #expect(RawMessage.markupEvidence(inBytes: message)?.hasMarkup == false)
        }
    }
}

/// The corpus cases (`shared/corpus/markup`).
enum CorpusComparisonCases {
    static let directory = corpusDirectory
    static var names: [String] {
        guard let directory else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }
            .sorted()
    }
}

