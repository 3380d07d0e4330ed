import Foundation
import Store
import Testing

@Suite("Store conformance: access tokens, on every backend")
struct TokenStoreTests {
    static let hashA = String(repeating: "a1", count: 32)
    static let hashB = String(repeating: "0f", count: 32)

    @Test(arguments: StoreBackend.all) func anIssuedTokenIsFoundByItsHashUntilRevoked(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
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

    @Test(arguments: StoreBackend.all) func tokensListByRoleOldestFirst(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let admin = try await store.addToken(role: .admin, subject: "", label: "first start", secretHash: Self.hashA, by: "gateway")
            let owner = try await store.addToken(
                role: .owner, subject: "ada@example.org", label: "", secretHash: Self.hashB, by: "alice")
            #expect(try await store.tokens(role: .admin) == [admin])
            #expect(try await store.tokens(role: .owner) == [owner])
            #expect(try await store.tokens(role: nil) == [admin, owner])
            #expect(try await store.tokens(role: .sender).isEmpty)
        }
    }

    @Test(
        arguments: StoreBackend.all,
        ["", "abc", String(repeating: "A1", count: 32), String(repeating: "g", count: 64)])
    func aMalformedHashIsRefused(backend: StoreBackend, _ hash: String) async throws {
        try await withStore(backend) { store in
            #expect(
                await storeErrorCode {
                    _ = try await store.addToken(role: .admin, subject: "", label: "", secretHash: hash, by: "alice")
                } == .invalidArgument)
        }
    }

    @Test(arguments: StoreBackend.all) func theSameSecretCannotBeStoredTwice(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.addToken(role: .admin, subject: "", label: "", secretHash: Self.hashA, by: "alice")
            #expect(
                await storeErrorCode {
                    _ = try await store.addToken(role: .owner, subject: "x@y.example", label: "", secretHash: Self.hashA, by: "bob")
                } == .invalidArgument)
        }
    }
}
