import Foundation
import GRDB
import SQLiteStore
import Store
import Synchronization
import Testing

@Suite("Opening and migrating the SQLite store")
struct SQLiteStoreOpeningTests {
    @Test func createsParentDirectoriesAPrivateFileAndUsesWAL() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        _ = try await store.apply(Sample.flight())
        try store.closeNow()

        let attributes = try FileManager.default.attributesOfItem(atPath: directory.databasePath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try Self.read(directory.databasePath) { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(
            try Self.read(directory.databasePath) { try Int32.fetchOne($0, sql: "PRAGMA application_id") }
                == 0x4757_5253)
    }

    @Test func reopeningKeepsEverything() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        do {
            let store = try SQLiteStore(
                path: directory.databasePath, configuration: fastConfiguration, now: clock.source)
            _ = try await store.apply(Sample.flight(gate: "A1"))
            _ = try await store.apply(Sample.flight(gate: "B2"))
            _ = try await store.append(
                DecisionLogEntry(
                    time: clock.now, channel: .lmtp, sourceDomain: Sample.domain, source: "<m1@airline.example>",
                    owners: [Sample.owner], contentHash: "sha256:00", verdict: .admitted))
            _ = try await store.setDomain(Sample.domain, status: .approved, contact: nil, by: "ops")
            _ = try await store.setFlag("allow-any-domain", enabled: true, expiresAt: nil, by: "ops")
            _ = try await store.spool(
                Data("raw".utf8), channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror",
                nextAttemptAt: clock.now)
            try store.closeNow()
        }
        let reopened = try SQLiteStore(
            path: directory.databasePath, configuration: fastConfiguration, now: clock.source)
        let record = try #require(try await reopened.list(owner: Sample.owner).first)
        #expect(record.version == 2)
        #expect(try await reopened.history(of: record.id).count == 2)
        #expect(try await reopened.entries(domain: nil, since: nil, afterID: nil, limit: 10).map(\.owners) == [[Sample.owner]])
        #expect(try await reopened.registeredDomain(Sample.domain)?.status == .approved)
        #expect(try await reopened.flag("allow-any-domain")?.enabled == true)
        #expect(try await reopened.spooledMessages(dueBy: nil, limit: 10).count == 1)
        #expect(try await reopened.apply(Sample.flight(gate: "B2")) == .unchanged)
        try reopened.closeNow()
    }

    @Test func reopeningDoesNotMigrateAgain() async throws {
        let directory = try TemporaryDirectory()
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).closeNow()
        let schemaBefore = try Self.schema(at: directory.databasePath)
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).closeNow()
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).closeNow()
        #expect(try Self.schema(at: directory.databasePath) == schemaBefore)
        #expect(try Self.appliedMigrations(directory.databasePath) == SQLiteStore.knownMigrations)
        #expect(SQLiteStore.knownMigrations == StoreSchema.versions)
    }

    @Test func aVersionOneDatabaseIsMigratedAndKeepsItsData() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.databasePath
        // A store written before tokens and sender times: v1 only, a domain, a record with a modifiedTime and a
        // log entry naming two owners in one comma-joined string.
        let queue = try Self.database(at: path, migratedUpTo: "v1")
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by)
                    VALUES ('airline.example', 'approved', NULL, 0, 0, 'alice');
                    INSERT INTO reservation (owner, source_domain, item_reference, container_reference, status,
                        is_minimal_cancellation, modified_time, kind, payload, flags, source, version, created_at,
                        updated_at, cancelled_at)
                    VALUES ('ada@example.org', 'airline.example', 'B9C8', 'B9C8', 'confirmed', 0, 1767225600000,
                        'FlightReservation', X'7B7D', '[]', '<m1@airline.example>', 1, 0, 0, NULL);
                    INSERT INTO decision_log (time, channel, source_domain, source, owner, content_hash, verdict, codes,
                        flags, reservations)
                    VALUES (0, 'email', 'airline.example', '<m1@airline.example>', 'ada@example.org,bob@example.org',
                        'sha256:00', 'admitted', '[]', '[]', '[{"itemReference":"B9C8","outcome":{"outcome":"created"}}]');
                    """)
        }
        try queue.close()

        let store = try SQLiteStore(path: path, configuration: fastConfiguration)
        #expect(try await store.registeredDomain("airline.example")?.status == .approved)
        _ = try await store.addToken(role: .admin, subject: "", label: "", secretHash: String(repeating: "a1", count: 32), by: "alice")
        let record = try #require(try await store.list(owner: Sample.owner).first)
        #expect(record.senderTime == SenderTime(Sample.time(0), source: .modifiedTime))
        let entry = try #require(try await store.entries(domain: nil, since: nil, afterID: nil, limit: 1).first)
        #expect(entry.owners == [Sample.owner, Sample.bob])
        #expect(entry.reservations.first?.outcome == .created)
        #expect(try await store.status().pendingMigrations.isEmpty)
        try store.closeNow()
        #expect(try Self.appliedMigrations(path) == SQLiteStore.knownMigrations)
    }

    /// v5-trust: a revoked domain becomes suspended by an operator (its history too); an approved one stays approved,
    /// with no proof yet.
    @Test func aVersionFourDatabaseGetsDomainStates() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.databasePath
        let queue = try Self.database(at: path, migratedUpTo: "v4")
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by)
                    VALUES ('airline.example', 'revoked', NULL, 0, 0, 'alice'),
                        ('hotel.example', 'approved', NULL, 0, 0, 'alice');
                    INSERT INTO registered_domain_change (domain, status, contact, changed_at, changed_by)
                    VALUES ('airline.example', 'approved', NULL, 0, 'alice'), ('airline.example', 'revoked', NULL, 1, 'bob');
                    """)
        }
        try queue.close()

        let store = try SQLiteStore(path: path, configuration: fastConfiguration)
        let revoked = try #require(try await store.registeredDomain("airline.example"))
        #expect(revoked.status == .suspended)
        #expect(revoked.trust.suspension?.cause == .operator)
        #expect(revoked.trust.suspension?.previousStatus == .approved)
        let approved = try #require(try await store.registeredDomain("hotel.example"))
        #expect(approved.status == .approved)
        #expect(approved.trust == RegisteredDomain.Trust())
        let changes = try await store.domainChanges(domain: "airline.example", limit: 10)
        #expect(changes.map(\.status) == [.approved, .suspended])
        #expect(changes.map(\.reason) == [nil, "revoked by an operator"])
        try store.closeNow()
    }

    /// v7-events: the change events that copied their record name its version; the feed serves the same events.
    @Test func aVersionSixDatabaseKeepsItsChangeFeed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.databasePath
        let queue = try Self.database(at: path, migratedUpTo: "v6-lookup")
        try await queue.write { db in
            try db.execute(
                sql: ChangeEventMigration.oldRows(false: "0", flags: "'[]'") { "X'\(Data($0.utf8).map { String(format: "%02X", $0) }.joined())'" })
        }
        try queue.close()

        let store = try SQLiteStore(path: path, configuration: fastConfiguration)
        try await ChangeEventMigration.expectFeedKept(store)
        _ = try await store.apply(Sample.flight())
        #expect(try await store.latestChangePosition() == 4)
        try store.closeNow()
        let indexes = try Self.read(path) {
            try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'change_event' ORDER BY name")
        }
        #expect(indexes == ["change_event_by_domain", "change_event_by_owner"])
    }

    @Test func statusWithoutMigratingReportsWhatIsPending() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.databasePath
        let queue = try Self.database(at: path, migratedUpTo: "v2")
        try queue.close()

        var configuration = fastConfiguration
        configuration.migrateOnOpen = false
        let store = try SQLiteStore(path: path, configuration: configuration)
        let before = try await store.status()
        #expect(before.schemaVersion == "v2")
        let later = Array(StoreSchema.versions.drop { $0 != "v3" })
        #expect(before.pendingMigrations == later)
        #expect(before.counts.isEmpty)
        #expect(try await store.migrate() == later)
        #expect(try await store.migrate() == [])
        let after = try await store.status()
        #expect(after.schemaVersion == StoreSchema.current && after.pendingMigrations.isEmpty)
        #expect(after.counts[.reservations] == 0)
        try store.closeNow()
    }

    @Test func aStoreInMemoryWritesNoFile() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(inMemory: fastConfiguration)
        #expect(try await store.registeredDomains(status: nil).isEmpty)
        _ = try await store.apply(Sample.flight())
        #expect(try await store.list(owner: Sample.owner).count == 1)
        try store.closeNow()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func databaseFromANewerGatewayIsRefused() async throws {
        let directory = try TemporaryDirectory()
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).closeNow()
        try Self.execute(directory.databasePath, "INSERT INTO grdb_migrations (identifier) VALUES ('v999')")
        let code = await storeErrorCode {
            _ = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        }
        #expect(code == .schemaTooNew)
    }

    @Test func anotherApplicationsDatabaseIsRefusedAndLeftAlone() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/other.sqlite"
        try Self.execute(path, "CREATE TABLE notes (body TEXT)")
        let code = await storeErrorCode { _ = try SQLiteStore(path: path, configuration: fastConfiguration) }
        #expect(code == .foreignDatabase)
        let tables = try Self.read(path) {
            try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(tables == ["notes"])
    }

    @Test func aFileThatIsNotADatabaseIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/garbage.sqlite"
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        let code = await storeErrorCode { _ = try SQLiteStore(path: path, configuration: fastConfiguration) }
        #expect(code == .openFailed)
    }

    @Test func anUnusablePathIsRefused() async throws {
        #expect(await storeErrorCode { _ = try SQLiteStore(path: "") } == .openFailed)
        let directory = try TemporaryDirectory()
        let blocker = directory.path + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        #expect(await storeErrorCode { _ = try SQLiteStore(path: blocker + "/store.sqlite") } == .openFailed)
    }

    @Test func storesCreatingTheSameFileAtOnceAllOpen() throws {
        // The later ones find the tables the first created, or a migration another one ran after they read what was
        // applied; each must retry against what is on disk, not fail. More openers than cores, on threads.
        let openers = 6
        for _ in 0..<12 {
            let directory = try TemporaryDirectory()
            let path = directory.databasePath
            let failures = Self.failures(onThreads: openers) {
                try SQLiteStore(path: path, configuration: fastConfiguration).closeNow()
            }
            #expect(failures == [])
            #expect(try Self.appliedMigrations(path) == SQLiteStore.knownMigrations)
        }
    }

    @Test func openersRacingThroughSlowMigrationsAllFinish() throws {
        // The openers take turns at the write lock between migrations, so most run a migration another has just
        // applied (GRDB reads what is applied once, before the first). The retrying keeps going while the others
        // make progress: every opener ends on a fully migrated file.
        let identifiers = (1...16).map { "m\($0)" }
        var registering = DatabaseMigrator()
        for (index, identifier) in identifiers.enumerated() {
            registering.registerMigration(identifier) { db in
                if index == 0 { try db.execute(sql: "PRAGMA application_id = \(SQLiteStore.applicationID)") }
                try db.execute(sql: "CREATE TABLE t\(index) (x INTEGER)")
                // A while inside the lock, while the others read what is applied, and a pause after the commit,
                // when the lock is free and they take turns, each with what it read before.
                Thread.sleep(forTimeInterval: 0.005)
                db.afterNextTransaction { _ in Thread.sleep(forTimeInterval: 0.005) }
            }
        }
        let migrator = registering
        let directory = try TemporaryDirectory()
        let path = directory.path + "/race.sqlite"
        let failures = Self.failures(onThreads: 6) {
            var configuration = GRDB.Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try SQLiteStore.prepareSchema(queue, path: path, migrate: true, migrator: migrator)
        }
        #expect(failures == [])
        #expect(try Self.appliedMigrations(path) == identifiers)
    }

    @Test func aMigrationThatFailsOnItsOwnIsReportedAndTheFileKeepsItsVersion() async throws {
        // No other opener makes progress beside this failure: it is reported (after one retry), not retried forever.
        var migrator = DatabaseMigrator()
        migrator.registerMigration("m1") { db in
            try db.execute(sql: "PRAGMA application_id = \(SQLiteStore.applicationID)")
            try db.execute(sql: "CREATE TABLE t1 (x INTEGER)")
        }
        migrator.registerMigration("m2") { db in try db.execute(sql: "ALTER TABLE t1 RENAME COLUMN nowhere TO y") }
        let directory = try TemporaryDirectory()
        let path = directory.path + "/failing.sqlite"
        let queue = try DatabaseQueue(path: path)
        let code = await storeErrorCode {
            try SQLiteStore.prepareSchema(queue, path: path, migrate: true, migrator: migrator)
        }
        #expect(code == .migrationFailed)
        #expect(try Self.appliedMigrations(path) == ["m1"])
    }

    @Test func aClosedStoreThrowsInsteadOfCrashing() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        try store.closeNow()
        try await store.close()
        #expect(await storeErrorCode { _ = try await store.apply(Sample.flight()) } == .io)
        #expect(await storeErrorCode { _ = try await store.list(owner: Sample.owner) } == .io)
    }

    /// The schema as SQLite keeps it, to compare before and after reopening.
    static func schema(at path: String) throws -> [String] {
        try read(path) {
            try String.fetchAll($0, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        }
    }

    /// A database file at `path` (its folder made) with the store's migrations applied up to `version` only, as an
    /// older gateway left it, opened with GRDB directly for a test to write rows in that version's shape.
    static func database(at path: String, migratedUpTo version: String) throws -> DatabaseQueue {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: version)
        return queue
    }

    /// Reads the file with GRDB directly, outside the store.
    static func read<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.inDatabase(body)
    }

    /// The migrations GRDB recorded as applied in the file, in the order applied.
    static func appliedMigrations(_ path: String) throws -> [String] {
        try read(path) { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }
    }

    /// Runs `open` on `count` threads released together (threads, not tasks: the cooperative pool runs no more tasks
    /// at once than there are cores), and returns the errors they threw.
    static func failures(onThreads count: Int, _ open: @escaping @Sendable () throws -> Void) -> [String] {
        let failures = Mutex<[String]>([])
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for _ in 0..<count {
            done.enter()
            Thread.detachNewThread {
                start.wait()
                do {
                    try open()
                } catch {
                    failures.withLock { $0.append(String(describing: error)) }
                }
                done.leave()
            }
        }
        for _ in 0..<count { start.signal() }
        done.wait()
        return failures.withLock { $0 }
    }

    /// Writes the file with GRDB directly, outside the store.
    static func execute(_ path: String, _ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.inDatabase { try $0.execute(sql: sql) }
    }
}
