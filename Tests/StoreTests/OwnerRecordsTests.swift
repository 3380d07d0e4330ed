import Foundation
import PostgresStore
import SQLiteStore
import Store
import TestSupport
import Testing

/// Export and erasure (issue 16), on every backend: everything held about one owner comes out, and goes, and nothing
/// of another owner does. Then the database itself is searched: the SQLite file's raw bytes (with its WAL and shared
/// memory files), and a `pg_dump`.
@Suite("Store conformance: an owner's export and erasure, on every backend")
struct OwnerRecordsTests {
    static let ada = Sample.owner
    static let bob = Sample.bob

    /// Fills the store with what both owners have: reservations with history (Ada's numbers ADA…, Bob's BOB…), a
    /// profile and sender decisions each, log entries naming each and one naming both, spooled messages (one for Ada,
    /// one for the signed recipients naming Ada in its header, one for Bob), tokens for each.
    static func populate(_ store: any ManagedStore, clock: TestClock) async throws {
        for owner in [ada, bob] {
            let prefix = owner == ada ? "ADA" : "BOB"
            for version in ["A1", "B2"] {
                clock.advance(by: 1)
                _ = try await store.ingest(
                    [Sample.flight(item: "\(prefix)77-1", container: "\(prefix)77", owner: owner, gate: version)],
                    decision: entry(owners: [owner], item: "\(prefix)77-1"))
            }
            _ = try await store.apply(
                Sample.flight(item: "\(prefix)88", container: "\(prefix)88", owner: owner, underName: "\(prefix) Person"))
            _ = try await store.updateProfile(OwnerProfileUpdate(names: ["\(prefix) Person"]), owner: owner)
            _ = try await store.setSenderDecision(.block, domain: "\(prefix.lowercased())-spam.example", owner: owner)
            _ = try await store.addToken(
                role: .owner, subject: owner.address, label: "phone",
                secretHash: String(repeating: owner == ada ? "a1" : "b2", count: 32), by: "admin")
        }
        let adaRecord = try #require(try await store.list(owner: ada).first)
        _ = try await store.decide(.accept, reservation: adaRecord.id, owner: ada)
        // One email for both: the entry names both owners.
        _ = try await store.ingest(
            [
                Sample.flight(item: "SHARED-1", container: "SHARED", owner: ada),
                Sample.flight(item: "SHARED-1", container: "SHARED", owner: bob),
            ], decision: entry(owners: [ada, bob], item: nil))
        _ = try await store.spool(
            Data("To: ada@example.org\r\nSubject: ADA77\r\n\r\n".utf8), channel: .lmtp, owner: ada,
            reasonCode: "dns.temperror", nextAttemptAt: clock.now)
        _ = try await store.spool(
            Data("To: Ada <ADA@Example.org>\r\nSubject: ADA99\r\n\r\n".utf8), channel: .email, owner: nil,
            reasonCode: "dns.temperror", nextAttemptAt: clock.now)
        _ = try await store.spool(
            Data("To: bob@example.org\r\nSubject: BOB77\r\n\r\n".utf8), channel: .lmtp, owner: bob,
            reasonCode: "dns.temperror", nextAttemptAt: clock.now)
        _ = try await store.addToken(role: .admin, subject: "", label: "ops", secretHash: String(repeating: "cc", count: 32), by: "x")
        // A webhook for each owner's changes, and one for every change; deliveries queued for all of them.
        for owner in [ada, bob] {
            _ = try await store.addWebhook(
                url: "https://hooks.example/\(owner == ada ? "ADA" : "BOB")77", owner: owner, domain: nil, types: [],
                secret: WebhookStoreTests.secret, by: "admin")
        }
        _ = try await store.addWebhook(
            url: "https://hooks.example/all", owner: nil, domain: nil, types: [], secret: WebhookStoreTests.secret, by: "admin")
        _ = try await store.apply(Sample.flight(item: "ADA77-1", container: "ADA77", owner: ada, gate: "C3"))
        _ = try await store.apply(Sample.flight(item: "BOB77-1", container: "BOB77", owner: bob, gate: "C3"))
        _ = try await store.queueDeliveries(limit: 100)
    }

    static func entry(owners: [OwnerAddress], item: String?) -> DecisionLogEntry {
        DecisionLogEntry(
            time: Sample.time(1), channel: .lmtp, sourceDomain: Sample.domain, source: "<\(UUID().uuidString)@airline.example>",
            owners: owners, contentHash: "sha256:x", verdict: .admitted)
    }

    @Test(arguments: StoreBackend.all) func theExportHoldsEverythingOfTheOwnerAndNothingOfAnother(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            try await Self.populate(store, clock: clock)
            let records = try await store.records(of: Self.ada)
            #expect(records.owner == Self.ada)
            #expect(records.reservations.map(\.itemReference) == ["ADA77-1", "ADA88", "SHARED-1"])
            // Every change of hers, the consent change among them, and the webhook for her alone.
            #expect(records.changes.count == 6)
            #expect(records.changes.allSatisfy { $0.reservation.owner == Self.ada })
            #expect(records.changes.contains { $0.kind == .consentChanged })
            #expect(records.webhooks.map(\.url) == ["https://hooks.example/ADA77"])
            #expect(records.reservations.allSatisfy { $0.owner == Self.ada })
            #expect(records.reservations.first?.consent.state == .accepted)
            // Every version, the current one last, each with its provenance.
            let first = try #require(records.reservations.first)
            #expect(records.history.filter { $0.reservationID == first.id }.map(\.version) == [1, 2, 3])
            #expect(records.history.count == 5)
            #expect(records.history.allSatisfy { !$0.provenance.isEmpty })
            #expect(records.profile?.names == ["ADA Person"])
            #expect(records.senderPreferences.map(\.domain) == ["ada-spam.example"])
            #expect(records.decisionLog.count == 3)
            #expect(records.decisionLog.allSatisfy { $0.names(Self.ada) })
            #expect(records.spooledMessages.count == 2)
            #expect(records.tokens.map(\.label) == ["phone"])
            #expect(records.tokens.allSatisfy { $0.subject == Self.ada.address })

            // Nothing of Bob's in it, anywhere (the shared log entry names him: it is Ada's too).
            let encoder = JSONEncoder()
            encoder.dataEncodingStrategy = .base64
            var withoutShared = records
            withoutShared.decisionLog.removeAll { $0.owners.count > 1 }
            let text = String(decoding: try encoder.encode(withoutShared), as: UTF8.self)
            #expect(!text.contains("bob"))
            #expect(!text.contains("BOB"))
        }
    }

    @Test(arguments: StoreBackend.all) func forgettingRemovesEverythingOfTheOwnerAndKeepsTheOther(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            try await Self.populate(store, clock: clock)
            let bobBefore = try await store.records(of: Self.bob)
            let adaIDs = try await store.list(owner: Self.ada).map(\.id)

            let report = try await store.forget(Self.ada)
            #expect(report.reservations == 3)
            #expect(report.versions == 2)
            #expect(report.changeEvents == 6)
            #expect(report.webhooks == 1)
            // Her last change, queued for the webhook of every change and for hers (the webhooks came after the rest).
            #expect(report.webhookDeliveries == 2)
            #expect(report.profiles == 1)
            #expect(report.senderPreferences == 1)
            #expect(report.decisionLogEntries == 2)
            #expect(report.decisionLogEntriesRedacted == 1)
            #expect(report.spooledMessages == 2)
            #expect(report.tokens == 1)
            // SQLite vacuums; PostgreSQL leaves the pages to its own VACUUM (a dump shows nothing: see below).
            #expect(report.compacted == (backend != .postgres))

            let after = try await store.records(of: Self.ada)
            #expect(after.reservations.isEmpty && after.history.isEmpty && after.decisionLog.isEmpty)
            #expect(after.spooledMessages.isEmpty && after.tokens.isEmpty && after.senderPreferences.isEmpty)
            #expect(after.profile == nil)
            for id in adaIDs {
                #expect(try await store.reservation(id: id) == nil)
                #expect(try await store.history(of: id).isEmpty)
            }
            // Bob keeps all of his; the entry they shared now names him alone.
            var bobAfter = try await store.records(of: Self.bob)
            #expect(bobAfter.reservations == bobBefore.reservations)
            #expect(bobAfter.history == bobBefore.history)
            let shared = try #require(bobAfter.decisionLog.first { $0.source == bobBefore.decisionLog.last?.source })
            #expect(shared.owners == [Self.bob])
            #expect(shared.reservations.allSatisfy { $0.owner == Self.bob })
            bobAfter.decisionLog.removeAll { $0.id == shared.id }
            var bobBeforeUnshared = bobBefore
            bobBeforeUnshared.decisionLog.removeAll { $0.id == shared.id }
            #expect(bobAfter.decisionLog == bobBeforeUnshared.decisionLog)
            #expect(bobAfter.spooledMessages == bobBefore.spooledMessages)
            #expect(bobAfter.tokens == bobBefore.tokens)
            #expect(bobAfter.profile == bobBefore.profile)
            #expect(try await store.tokens(role: .admin).count == 1)
            // The change feed and the webhooks keep nothing of hers, all of his.
            #expect(try await store.changes(after: 0, scope: .owner(Self.ada), limit: 100).isEmpty)
            let feed = try await store.changes(after: 0, scope: .all, limit: 100)
            #expect(!feed.isEmpty && feed.allSatisfy { $0.reservation.owner == Self.bob })
            #expect(bobAfter.changes == bobBefore.changes)
            #expect(try await store.webhooks().map(\.url).sorted() == ["https://hooks.example/BOB77", "https://hooks.example/all"])
            let deliveries = try await store.deliveries(webhookID: nil, state: nil, limit: 100)
            #expect(deliveries.count == 2 && deliveries.allSatisfy { delivery in
                feed.contains { $0.position == delivery.position } })

            // Forgetting again finds nothing.
            #expect(try await store.forget(Self.ada).total == 0)
        }
    }

    /// What must not be found once Ada is forgotten: her address (any case) and her reservation numbers.
    static let adaTraces = ["ada@example.org", "ADA77", "ADA88", "ADA99", "ADA Person"]
    static let bobTraces = ["bob@example.org", "BOB77", "BOB88"]

    /// Whether `bytes` hold `text`, ASCII case ignored, as text or as the hex PostgreSQL dumps bytea in.
    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let lowered = bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        let plain = Array(text.lowercased().utf8)
        let hex = Array(text.utf8.map { String(format: "%02x", $0) }.joined().utf8)
        let hexLower = Array(text.lowercased().utf8.map { String(format: "%02x", $0) }.joined().utf8)
        return [plain, hex, hexLower].contains { needle in
            lowered.indices.contains { start in
                start + needle.count <= lowered.count && lowered[start..<start + needle.count].elementsEqual(needle)
            }
        }
    }

    @Test func noTraceOfAForgottenOwnerRemainsInTheSQLiteFiles() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.databasePath
        let clock = TestClock()
        let store = try SQLiteStore(path: path, configuration: fastConfiguration, now: clock.source)
        try await running([store]) { _ in
            try await Self.populate(store, clock: clock)
            // Before: both owners are in the files (the test can see what it looks for).
            let before = try Self.files(path)
            for trace in Self.adaTraces + Self.bobTraces { #expect(Self.contains(before, trace), "\(trace) not found before") }

            let report = try await store.forget(Self.ada)
            #expect(report.compacted)
            let after = try Self.files(path)
            for trace in Self.adaTraces { #expect(!Self.contains(after, trace), "\(trace) is still in the files") }
            for trace in Self.bobTraces { #expect(Self.contains(after, trace), "\(trace) is gone too") }
            #expect(try await store.list(owner: Self.bob).count == 3)
        }
    }

    @Test func noTraceOfAForgottenOwnerRemainsInAPostgreSQLDump() async throws {
        let (server, name, settings) = try await StoreBackend.postgresDatabase()
        let clock = TestClock()
        do {
            let store = try await PostgresStore.open(settings, now: clock.source)
            try await running([store]) { _ in
                try await Self.populate(store, clock: clock)
                let before = Array(try await server.dump(database: name).utf8)
                for trace in Self.adaTraces + Self.bobTraces {
                    #expect(Self.contains(before, trace), "\(trace) not in the dump before")
                }

                _ = try await store.forget(Self.ada)
                let after = Array(try await server.dump(database: name).utf8)
                for trace in Self.adaTraces { #expect(!Self.contains(after, trace), "\(trace) is still in the dump") }
                for trace in Self.bobTraces { #expect(Self.contains(after, trace), "\(trace) is gone from the dump too") }
            }
            try? await server.dropDatabase(name)
        } catch {
            try? await server.dropDatabase(name)
            throw error
        }
    }

    /// The database file and its companions, as bytes.
    static func files(_ path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for suffix in ["", "-wal", "-shm", "-journal"] {
            if let data = FileManager.default.contents(atPath: path + suffix) { bytes += data }
        }
        return bytes
    }

    // MARK: - Retention

    @Test(arguments: StoreBackend.all) func retentionRemovesWhatEndedAndWhatWasLoggedOrSpooledLongAgo(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            // Ended at hour 10 (with an earlier version), ends at hour 100, states no time (written at hour 0).
            _ = try await store.apply(Sample.flight(item: "OLD", container: "OLD", gate: "A1", ends: Sample.time(10)))
            _ = try await store.apply(Sample.flight(item: "OLD", container: "OLD", gate: "B2", ends: Sample.time(10)))
            _ = try await store.apply(Sample.flight(item: "LATER", container: "LATER", ends: Sample.time(100)))
            _ = try await store.apply(Sample.minimalCancellation(container: "BARE"))
            _ = try await store.append(DecisionLogTests.entry(hours: 1, domain: Sample.domain))
            _ = try await store.append(DecisionLogTests.entry(hours: 30, domain: Sample.domain))
            _ = try await store.spool(Data("old".utf8), channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror", nextAttemptAt: clock.now)
            clock.advance(by: 40 * 3600)
            _ = try await store.spool(Data("new".utf8), channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror", nextAttemptAt: clock.now)

            // At hour 40, everything before hour 20 is due.
            let cutoffs = RetentionCutoffs(
                reservationsEndedBefore: Sample.time(20), decisionsBefore: Sample.time(20), spooledBefore: Sample.time(20))
            let report = try await store.prune(cutoffs)
            #expect(report.reservations == 2)
            #expect(report.versions == 1)
            // Their copies in the outbox go with them: OLD created and updated, BARE created.
            #expect(report.changeEvents == 3)
            #expect(try await store.changes(after: 0, scope: .all, limit: 100).map(\.reservation.itemReference) == ["LATER"])
            #expect(report.decisionLogEntries == 1)
            #expect(report.spooledMessages == 1)
            #expect(try await store.list(owner: Sample.owner).map(\.itemReference) == ["LATER"])
            let log = try await store.entries(domain: nil, since: nil, afterID: nil, limit: 10)
            #expect(log.map(\.time) == [Sample.time(30), clock.now])
            // The expired message leaves an entry saying so.
            #expect(log.last?.codes == ["retention.spool-expired"])
            #expect(try await store.spooledMessages(afterID: 0, limit: 10).map(\.bytes) == [Data("new".utf8)])
            // A second sweep finds nothing more.
            #expect(try await store.prune(cutoffs).total == 0)
        }
    }

    @Test(arguments: StoreBackend.all) func retentionWorksInBatches(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            for index in 0..<7 {
                _ = try await store.apply(Sample.flight(item: "R\(index)", container: "R\(index)", ends: Sample.time(1)))
                _ = try await store.append(DecisionLogTests.entry(hours: 1, domain: nil))
            }
            var cutoffs = RetentionCutoffs(
                reservationsEndedBefore: Sample.time(2), decisionsBefore: Sample.time(2), spooledBefore: nil)
            cutoffs.batchSize = 3
            let report = try await store.prune(cutoffs)
            #expect(report.reservations == 7)
            #expect(report.decisionLogEntries == 7)
            #expect(try await store.listAll(limit: 100).isEmpty)
        }
    }
}
