import Foundation
import Store
import Testing

/// A store at `v6-lookup`, whose change events copied the whole record, migrated to `v7-events` (an event names its
/// record's version): the feed serves the same events, each as the record was at its change. The rows are written in
/// each backend's old schema by SQL (booleans, lists and bytes spelled as the backend stores them).
enum ChangeEventMigration {
    /// Ada's flight: created at 1 s (gate A1), updated at 2 s (gate B2, sent at 1.5 s; a later copy advanced the
    /// record's sender time to 2 s without a new version), then declined by her at 3 s.
    static func oldRows(false no: String, flags: String, payload: (String) -> String) -> String {
        let record = "'ada@example.org', 'airline.example', 'LH1'"
        func content(_ gate: String, _ sent: Int) -> String {
            "'ABC123', 'confirmed', \(no), \(sent), 'modified-time', 'FlightReservation', \(payload(gate)), \(flags), "
                + "'msg-\(gate)', '{\"sources\":[]}', NULL"
        }
        let columns = """
            owner, source_domain, item_reference, container_reference, status, is_minimal_cancellation, sender_time,
            sender_time_source, kind, payload, flags, source, provenance, ends_at, version, created_at, updated_at,
            cancelled_at, consent, consent_reason, consent_changed_at
            """
        return """
            INSERT INTO reservation (id, \(columns))
            VALUES (1, \(record), \(content("B2", 2000)), 2, 1000, 2000, NULL, 'declined', 'owner', 3000);
            INSERT INTO reservation_history (reservation_id, version, container_reference, status,
                is_minimal_cancellation, sender_time, sender_time_source, kind, payload, flags, source, provenance,
                ends_at, recorded_at, cancelled_at)
            VALUES (1, 1, \(content("A1", 1000)), 1000, NULL);
            INSERT INTO change_event (position, change, recorded_at, channel, reservation_id, \(columns))
            VALUES (1, 'reservation.created', 1000, 'lmtp', 1, \(record), \(content("A1", 1000)), 1, 1000, 1000, NULL,
                    'accepted', 'new', 1000),
                (2, 'reservation.updated', 2000, 'lmtp', 1, \(record), \(content("B2", 1500)), 2, 1000, 2000, NULL,
                    'accepted', 'new', 1000),
                (3, 'reservation.consent-changed', 3000, NULL, 1, \(record), \(content("B2", 2000)), 2, 1000, 2000,
                    NULL, 'declined', 'owner', 3000);
            UPDATE change_counter SET last = 3 WHERE id = 1;
            """
    }

    /// The migrated store's feed is the events the old rows held; a change written after continues their positions.
    static func expectFeedKept(_ store: any GatewayStore) async throws {
        let owner = try #require(OwnerAddress("ada@example.org"))
        for scope in [ChangeScope.all, .owner(owner), .domain("airline.example")] {
            let events = try await store.changes(after: 0, scope: scope, limit: 10)
            #expect(events.map(\.position) == [1, 2, 3])
            #expect(events.map(\.kind) == [.created, .updated, .consentChanged])
            #expect(events.map(\.channel) == [.lmtp, .lmtp, nil])
            #expect(events.map(\.recordedAt) == [1, 2, 3].map { Date(timeIntervalSince1970: $0) })
            #expect(events.map(\.reservation.id) == [1, 1, 1])
            #expect(events.map(\.reservation.version) == [1, 2, 2])
            #expect(events.map { String(decoding: $0.reservation.content.payload, as: UTF8.self) } == ["A1", "B2", "B2"])
            #expect(events.map(\.reservation.content.source) == ["msg-A1", "msg-B2", "msg-B2"])
            #expect(events.map { $0.reservation.content.senderTime?.milliseconds } == [1000, 1500, 2000])
            #expect(events.map(\.reservation.updatedAt) == [1, 2, 2].map { Date(timeIntervalSince1970: $0) })
            #expect(events.map(\.reservation.consent.state) == [.accepted, .accepted, .declined])
            #expect(events.allSatisfy { $0.reservation.key.itemReference == "LH1" && $0.reservation.owner == owner })
        }
        #expect(try await store.latestChangePosition() == 3)
        let records = try await store.records(of: owner)
        #expect(records.changes.map(\.position) == [1, 2, 3])
        #expect(records.changes.map(\.reservation.version) == [1, 2, 2])
    }
}
