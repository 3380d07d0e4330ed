import Admission
import Foundation
import InMemoryStore
import Store
import Synchronization
import Testing

/// The registry's and the flags' rules over the in-memory store (the same store plans as the database backends, which
/// the store's conformance suite proves): no database needed to test admission's own decisions.
@Suite("The registry and the developer flags over a store")
struct RegistryAndFlagsTests {
    static func policy(approveOnRegister: Bool = true, mayEnable: Bool = true) -> Policy {
        var policy = Policy()
        policy.name = "test"
        policy.registration.approveOnRegister = approveOnRegister
        policy.flags.mayEnable = mayEnable
        return policy
    }

    @Test func aRegistrationCoversItsSubdomainsAndKeepsItsStatus() async throws {
        let store = InMemoryStore()
        let registry = DomainRegistry(store: store, policy: Self.policy(approveOnRegister: false), publicSuffixes: try PublicSuffixList())
        let registered = try await registry.register("Airline.Example.", contact: "ops@airline.example", by: "alice")
        #expect(registered.isNew && registered.domain.domain == "airline.example" && registered.domain.status == .pending)
        #expect(try await registry.approve("airline.example", by: "bob").status == .approved)
        // Registering again keeps the approval.
        let again = try await registry.register("airline.example", contact: nil, by: "carol")
        #expect(!again.isNew && again.domain.status == .approved)
        let covering = try await registry.entry(covering: try DomainName(normalizing: "mail.airline.example"))
        #expect(covering?.domain == "airline.example")
        #expect(try await registry.entry(covering: try DomainName(normalizing: "airline.example.net")) == nil)
        #expect(try await store.domainChanges(domain: "airline.example", limit: 10).map(\.changedBy) == ["alice", "bob"])
    }

    @Test func aFlagIsActiveUntilItExpiresAndNeverUnderALockedPolicy() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_767_225_600))
        let now: @Sendable () -> Date = { clock.withLock { $0 } }
        let store = InMemoryStore(now: now)
        let flags = FlagController(store: store, policy: Self.policy(), now: now)
        _ = try await flags.set(.allowAnyDomain, enabled: true, for: 60, by: "dev")
        #expect(try await flags.active().contains(.allowAnyDomain))
        clock.withLock { $0 = $0.addingTimeInterval(61) }
        #expect(try await !flags.active().contains(.allowAnyDomain))
        #expect(try await flags.statuses().first { $0.name == "allow-any-domain" }?.expired == true)

        _ = try await flags.set(.allowUnverifiedSources, enabled: true, for: nil, by: "dev")
        let locked = FlagController(store: store, policy: Self.policy(mayEnable: false), now: now)
        #expect(try await locked.active() == ActiveFlags())
        await #expect(throws: AdmissionError.self) { try await locked.set(.allowAnyDomain, enabled: true, for: 60, by: "x") }
    }
}
