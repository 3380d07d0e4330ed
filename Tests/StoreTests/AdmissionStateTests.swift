import Foundation
import Store
import Testing

@Suite("Store conformance: the domain registry, developer flags and message spool, on every backend")
struct AdmissionStateTests {
    @Test(arguments: StoreBackend.all) func registryStatusChangesKeepCreationAndRecordWho(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            #expect(try await store.registeredDomain("airline.example") == nil)
            let created = clock.now
            let pending = try await store.setDomain(
                "Airline.Example.", status: .pending, contact: "ops@airline.example", by: "alice")
            #expect(
                pending
                    == RegisteredDomain(
                        domain: "airline.example", status: .pending, contact: "ops@airline.example", createdAt: created,
                        updatedAt: created, updatedBy: "alice"))

            clock.advance(by: 3600)
            let approved = try await store.setDomain("airline.example", status: .approved, contact: nil, by: "bob")
            #expect(approved.status == .approved)
            #expect(approved.contact == "ops@airline.example")
            #expect(approved.createdAt == created)
            #expect(approved.updatedAt == clock.now)
            #expect(approved.updatedBy == "bob")
            #expect(try await store.registeredDomain("AIRLINE.EXAMPLE") == approved)

            clock.advance(by: 3600)
            _ = try await store.setDomain("hotel.example", status: .approved, contact: nil, by: "bob")
            _ = try await store.setDomain(
                "airline.example", status: .suspended, contact: "abuse@airline.example", by: "carol")
            #expect(try await store.registeredDomains(status: .approved).map(\.domain) == ["hotel.example"])
            #expect(try await store.registeredDomains(status: .suspended).map(\.contact) == ["abuse@airline.example"])
            #expect(
                try await store.registeredDomains(status: nil).map(\.domain) == ["airline.example", "hotel.example"])
            #expect(try await store.registeredDomains(status: .pending).isEmpty)

            let changes = try await store.domainChanges(domain: "airline.example", limit: 10)
            #expect(changes.map(\.status) == [.pending, .approved, .suspended])
            #expect(changes.map(\.changedBy) == ["alice", "bob", "carol"])
            #expect(
                try await store.domainChanges(domain: nil, limit: 2).map(\.domain) == [
                    "hotel.example", "airline.example",
                ])

            #expect(
                await storeErrorCode { _ = try await store.setDomain("", status: .approved, contact: nil, by: "x") }
                    == .invalidArgument)
        }
    }

    @Test(arguments: StoreBackend.all) func flagsKeepStateExpiryAndEveryChange(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            #expect(try await store.flag("allow-any-domain") == nil)
            let expiry = clock.now.addingTimeInterval(86_400)
            let on = try await store.setFlag("allow-any-domain", enabled: true, expiresAt: expiry, by: "dev")
            #expect(
                on
                    == DeveloperFlagState(
                        name: "allow-any-domain", enabled: true, expiresAt: expiry, setBy: "dev", setAt: clock.now))
            #expect(try await store.flag("allow-any-domain") == on)

            clock.advance(by: 60)
            _ = try await store.setFlag("allow-unverified-sources", enabled: true, expiresAt: nil, by: "dev")
            clock.advance(by: 60)
            let off = try await store.setFlag("allow-any-domain", enabled: false, expiresAt: nil, by: "ops")
            #expect(try await store.flag("allow-any-domain") == off)
            #expect(try await store.flags().map(\.name) == ["allow-any-domain", "allow-unverified-sources"])

            let history = try await store.flagChanges(name: "allow-any-domain", limit: 10)
            #expect(history.map(\.enabled) == [true, false])
            #expect(history.map(\.setBy) == ["dev", "ops"])
            #expect(history.first?.expiresAt == expiry)
            #expect(history.last?.expiresAt == nil)
            #expect(
                try await store.flagChanges(name: nil, limit: 2).map(\.name) == [
                    "allow-unverified-sources", "allow-any-domain",
                ])
            let all = try await store.flagChanges(name: nil, limit: 10)
            #expect(all.map(\.id) == all.map(\.id).sorted())
        }
    }

    @Test(arguments: StoreBackend.all) func spoolKeepsMessagesUntilRemovedAndCountsAttempts(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let bytes = Data("Received: from mx\r\n\r\nbody\r\n".utf8)
            let later = try await store.spool(
                bytes, channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror",
                nextAttemptAt: clock.now.addingTimeInterval(600))
            let sooner = try await store.spool(
                Data("second".utf8), channel: .http, owner: nil, reasonCode: "dns.temperror",
                nextAttemptAt: clock.now.addingTimeInterval(60))
            #expect(later.attempts == 0)
            #expect(try await store.spooledMessage(id: later.id) == later)
            // No owner: the signed recipients, decided when it is retried.
            #expect(try await store.spooledMessage(id: sooner.id)?.owner == nil)
            #expect(later.owner == Sample.owner)

            #expect(try await store.spooledMessages(dueBy: nil, limit: 10).map(\.id) == [sooner.id, later.id])
            #expect(try await store.spooledMessages(dueBy: clock.now, limit: 10).isEmpty)
            #expect(
                try await store.spooledMessages(dueBy: clock.now.addingTimeInterval(60), limit: 10).map(\.id) == [
                    sooner.id
                ])
            #expect(try await store.spooledMessages(dueBy: nil, limit: 1).map(\.id) == [sooner.id])

            clock.advance(by: 60)
            let retried = try #require(
                try await store.recordAttempt(
                    id: sooner.id, reasonCode: "dns.timeout", nextAttemptAt: clock.now.addingTimeInterval(1200)))
            #expect(retried.attempts == 1)
            #expect(retried.reasonCode == "dns.timeout")
            #expect(retried.updatedAt == clock.now)
            #expect(retried.bytes == Data("second".utf8))
            #expect(
                try await store.recordAttempt(id: sooner.id, reasonCode: "dns.timeout", nextAttemptAt: clock.now)?
                    .attempts == 2)
            #expect(try await store.spooledMessages(dueBy: nil, limit: 10).map(\.id) == [sooner.id, later.id])

            #expect(try await store.spooledMessageCount() == 2)
            #expect(try await store.removeSpooledMessage(id: later.id))
            #expect(try await !store.removeSpooledMessage(id: later.id))
            #expect(try await store.spooledMessageCount() == 1)
            #expect(try await store.recordAttempt(id: later.id, reasonCode: "x", nextAttemptAt: clock.now) == nil)
            #expect(try await store.spooledMessages(dueBy: nil, limit: 10).map(\.id) == [sooner.id])
        }
    }

    @Test(arguments: StoreBackend.all) func spoolRefusesAnOversizedMessage(backend: StoreBackend) async throws {
        var limits = StoreLimits()
        limits.maximumSpooledMessageBytes = 16
        try await withStore(backend, limits: limits) { store in
            let code = await storeErrorCode {
                _ = try await store.spool(
                    Data(count: 17), channel: .email, owner: Sample.owner, reasonCode: "dns.temperror",
                    nextAttemptAt: Date())
            }
            #expect(code == .invalidArgument)
            let spooled = try await store.spooledMessages(dueBy: nil, limit: 10)
            #expect(spooled.isEmpty)
        }
    }
}
