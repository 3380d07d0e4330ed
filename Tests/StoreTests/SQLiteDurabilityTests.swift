import Foundation
import GRDB
@testable import SQLiteStore
import Store
import Testing

/// Commits wait for the disk by default, on the writer connection itself; the dispatcher's redoable bookkeeping
/// commits without waiting, and only it: the writer is back at `synchronous=FULL` for the next write, whether the
/// bookkeeping committed or failed.
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

    @Test func bookkeepingCommitsAtNormalAndTheWriterReturnsToFull() async throws {
        let directory = try TemporaryDirectory()
        let store = try Self.durableStore(directory)
        #expect(try await Self.writerSynchronous(store) == 2)
        let during = try await store.writingBookkeeping("test") { db in
            try db.execute(sql: "CREATE TABLE note (text TEXT)")
            try db.execute(sql: "INSERT INTO note VALUES ('kept')")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        #expect(during == 1)
        #expect(try await Self.writerSynchronous(store) == 2)
        #expect(try await store.pool.read { db in try String.fetchAll(db, sql: "SELECT text FROM note") } == ["kept"])

        // A failing body rolls back, its error comes through (as the store's errors do), and the writer is back at
        // FULL all the same.
        struct Refused: Error {}
        await #expect(throws: StoreError.self) {
            try await store.writingBookkeeping("test") { db in
                try db.execute(sql: "INSERT INTO note VALUES ('dropped')")
                throw Refused()
            }
        }
        #expect(try await Self.writerSynchronous(store) == 2)
        #expect(try await store.pool.read { db in try String.fetchAll(db, sql: "SELECT text FROM note") } == ["kept"])

        // The dispatcher's write goes through it: what it records is there, and the writer stays durable.
        let hook = try await store.addWebhook(
            url: "https://hooks.example/", owner: nil, domain: nil, types: [], secret: WebhookStoreTests.secret, by: "test")
        _ = try await store.apply(Sample.flight(item: "A"))
        #expect(try await store.queueDeliveries(limit: 10) == 1)
        #expect(try await store.deliveries(webhookID: hook.id, state: .pending, limit: 10).count == 1)
        #expect(try await Self.writerSynchronous(store) == 2)
        try store.closeNow()
    }

    @Test func withNormalDurabilityBookkeepingIsAnOrdinaryWrite() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.databasePath, configuration: fastConfiguration)
        let during = try await store.writingBookkeeping("test") { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(during == 1)
        #expect(try await Self.writerSynchronous(store) == 1)
        try store.closeNow()
    }
}
