import Foundation
import GRDB
@testable import SQLiteStore
import Store
import Testing

/// Commits wait for the disk by default, on the writer connection itself.
@Suite("SQLite: durability of commits")
struct SQLiteDurabilityTests {
    static func durableStore(_ directory: TemporaryDirectory) throws -> SQLiteStore {
        var configuration = SQLiteStore.Configuration()
        configuration.durability = .full
        return try SQLiteStore(path: directory.databasePath, configuration: configuration)
    }

    static func writerSynchronous(_ store: SQLiteStore) async throws -> Int? {
        try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
    }

    /// GRDB's pool sets NORMAL on its writer when it switches the file to WAL, after the connection's own set-up:
    /// a durable store sets FULL again there.
    @Test func theWriterOfADurableStoreCommitsAtFull() async throws {
        let directory = try TemporaryDirectory()
        let durable = try SQLiteStore(path: directory.databasePath)
        #expect(try await Self.writerSynchronous(durable) == 2)
        #expect(try await durable.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        try durable.closeNow()
        let relaxed = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        #expect(try await Self.writerSynchronous(relaxed) == 1)
        try relaxed.closeNow()
    }
}
