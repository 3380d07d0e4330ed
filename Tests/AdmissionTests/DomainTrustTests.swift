import Admission
import DNS
import Foundation
import InMemoryStore
import Markup
import Reservations
import Store
import Synchronization
import TestSupport
import Testing

/// A registration's life (issue 15): the rules alone, then the registry over a store and a resolver, then what the
/// admission decision makes of each state under the production and development policies.
@Suite("Proof of domain control, domain states and test mode")
struct DomainTrustTests {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)
    static let eva = OwnerAddress("eva@guest.example.net")!
    static let tom = OwnerAddress("tom@guest.example.net")!

    static func policy(_ name: String) throws -> Policy {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try Policy.load(name, searchPaths: [repository.appendingPathComponent("policies").path]).0
    }

    static func registration(_ status: RegisteredDomain.Status, verified: Bool = true) -> RegisteredDomain {
        RegisteredDomain(
            domain: "skyways.example", status: status, contact: nil, createdAt: start, updatedAt: start, updatedBy: "t",
            trust: .init(challenge: "tok", verifiedAt: verified ? start : nil))
    }

    static func check(_ result: RegisteredDomain.DomainCheck.Result, _ code: String? = nil) -> RegisteredDomain.DomainCheck {
        .init(at: start, result: result, nameserver: "127.0.0.1:53", code: code)
    }

    // MARK: - The rules

    @Test func aFoundRecordVerifiesAPendingDomainAndAMissingOneLeavesItPending() throws {
        let production = try Self.policy("production")
        let pending = Self.registration(.pending, verified: false)
        let missing = try #require(DomainLifecycle.record(Self.check(.missing, "dns.nxdomain"), on: pending, policy: production))
        #expect(missing.registration.status == .pending)
        #expect(missing.registration.trust.missingChecks == 0)
        #expect(!missing.recordsChange)
        let found = try #require(DomainLifecycle.record(Self.check(.found), on: pending, policy: production))
        #expect(found.registration.status == .verified)
        #expect(found.registration.trust.verifiedAt == Self.start)
        #expect(found.registration.trust.lastCheck?.nameserver == "127.0.0.1:53")
        #expect(found.recordsChange)
    }

    @Test func missingForNChecksSuspendsAFailureNeverCountsAndFindingItLiftsTheSuspension() throws {
        var policy = try Self.policy("production")
        policy.verification.missingChecksBeforeSuspension = 3
        var entry = Self.registration(.approved)
        for expected in 1...2 {
            entry = try #require(DomainLifecycle.record(Self.check(.missing, "dns.nxdomain"), on: entry, policy: policy)).registration
            #expect(entry.status == .approved)
            #expect(entry.trust.missingChecks == expected)
        }
        // A DNS timeout is never "record gone".
        for _ in 0..<5 {
            entry = try #require(DomainLifecycle.record(Self.check(.failed, "dns.timeout"), on: entry, policy: policy)).registration
        }
        #expect(entry.status == .approved)
        #expect(entry.trust.missingChecks == 2)
        let suspension = try #require(DomainLifecycle.record(Self.check(.missing, "dns.nodata"), on: entry, policy: policy))
        #expect(suspension.registration.status == .suspended)
        #expect(suspension.registration.trust.suspension?.cause == .proofMissing)
        #expect(suspension.registration.trust.suspension?.previousStatus == .approved)
        #expect(suspension.recordsChange)
        #expect(suspension.reason?.contains("3 checks in a row") == true)
        let lifted = try #require(DomainLifecycle.record(Self.check(.found), on: suspension.registration, policy: policy))
        #expect(lifted.registration.status == .approved)
        #expect(lifted.registration.trust.suspension == nil)
        #expect(lifted.registration.trust.missingChecks == 0)
        #expect(lifted.recordsChange)
    }

    @Test func anOperatorsSuspensionIsNotLiftedByACheck() throws {
        let production = try Self.policy("production")
        let revoked = try #require(try DomainLifecycle.revoke(Self.registration(.approved), name: "skyways.example", actor: "ops"))
        #expect(revoked.registration.status == .suspended)
        #expect(revoked.registration.trust.suspension?.cause == .operator)
        let checked = try #require(DomainLifecycle.record(Self.check(.found), on: revoked.registration, policy: production))
        #expect(checked.registration.status == .suspended)
        // An operator lifts it by approving again.
        let approved = try #require(try DomainLifecycle.approve(checked.registration, name: "skyways.example", policy: production))
        #expect(approved.registration.status == .approved)
        #expect(approved.registration.trust.suspension == nil)
    }

    @Test func productionApprovesOnlyAProvedDomainDevelopmentAnyRegisteredOne() throws {
        let production = try Self.policy("production")
        let development = try Self.policy("development")
        #expect(production.registration.requireProof && !production.registration.approveOnRegister)
        #expect(throws: AdmissionError.self) {
            try DomainLifecycle.approve(Self.registration(.pending, verified: false), name: "skyways.example", policy: production)
        }
        do {
            _ = try DomainLifecycle.approve(Self.registration(.pending, verified: false), name: "skyways.example", policy: production)
        } catch {
            #expect(error.code == .domainNotVerified)
        }
        var testing = Self.registration(.verified)
        testing.trust.testMode = .init(owners: [Self.eva], until: Self.start.addingTimeInterval(60), setBy: "qa")
        let approved = try DomainLifecycle.approve(testing, name: "skyways.example", policy: production)?.registration
        #expect(approved?.status == .approved)
        #expect(approved?.trust.testMode == nil)
        #expect(try DomainLifecycle.approve(Self.registration(.pending, verified: false), name: "skyways.example", policy: development)?.registration.status == .approved)
        #expect(throws: AdmissionError.self) {
            try DomainLifecycle.approve(nil, name: "skyways.example", policy: development)
        }
    }

    @Test func aPolicyCannotBothApproveOnRegistrationAndRequireProof() {
        #expect(throws: AdmissionError.self) {
            try Policy(yaml: "registration: {approveOnRegister: true, requireProof: true}", source: "bad.yaml")
        }
        #expect(throws: AdmissionError.self) {
            try Policy(yaml: "quotas: {owner: {messages: {limit: -1, seconds: 60}}}", source: "bad.yaml")
        }
    }

    // MARK: - The registry over a store and a resolver

    @Test func verifyRecordsTheCheckWithItsTimeAndWhoAnswered() async throws {
        let clock = Mutex(Self.start)
        let store = InMemoryStore(now: { clock.withLock { $0 } })
        let registry = DomainRegistry(store: store, policy: try Self.policy("production"), publicSuffixes: try PublicSuffixList())
        let (registered, isNew) = try await registry.register("SkyWays.Example", contact: nil, by: "alice")
        #expect(isNew && registered.status == .pending)
        let challenge = try #require(registered.trust.challenge)
        #expect(challenge.count == 43)
        #expect(
            ChallengeRecord(registered)?.zoneLine
                == "_gateway-challenge.skyways.example. IN TXT \"gateway-verification=\(challenge)\"")

        let resolver = try ZoneFileResolver(zoneText: "")
        let missing = try await registry.verify("skyways.example", resolver: resolver, by: "alice")
        #expect(missing.check.result == .missing)
        #expect(missing.check.code == "dns.nxdomain")
        #expect(missing.check.nameserver == "zone text")
        #expect(missing.domain.status == .pending)
        await #expect(throws: AdmissionError.self) { try await registry.approve("skyways.example", by: "ops") }

        clock.withLock { $0 = $0.addingTimeInterval(60) }
        let published = try ZoneFileResolver(
            zoneText: "_gateway-challenge.skyways.example. IN TXT \"gateway-verification=\(challenge)\"\n")
        let found = try await registry.verify("skyways.example", resolver: published, by: "alice")
        #expect(found.check.result == .found)
        #expect(found.check.at == Self.start.addingTimeInterval(60))
        #expect(found.domain.status == .verified)
        #expect(found.domain.trust.verifiedAt == Self.start.addingTimeInterval(60))
        #expect(try await registry.approve("skyways.example", by: "ops").status == .approved)

        // Another token in the record is no proof; a SERVFAIL is no answer.
        let wrong = try ZoneFileResolver(
            zoneText: "_gateway-challenge.skyways.example. IN TXT \"gateway-verification=someone-else\"\n")
        #expect(try await registry.verify("skyways.example", resolver: wrong, by: "cron").check.result == .missing)
        let failing = InMemoryResolver()
        failing.set("_gateway-challenge.skyways.example", errorCode: .serverFailure)
        let failed = try await registry.verify("skyways.example", resolver: failing, by: "cron")
        #expect(failed.check.result == .failed)
        #expect(failed.domain.trust.missingChecks == 1)
        #expect(
            try await store.domainChanges(domain: "skyways.example", limit: 10).map(\.status) == [
                .pending, .verified, .approved,
            ])
    }

    @Test func selfServiceRegistrationIsPendingAndRefusesATakenDomain() async throws {
        let store = InMemoryStore()
        let registry = DomainRegistry(store: store, policy: try Self.policy("test"), publicSuffixes: try PublicSuffixList())
        let (own, _) = try await registry.register("new.example", contact: nil, by: "api:self-service", selfService: true)
        #expect(own.status == .pending)  // the test policy approves on registration, but not a self-service one
        await #expect(throws: AdmissionError.self) {
            _ = try await registry.register("new.example", contact: nil, by: "api:self-service", selfService: true)
        }
        let (admin, _) = try await registry.register("other.example", contact: nil, by: "admin")
        #expect(admin.status == .approved)
    }

    @Test func testModeNeedsAProofAPolicyDurationAndOwners() async throws {
        let store = InMemoryStore()
        let registry = DomainRegistry(store: store, policy: try Self.policy("production"), publicSuffixes: try PublicSuffixList())
        _ = try await registry.register("skyways.example", contact: nil, by: "alice")
        await #expect(throws: AdmissionError.self) {
            _ = try await registry.setTestMode("skyways.example", owners: [Self.eva], for: 3600, by: "alice")
        }
        _ = try await store.updateDomain("skyways.example", by: "test") { current, now in
            var entry = try #require(current)
            entry.status = .verified
            entry.trust.verifiedAt = now
            return DomainUpdate(registration: entry, recordsChange: true)
        }
        for (owners, duration) in [([Self.eva], 8 * 86_400.0), ([], 3600), (Array(repeating: Self.eva, count: 1), 0)] {
            await #expect(throws: AdmissionError.self) {
                _ = try await registry.setTestMode("skyways.example", owners: owners, for: duration, by: "alice")
            }
        }
        let on = try await registry.setTestMode("skyways.example", owners: [Self.eva, Self.eva], for: 3600, by: "alice")
        #expect(on.trust.testMode?.owners == [Self.eva])
        let off = try await registry.setTestMode("skyways.example", owners: nil, for: nil, by: "alice")
        #expect(off.trust.testMode == nil)
    }

    // MARK: - What admission makes of each state

    static func resolution() -> Resolution {
        var reservation = Reservation(kind: .event)
        reservation.reservationId = "E7T-40291"
        reservation.name = "Nordic Strings"
        return Resolution(
            reservation: reservation, diagnostics: [],
            normalized: .object([
                "@type": .string("EventReservation"), "reservationId": .string("E7T-40291"),
                "url": .string("http://skyways.example/e"),
            ]), syntax: .jsonLD)
    }

    static func decide(
        _ registration: RegisteredDomain?, policy: Policy, owners: [OwnerAddress] = [eva], now: Date = start
    ) -> AdmissionDecision {
        AdmissionDecision(
            source: .web(host: DomainName(trustedASCII: "skyways.example"), finalURL: "https://skyways.example/e", verified: true),
            resolutions: [resolution()], owners: owners, registration: registration, flags: ActiveFlags(), policy: policy,
            now: now, sourceDescription: "https://skyways.example/e")
    }

    @Test func productionAdmitsOnlyApprovedDomainsWithACodePerState() throws {
        let production = try Self.policy("production")
        let cases: [(RegisteredDomain?, String?)] = [
            (nil, "registry.domain-not-registered"),
            (Self.registration(.pending, verified: false), "registry.domain-not-verified"),
            (Self.registration(.verified), "registry.domain-not-approved"),
            (Self.registration(.suspended), "registry.domain-suspended"),
            (Self.registration(.approved), nil),
        ]
        for (registration, code) in cases {
            let decision = Self.decide(registration, policy: production)
            #expect(decision.codes == (code.map { [$0] } ?? []), "\(registration?.status.rawValue ?? "none")")
            #expect(decision.verdict == (code == nil ? .admitted : .rejected))
            #expect(decision.marks.isEmpty)
        }
        // The admitted item lost its http link, with the warning on the item, in its stored payload and for the log.
        let admitted = try #require(Self.decide(Self.registration(.approved), policy: production).items.first?.admitted.first)
        #expect(admitted.warnings == ["markup.url-not-https"])
        #expect(String(decoding: admitted.content.payload, as: UTF8.self).contains(#""warnings":[{"code":"markup.url-not-https","path":"url"}]"#))
        #expect(!String(decoding: admitted.content.payload, as: UTF8.self).contains("http://skyways.example/e"))
    }

    @Test func developmentAdmitsPendingAndVerifiedDomainsAndSaysSo() throws {
        let development = try Self.policy("development")
        for status in [RegisteredDomain.Status.pending, .verified] {
            let decision = Self.decide(Self.registration(status, verified: status == .verified), policy: development)
            #expect(decision.verdict == .admitted)
            #expect(decision.marks == ["unapproved-domain"])
            #expect(decision.items.first?.admitted.first?.content.flags == ["unapproved-domain"])
            #expect(decision.items.first?.admitted.first?.sourceDomain == "skyways.example")
        }
        #expect(Self.decide(Self.registration(.suspended), policy: development).codes == ["registry.domain-suspended"])
    }

    @Test func testModeAdmitsForItsListedOwnersOnlyUntilItEnds() throws {
        let production = try Self.policy("production")
        var entry = Self.registration(.verified)
        entry.trust.testMode = .init(owners: [Self.eva], until: Self.start.addingTimeInterval(600), setBy: "qa")

        let listed = Self.decide(entry, policy: production, owners: [Self.eva])
        #expect(listed.verdict == .admitted)
        #expect(listed.marks == ["test-mode"])
        #expect(listed.items.first?.admitted.map(\.owner) == [Self.eva])
        #expect(listed.items.first?.admitted.first?.content.flags == ["test-mode"])

        let other = Self.decide(entry, policy: production, owners: [Self.tom])
        #expect(other.verdict == .rejected)
        #expect(other.codes == ["registry.test-mode-owner-not-listed"])
        #expect(other.marks.isEmpty)
        #expect(Self.decide(entry, policy: production, owners: [Self.eva, Self.tom]).codes == ["registry.test-mode-owner-not-listed"])

        let expired = Self.decide(entry, policy: production, owners: [Self.eva], now: Self.start.addingTimeInterval(601))
        #expect(expired.codes == ["registry.domain-not-approved"])
    }
}
