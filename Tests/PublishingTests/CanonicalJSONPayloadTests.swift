import Foundation
import Markup
@testable import Publishing
import Reservations
import Store
import TestSupport
import Testing

/// The stored payload, its reading back and the CloudEvent made from it, against Foundation's `JSONEncoder` and
/// `JSONDecoder` on the markup corpus resolved: what the gateway stores and signs is the same bytes as before the
/// fast writer and reader, and what it reads back is the same value.
@Suite("Canonical JSON: stored payloads and change events as Foundation writes and reads them")
struct CanonicalJSONPayloadTests {
    static let corpusDirectory = CorpusComparison.corpusDirectory(
        packageRoot: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent())

    static let foundationEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static let provenance = Provenance(sources: [
        Provenance.Source(
            channel: .lmtp, sourceDomain: "nordic-rail.example",
            dkim: Provenance.DKIMIdentity(signingDomain: "mail.nordic-rail.example", selector: "s/1\"x\""),
            messageIDSHA256: "ab12", url: "https://nordic-rail.example/b?c=d", flags: ["allow-any-domain"],
            testModes: ["é/ü"], policy: "default", admittedAt: Date(timeIntervalSince1970: 1_790_000_060.123))
    ])

    /// Every resolved reservation of a corpus case, stored, read back and published.
    @Test(.enabled(if: corpusDirectory != nil, "shared/corpus/markup is absent"), arguments: CorpusComparison.cases(in: corpusDirectory))
    func everyCorpusCase(name: String) throws {
        let directory = try #require(Self.corpusDirectory).appendingPathComponent(name)
        let input = try #require(
            ["input.html", "input.eml"].map { directory.appendingPathComponent($0) }
                .first { FileManager.default.fileExists(atPath: $0.path) })
        let graph = MarkupExtractor().extract(html: [UInt8](try Data(contentsOf: input)))
        for (index, resolution) in ReservationResolver().resolve(graph).enumerated() {
            guard let reservation = resolution.reservation else { continue }
            let warnings = index % 2 == 0 ? [] : [StoredPayload.Warning(code: "markup.url-not-https", path: "reservationFor.url")]
            try Self.expectSameThroughout(reservation: reservation, markup: resolution.normalized, warnings: warnings, id: Int64(index))
        }
    }

    /// Markup of every shape (the generator of `CanonicalJSONEncoderTests`), under one reservation.
    @Test(arguments: 0..<60)
    func generatedMarkup(seed: UInt64) throws {
        var random = PayloadGenerator(seed: seed)
        var reservation = Reservation(kind: .train)
        reservation.reservationId = random.string()
        reservation.tripNumber = random.string()
        try Self.expectSameThroughout(reservation: reservation, markup: random.value(depth: 0), warnings: [], id: Int64(seed))
    }

    static func expectSameThroughout(
        reservation: Reservation, markup: JSONValue, warnings: [StoredPayload.Warning], id: Int64
    ) throws {
        // Stored: the bytes the store compares to tell an unchanged re-sent email.
        let content = ReservationContent(
            admitted: reservation, normalized: markup, senderTime: nil, flags: ["allow-any-domain"], source: "<a@b.example>",
            warnings: warnings, provenance: provenance)
        let reference = try foundationEncoder.encode(StoredPayload(reservation: reservation, markup: markup, warnings: warnings))
        #expect(content.payload == reference)
        // Read back: the same value as JSONDecoder reads, and only the reservation when that is all that is asked.
        let decoded = try JSONDecoder().decode(StoredPayload.self, from: reference)
        #expect(StoredPayload(stored: reference) == decoded)
        #expect(StoredPayload.reservation(stored: reference) == decoded.reservation)
        // The provenance as the store keeps it.
        let provenanceEncoder = JSONEncoder()
        provenanceEncoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        provenanceEncoder.dateEncodingStrategy = .millisecondsSince1970
        #expect(Array(try provenance.storedJSON().utf8) == Array(try provenanceEncoder.encode(provenance)))
        // Published: the CloudEvent's bytes, which the webhook signature covers.
        let stored = StoredReservation(
            id: id, key: ReservationKey(owner: OwnerAddress("eva@guest.example.net")!, sourceDomain: "nordic-rail.example", itemReference: "B9C8"),
            content: content, version: 2, createdAt: Date(timeIntervalSince1970: 1_790_000_000.5),
            updatedAt: Date(timeIntervalSince1970: 1_790_000_060.25), cancelledAt: nil)
        let event = ChangeEvent(
            position: 7 + id, kind: .updated, recordedAt: Date(timeIntervalSince1970: 1_790_000_060.123), channel: .lmtp,
            reservation: stored)
        let message = ChangeMessage(event)
        #expect(try message.encoded() == Array(try ChangeMessage.encoder.encode(message)))
        #expect(message.data.reservation.markup == decoded.markup)
        // The API's view with every version.
        let history = [ReservationHistoryEntry(reservationID: id, version: 1, content: content, recordedAt: stored.createdAt, cancelledAt: nil)]
        var view = ReservationView(stored, history: history)
        view.versions = history.map { ReservationView.Version($0, withMarkup: true) }
        #expect(view.versions?.first?.markup == decoded.markup)
        #expect(
            try CanonicalJSONEncoder(dateEncoding: .iso8601).encode(view) == Array(try ChangeMessage.encoder.encode(view)))
    }
}

/// Seeded JSON values of every shape (the same alphabet as `CanonicalJSONEncoderTests`' generator).
struct PayloadGenerator {
    var random: SplitMix64

    init(seed: UInt64) { random = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 7) }

    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    static let pieces: [String] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{00}", "\u{01}", "\u{08}", "\u{0C}", "\u{1B}", "\u{1F}",
        "\u{7F}", "é", "e\u{301}", "ß", "日", "🚆", "\u{2028}", "\u{FFFD}", "@", "@type", "http://schema.org/", "<b>",
    ]

    mutating func string() -> String {
        (0..<below(8)).map { _ in Self.pieces[below(Self.pieces.count)] }.joined()
    }

    mutating func value(depth: Int) -> JSONValue {
        switch below(depth > 3 ? 4 : 6) {
        case 0: return .null
        case 1: return .bool(below(2) == 0)
        case 2, 3: return .string(string())
        case 4: return .array((0..<below(5)).map { _ in value(depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<below(7) { members[string()] = value(depth: depth + 1) }
            return .object(members)
        }
    }
}
