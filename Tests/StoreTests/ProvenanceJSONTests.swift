import Foundation
import GRDB
import Reservations
import SQLiteStore
import Store
import Testing

/// The store writes a version's provenance, a log entry's outcomes and SQLite's lists of strings member by member (``CanonicalJSONBuilder``),
/// not through the `Encoder` protocol: byte for byte what `CanonicalJSONEncoder` (and so Foundation's `JSONEncoder`)
/// writes for the same value, and read back as the same value.
@Suite("Stored JSON written by hand: the provenance and the log's outcomes")
struct ProvenanceJSONTests {
    /// Every optional present and absent, text that needs escaping, several sources, instants with and without
    /// milliseconds.
    static let provenances: [Provenance] = {
        let texts = ["", "plain", "quote \" backslash \\ slash / tab \t", "line\n\u{01}\u{1F}", "café 日本 🚆"]
        var values = [Provenance()]
        for index in 0..<40 {
            let text = texts[index % texts.count]
            let present = { (bit: Int) in (index >> bit) & 1 == 1 }
            let source = Provenance.Source(
                channel: IngestionChannel.allCases[index % IngestionChannel.allCases.count],
                sourceDomain: "mail.airline.example" + text,
                dkim: present(0) ? Provenance.DKIMIdentity(signingDomain: "airline.example", selector: "s" + text) : nil,
                messageIDSHA256: present(1) ? String(repeating: "ab", count: 32) : nil,
                url: present(2) ? "https://hotel.example/booking/1?x=1&y=" + text : nil,
                certificateSHA256: present(3) ? String(repeating: "0f", count: 32) : nil,
                certificateVerified: present(2) ? present(4) : nil,
                appIdentifier: present(4) ? "com.skyways.app" : nil, appVerified: present(4) ? present(0) : nil,
                flags: Array(["allow-any-domain", text].prefix(index % 3)), testModes: present(3) ? ["test-mode"] : [],
                policy: index % 2 == 0 ? "production" : "development" + text,
                admittedAt: Date(timeIntervalSince1970: 1_764_160_000 + Double(index) * 12_345.678 + 0.0005))
            values.append(Provenance(sources: index % 5 == 0 ? [source, source] : [source]))
        }
        return values
    }()

    @Test(arguments: provenances)
    func aProvenanceIsWhatTheEncoderWrites(_ provenance: Provenance) throws {
        let encoder = CanonicalJSONEncoder(dateEncoding: .millisecondsSince1970)
        let stored = try provenance.storedJSON()
        #expect(stored == String(decoding: try encoder.encode(provenance), as: UTF8.self))
        #expect(Array(stored.utf8) == Array(try encoder.foundationEncoder.encode(provenance)))
        #expect(try Provenance(storedJSON: stored) == provenance)
    }

    static let outcomes: [LifecycleOutcome?] = [
        nil, .created, .updated(version: 2), .updated(version: 1_000_001), .unchanged, .stale, .cancelled(count: 0),
        .cancelled(count: 3), .blocked, .declined,
    ]

    @Test(arguments: 0..<outcomes.count)
    func outcomeRecordsAreWhatTheEncoderWrites(index: Int) throws {
        let owners = [nil, OwnerAddress("ada@example.org"), OwnerAddress("bob+trips@example.net")]
        let records = (0...index).map { item in
            ReservationOutcomeRecord(
                itemReference: item % 4 == 3 ? "LH \"1\" \\ \u{02}" : "item-\(item)", owner: owners[item % owners.count],
                outcome: Self.outcomes[(index + item) % Self.outcomes.count],
                codes: Array(["markup.arrival-before-departure", "consent.sender-blocked"].prefix(item % 3)))
        }
        for list in [[], [records[0]], records] {
            let stored = ReservationOutcomeRecord.storedJSON(list)
            #expect(stored == String(decoding: try CanonicalJSONEncoder().encode(list), as: UTF8.self))
            #expect(Array(stored.utf8) == Array(try CanonicalJSONEncoder().foundationEncoder.encode(list)))
            #expect(try JSONDecoder().decode([ReservationOutcomeRecord].self, from: Data(stored.utf8)) == list)
        }
    }

    /// SQLite keeps a log entry's owners, codes and flags and a version's flags as JSON lists of strings.
    @Test func sqliteListsAreWhatTheEncoderWrites() async throws {
        let texts = ["", "plain", "quote \" backslash \\ slash / tab \t", "line\n\u{01}\u{1F}", "café 日本 🚆"]
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        try await running([store]) { _ in
            for count in 0...texts.count {
                let list = Array(texts.prefix(count))
                _ = try await store.ingest(
                    [Sample.flight(item: "L\(count)", flags: list)],
                    decision: DecisionLogEntry(
                        time: Sample.time(Double(count)), channel: .email, sourceDomain: Sample.domain, source: "L\(count)",
                        owners: [Sample.owner, Sample.bob].prefix(count % 3).map { $0 }, contentHash: "sha256:\(count)",
                        verdict: .admitted, codes: list, flags: list.reversed()))
            }
        }
        let database = try DatabaseQueue(path: directory.databasePath)
        let rows = try database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT l.owners, l.codes, l.flags, r.flags FROM decision_log l
                    JOIN reservation r ON r.item_reference = l.source ORDER BY l.id
                    """)
        }
        #expect(rows.count == texts.count + 1)
        for (count, row) in rows.enumerated() {
            let list = Array(texts.prefix(count))
            let encoded = { (list: [String]) in String(decoding: try CanonicalJSONEncoder().encode(list), as: UTF8.self) }
            #expect(row[0] as String == (try encoded([Sample.owner, Sample.bob].prefix(count % 3).map(\.address))))
            #expect(row[1] as String == (try encoded(list)))
            #expect(row[2] as String == (try encoded(list.reversed())))
            #expect(row[3] as String == (try encoded(list)))
        }
    }
}
