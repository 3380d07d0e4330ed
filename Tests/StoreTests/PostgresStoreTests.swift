import Foundation
import PostgresStore
import Store
import TestSupport
import Testing

/// What only the PostgreSQL backend has: migrations shared by several nodes, and connection errors. The rules are
/// the conformance suite's.
@Suite("PostgreSQL store: migrations and connections")
struct PostgresStoreTests {
    static func settings(_ url: String) throws -> PostgresSettings {
        guard case .postgres(let settings) = try StoreLocation(parsing: url, environment: [:]) else {
            throw FixtureError("not a PostgreSQL URL: \(url)")
        }
        return settings
    }

    @Test func nodesMigratingANewDatabaseAtOnceMigrateItOnce() async throws {
        let server = try await PostgresServer.shared()
        try await server.withDatabase { url in
            let settings = try Self.settings(url)
            let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<4 { group.addTask { try await PostgresStore.migrate(settings) } }
                return try await group.reduce(into: [[String]]()) { $0.append($1) }
            }
            // One node applied every migration under the advisory lock; the others found them done.
            let known = PostgresStore.migrations.map(\.identifier)
            #expect(applied.filter { !$0.isEmpty } == [known])
            let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
            #expect(
                try await server.psql("SELECT identifier FROM gateway_migration ORDER BY identifier", database: name)
                    == known.sorted().map { $0 + "\n" }.joined())
        }
    }

    /// v5-trust on PostgreSQL: a revoked domain becomes suspended by an operator, its history too.
    @Test func aVersionFourDatabaseGetsDomainStates() async throws {
        let server = try await PostgresServer.shared()
        try await server.withDatabase { url in
            let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
            try await Self.migrate(database: name, on: server, before: "v5")
            try await server.psql(
                """
                INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by)
                VALUES ('airline.example', 'revoked', NULL, 0, 0, 'alice');
                INSERT INTO registered_domain_change (domain, status, contact, changed_at, changed_by)
                VALUES ('airline.example', 'revoked', NULL, 1, 'bob');
                """, database: name)
            let store = try await PostgresStore.open(try Self.settings(url))
            try await running([store]) { _ in
                let revoked = try #require(try await store.registeredDomain("airline.example"))
                #expect(revoked.status == .suspended)
                #expect(revoked.trust.suspension?.cause == .operator)
                let changes = try await store.domainChanges(domain: "airline.example", limit: 10)
                #expect(changes.map(\.status) == [.suspended])
                #expect(changes.map(\.reason) == ["revoked by an operator"])
            }
        }
    }

    /// v7-events on PostgreSQL: the change events that copied their record name its version; the feed serves the same
    /// events.
    @Test func aVersionSixDatabaseKeepsItsChangeFeed() async throws {
        let server = try await PostgresServer.shared()
        try await server.withDatabase { url in
            let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
            try await Self.migrate(database: name, on: server, before: "v7")
            try await server.psql(
                ChangeEventMigration.oldRows(false: "false", flags: "'{}'") { "convert_to('\($0)', 'UTF8')" }
                    + "SELECT setval(pg_get_serial_sequence('reservation', 'id'), 1);", database: name)
            let store = try await PostgresStore.open(try Self.settings(url))
            try await running([store]) { _ in
                try await ChangeEventMigration.expectFeedKept(store)
                _ = try await store.apply(Sample.flight())
                #expect(try await store.latestChangePosition() == 4)
            }
        }
    }

    @Test func aDatabaseOfAnotherApplicationIsRefusedAndLeftAlone() async throws {
        let server = try await PostgresServer.shared()
        try await server.withDatabase { url in
            let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
            try await server.psql("CREATE TABLE notes (body text)", database: name)
            let code = await storeErrorCode { _ = try await PostgresStore.open(try Self.settings(url)) }
            #expect(code == .foreignDatabase)
            #expect(try await server.psql("SELECT to_regclass('gateway_migration') IS NULL", database: name) == "t\n")
        }
    }

    @Test func aDatabaseFromANewerGatewayIsRefused() async throws {
        let (server, name, settings) = try await StoreBackend.postgresDatabase()
        try await server.psql("INSERT INTO gateway_migration VALUES ('v999', 0)", database: name)
        #expect(await storeErrorCode { _ = try await PostgresStore.open(settings) } == .schemaTooNew)
        try await server.dropDatabase(name)
    }

    @Test func statusShowsPendingMigrationsUntilMigrated() async throws {
        let server = try await PostgresServer.shared()
        try await server.withDatabase { url in
            var configuration = PostgresStore.Configuration()
            configuration.migrateOnOpen = false
            let store = try await PostgresStore.open(try Self.settings(url), configuration: configuration)
            try await running([store]) { _ in
                let before = try await store.status()
                #expect(before.backend == "postgresql")
                #expect(before.schemaVersion == nil)
                #expect(before.pendingMigrations == PostgresStore.migrations.map(\.identifier))
                #expect(try await store.migrate() == PostgresStore.migrations.map(\.identifier))
                #expect(try await store.migrate() == [])
                let after = try await store.status()
                #expect(after.schemaVersion == StoreSchema.current)
                #expect(after.counts == Dictionary(uniqueKeysWithValues: StoreTable.allCases.map { ($0, 0) }))
            }
        }
    }

    /// Nothing listens on the port: a clear error, naming the URL without its password, within the connect timeout.
    @Test func anUnreachableServerIsAClearErrorWithoutThePassword() async throws {
        let port = try unusedLoopbackPort()
        let settings = try Self.settings("postgres://ada:hunter2@127.0.0.1:\(port)/gateway?sslmode=disable&connect_timeout=2")
        let start = ContinuousClock.now
        do {
            _ = try await PostgresStore.open(settings)
            Issue.record("opened a store where nothing listens")
        } catch let error as StoreError {
            #expect(error.code == .unavailable)
            #expect(error.description.contains("postgres://ada@127.0.0.1:\(port)/gateway"))
            #expect(!error.description.contains("hunter2"))
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func aMissingDatabaseOrUserIsOpenFailedWithoutThePassword() async throws {
        let server = try await PostgresServer.shared()
        let missing = try Self.settings(
            "postgres://\(PostgresServer.user):secret-pw@127.0.0.1:\(server.port)/no_such_database?sslmode=disable")
        do {
            _ = try await PostgresStore.open(missing)
            Issue.record("opened a database that does not exist")
        } catch let error as StoreError {
            #expect(error.code == .openFailed)
            #expect(error.description.contains("3D000"))
            #expect(!error.description.contains("secret-pw"))
        }
        let stranger = try Self.settings("postgres://nobody@127.0.0.1:\(server.port)/postgres?sslmode=disable")
        #expect(await storeErrorCode { _ = try await PostgresStore.open(stranger) } == .openFailed)
    }

    @Test func theUnixSocketIsAnEndpointToo() async throws {
        let server = try await PostgresServer.shared()
        try await server.withDatabase { url in
            let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
            let settings = try Self.settings(
                "postgres://\(PostgresServer.user)@/\(name)?host=\(server.directory)&port=\(server.port)")
            #expect(settings.endpoint == .socket(directory: server.directory, port: server.port))
            #expect(try await PostgresStore.migrate(settings) == PostgresStore.migrations.map(\.identifier))
        }
    }

    /// The change feed's cursor against a transaction that records a change and then commits late: node A's
    /// transaction records a new booking's change, then waits on a row another session holds; meanwhile node B records
    /// and commits a change of its own, and a reader reads it. When A commits, its change is still after the reader's
    /// cursor. (Positions taken from a sequence at insert time fail this: A's change would sit below B's, behind
    /// the cursor, never read.)
    @Test func aChangeCommittedLateIsStillAfterTheCursorOfAReaderThatSawALaterOne() async throws {
        let (server, name, settings) = try await StoreBackend.postgresDatabase()
        let stores = [try await PostgresStore.open(settings), try await PostgresStore.open(settings)]
        try await running(stores) { _ in
            _ = try await stores[0].apply(Sample.flight(item: "HELD", owner: Sample.bob))
            let before = try await stores[0].latestChangePosition()
            let sessions = DatabaseSessions(server: server, database: name)
            // Another session holds the record's row until the test ends its wait (at most 60 s): a fixed hold would
            // end before A reaches the row on a loaded machine.
            let holder = Task {
                try? await server.psql(
                    "BEGIN; SELECT id FROM reservation WHERE item_reference = 'HELD' FOR UPDATE; SELECT pg_sleep(60); COMMIT;",
                    database: name)
            }
            try await sessions.waitFor("query LIKE '%pg_sleep(60)%' AND state = 'active'")
            // A: a new booking (its change recorded), then an update of the held record, which waits.
            let slow = Task {
                try await stores[0].ingest(
                    [Sample.flight(item: "FIRST-RECORDED"), Sample.flight(item: "HELD", owner: Sample.bob, gate: "Z9")],
                    decision: DecisionLogTests.entry(hours: 1, domain: Sample.domain))
            }
            try await sessions.waitFor("wait_event_type = 'Lock'")
            // B commits meanwhile (another owner: no lock of A's in its way); a reader sees B's change and moves its
            // cursor past it.
            _ = try await stores[1].apply(Sample.flight(item: "COMMITTED-FIRST", owner: OwnerAddress("carol@example.org")!))
            let seen = try await stores[1].changes(after: before, scope: .all, limit: 100)
            #expect(seen.map(\.reservation.itemReference) == ["COMMITTED-FIRST"])
            let cursor = try #require(seen.last?.position)
            // A commits once the row is free (the holder's wait cancelled: its transaction ends, the row lock with
            // it): its changes come after the reader's cursor.
            try await sessions.cancelSleepers()
            _ = await holder.value
            _ = try await slow.value
            let later = try await stores[1].changes(after: cursor, scope: .all, limit: 100)
            #expect(later.map(\.reservation.itemReference) == ["FIRST-RECORDED", "HELD"])
            #expect(later.map(\.position) == [cursor + 1, cursor + 2])
        }
        try? await server.dropDatabase(name)
    }
    /// Ingestions lock what they read (an item reference, a booking number) under their owner and domain held shared:
    /// another booking of the same owner goes through while one is locked, the locked one waits, and an owner's
    /// decision (the owner and domain taken exclusive) holds every ingestion of theirs back.
    @Test func ingestionsOfOtherBookingsOfAnOwnerDoNotWaitForEachOther() async throws {
        let (server, name, settings) = try await StoreBackend.postgresDatabase()
        let store = try await PostgresStore.open(settings)
        try await running([store]) { _ in
            let sessions = DatabaseSessions(server: server, database: name)
            /// Another session holds `lock` until cancelled (at most 60 s).
            func hold(_ lock: Int64) async throws -> Task<Void, Never> {
                let holder = Task {
                    _ = try? await server.psql(
                        "BEGIN; SELECT pg_advisory_xact_lock(\(lock)); SELECT pg_sleep(60); COMMIT;", database: name)
                }
                try await sessions.waitFor("query LIKE '%pg_sleep(60)%' AND state = 'active'")
                return holder
            }
            func release(_ holder: Task<Void, Never>) async throws {
                try await sessions.cancelSleepers()
                await holder.value
            }
            func ingest(_ booking: String) -> Task<Void, any Error> {
                Task {
                    _ = try await store.ingest(
                        [Sample.flight(item: "\(booking)-UA1", container: booking)],
                        decision: DecisionLogTests.entry(hours: 1, domain: Sample.domain))
                }
            }

            // Booking A's number held: an ingestion of booking B of the same owner and domain commits meanwhile.
            let bookingA = try await hold(
                PostgresStore.lockKey(owner: Sample.owner, sourceDomain: Sample.domain, reference: "BOOKA"))
            let first = ingest("BOOKA")
            try await sessions.waitFor("wait_event_type = 'Lock' AND wait_event = 'advisory'")
            try await ingest("BOOKB").value
            #expect(try await sessions.count("query LIKE '%pg_sleep(60)%' AND state = 'active'") == 1)
            #expect(try await store.list(owner: Sample.owner).map(\.key.itemReference) == ["BOOKB-UA1"])
            try await release(bookingA)
            try await first.value
            #expect(Set(try await store.list(owner: Sample.owner).map(\.key.itemReference)) == ["BOOKA-UA1", "BOOKB-UA1"])

            // The owner and domain held exclusive, as an owner's decision holds them: a new booking waits too.
            let owner = try await hold(PostgresStore.lockKey(owner: Sample.owner, sourceDomain: Sample.domain))
            let third = ingest("BOOKC")
            try await sessions.waitFor("wait_event_type = 'Lock' AND wait_event = 'advisory'")
            #expect(try await store.list(owner: Sample.owner).count == 2)
            try await release(owner)
            try await third.value
            #expect(try await store.list(owner: Sample.owner).count == 3)
        }
        try? await server.dropDatabase(name)
    }

    /// Applies the migrations before `version` (by identifier) to `database` by psql, as an older gateway left it, for a
    /// test to write rows in that version's shape.
    static func migrate(database name: String, on server: PostgresServer, before version: String) async throws {
        try await server.psql(
            "CREATE TABLE gateway_migration (identifier text PRIMARY KEY, applied_at bigint NOT NULL)", database: name)
        for migration in PostgresStore.migrations where migration.identifier < version {
            try await server.psql(migration.sql, database: name)
            try await server.psql("INSERT INTO gateway_migration VALUES ('\(migration.identifier)', 0)", database: name)
        }
    }
}

/// The other sessions of a test's database, as `pg_stat_activity` shows them (the asking session left out).
private struct DatabaseSessions {
    let server: PostgresServer
    let database: String

    /// How many are in `condition` (SQL over `pg_stat_activity`).
    func count(_ condition: String) async throws -> Int {
        let answer = try await server.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid() AND \(condition)",
            database: database)
        guard let count = Int(answer.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FixtureError("pg_stat_activity answered \(answer.prefix(100))")
        }
        return count
    }

    /// Returns once one is in `condition`; throws after 30 s.
    func waitFor(_ condition: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while try await count(condition) == 0 {
            guard ContinuousClock.now < deadline else { throw FixtureError("no session came to \(condition)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Cancels the sessions holding something in `pg_sleep(60)` (ending their transactions).
    func cancelSleepers() async throws {
        _ = try await server.psql(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()",
            database: database)
    }
}
