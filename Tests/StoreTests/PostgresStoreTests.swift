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
            #expect(applied.filter { !$0.isEmpty } == [PostgresStore.migrations.map(\.identifier)])
            let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
            #expect(
                try await server.psql("SELECT identifier FROM gateway_migration ORDER BY identifier", database: name)
                    == PostgresStore.migrations.map { $0.identifier + "\n" }.joined())
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
}
