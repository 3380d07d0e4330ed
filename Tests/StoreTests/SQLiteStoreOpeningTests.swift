import Foundation
import GRDB
import Store
import Testing

@Suite("Opening and migrating the SQLite store")
struct SQLiteStoreOpeningTests {
    @Test func createsParentDirectoriesAPrivateFileAndUsesWAL() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        _ = try await store.apply(Sample.flight())
        try store.close()

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
                    contentHash: "sha256:00", verdict: .admitted))
            _ = try await store.setDomain(Sample.domain, status: .approved, contact: nil, by: "ops")
            _ = try await store.setFlag("allow-any-domain", enabled: true, expiresAt: nil, by: "ops")
            _ = try await store.spool(
                Data("raw".utf8), channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror",
                nextAttemptAt: clock.now)
            try store.close()
        }
        let reopened = try SQLiteStore(
            path: directory.databasePath, configuration: fastConfiguration, now: clock.source)
        let record = try #require(try await reopened.list(owner: Sample.owner).first)
        #expect(record.version == 2)
        #expect(try await reopened.history(of: record.id).count == 2)
        #expect(try await reopened.entries(domain: nil, since: nil, afterID: nil, limit: 10).count == 1)
        #expect(try await reopened.registeredDomain(Sample.domain)?.status == .approved)
        #expect(try await reopened.flag("allow-any-domain")?.enabled == true)
        #expect(try await reopened.spooledMessages(dueBy: nil, limit: 10).count == 1)
        #expect(try await reopened.apply(Sample.flight(gate: "B2")) == .unchanged)
        try reopened.close()
    }

    @Test func reopeningDoesNotMigrateAgain() async throws {
        let directory = try TemporaryDirectory()
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).close()
        let schemaBefore = try Self.schema(at: directory.databasePath)
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).close()
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).close()
        #expect(try Self.schema(at: directory.databasePath) == schemaBefore)
        let applied = try Self.read(directory.databasePath) {
            try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations")
        }
        #expect(applied == SQLiteStore.knownMigrations)
        #expect(SQLiteStore.knownMigrations.first == "v1")
    }

    @Test func databaseFromANewerGatewayIsRefused() async throws {
        let directory = try TemporaryDirectory()
        try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration).close()
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

    @Test func storesCreatingTheSameFileAtOnceAllOpen() async throws {
        // The later ones find the tables the first created; each must retry against what is on disk, not fail.
        for _ in 0..<10 {
            let directory = try TemporaryDirectory()
            let path = directory.databasePath
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask { try SQLiteStore(path: path, configuration: fastConfiguration).close() }
                }
                try await group.waitForAll()
            }
            #expect(
                try Self.read(path) { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") } == SQLiteStore.knownMigrations
            )
        }
    }

    @Test func aClosedStoreThrowsInsteadOfCrashing() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        try store.close()
        try store.close()
        #expect(await storeErrorCode { _ = try await store.apply(Sample.flight()) } == .io)
        #expect(await storeErrorCode { _ = try await store.list(owner: Sample.owner) } == .io)
    }

    /// The schema as SQLite keeps it, to compare before and after reopening.
    static func schema(at path: String) throws -> [String] {
        try read(path) {
            try String.fetchAll($0, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        }
    }

    /// Reads the file with GRDB directly, outside the store.
    static func read<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.inDatabase(body)
    }

    /// Writes the file with GRDB directly, outside the store.
    static func execute(_ path: String, _ sql: String) throws {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        try queue.inDatabase { try $0.execute(sql: sql) }
    }
}
