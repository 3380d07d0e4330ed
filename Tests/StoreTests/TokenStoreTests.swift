import Foundation
import GRDB
import Store
import Testing

@Suite("Access tokens")
struct TokenStoreTests {
    static let hashA = String(repeating: "a1", count: 32)
    static let hashB = String(repeating: "0f", count: 32)

    @Test func anIssuedTokenIsFoundByItsHashUntilRevoked() async throws {
        let clock = TestClock()
        try await withStore(clock: clock) { store, _ in
            #expect(try await store.token(secretHash: Self.hashA) == nil)
            let issued = try await store.addToken(
                role: .sender, subject: "airline.example", label: "postfix", secretHash: Self.hashA, by: "alice")
            #expect(issued.role == .sender && issued.subject == "airline.example" && issued.createdAt == clock.now)
            #expect(try await store.token(secretHash: Self.hashA) == issued)
            #expect(try await store.token(secretHash: Self.hashB) == nil)

            clock.advance(by: 60)
            #expect(try await store.revokeToken(id: issued.id))
            #expect(try await store.revokeToken(id: issued.id) == false)
            #expect(try await store.token(secretHash: Self.hashA) == nil)
            let listed = try await store.tokens(role: nil)
            #expect(listed.count == 1 && listed.first?.revokedAt == clock.now)
        }
    }

    @Test func tokensListByRoleOldestFirst() async throws {
        try await withStore { store, _ in
            let admin = try await store.addToken(role: .admin, subject: "", label: "first start", secretHash: Self.hashA, by: "gateway")
            let owner = try await store.addToken(
                role: .owner, subject: "ada@example.org", label: "", secretHash: Self.hashB, by: "alice")
            #expect(try await store.tokens(role: .admin) == [admin])
            #expect(try await store.tokens(role: .owner) == [owner])
            #expect(try await store.tokens(role: nil) == [admin, owner])
            #expect(try await store.tokens(role: .sender).isEmpty)
        }
    }

    @Test(arguments: ["", "abc", String(repeating: "A1", count: 32), String(repeating: "g", count: 64)])
    func aMalformedHashIsRefused(_ hash: String) async throws {
        try await withStore { store, _ in
            #expect(
                await storeErrorCode {
                    _ = try await store.addToken(role: .admin, subject: "", label: "", secretHash: hash, by: "alice")
                } == .invalidArgument)
        }
    }

    @Test func theSameSecretCannotBeStoredTwice() async throws {
        try await withStore { store, _ in
            _ = try await store.addToken(role: .admin, subject: "", label: "", secretHash: Self.hashA, by: "alice")
            #expect(
                await storeErrorCode {
                    _ = try await store.addToken(role: .owner, subject: "x@y.example", label: "", secretHash: Self.hashA, by: "bob")
                } == .invalidArgument)
        }
    }

    @Test func aVersionOneDatabaseIsMigratedAndKeepsItsData() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.databasePath
        // A store written before tokens existed: only the v1 migration applied, one domain registered.
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(queue, upTo: "v1")
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by)
                    VALUES ('airline.example', 'approved', NULL, 0, 0, 'alice')
                    """)
        }
        try queue.close()

        let store = try SQLiteStore(path: path, configuration: fastConfiguration)
        #expect(try await store.registeredDomain("airline.example")?.status == .approved)
        _ = try await store.addToken(role: .admin, subject: "", label: "", secretHash: Self.hashA, by: "alice")
        try store.close()
        let applied = try await DatabaseQueue(path: path).read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations") }
        #expect(applied == SQLiteStore.knownMigrations)
    }
}
