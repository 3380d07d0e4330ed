import Foundation
import Hummingbird
import HummingbirdTesting
import LMTP
import Logging
import SQLiteStore
import Store
import Testing

@testable import GatewayServer

/// What the server answers while its store is known to be down (`StoreHealth`), through the production router and the
/// LMTP delivery handler; `ClusterEndToEndTests` stops a real PostgreSQL under a running `gateway serve`.
@Suite("The store unavailable: LMTP 451, HTTP 503 with Retry-After, /healthz and /readyz say so")
struct StoreOutageTests {
    static let outage = StoreError(code: .unavailable, reason: "postgres://gateway@127.0.0.1:1/g: no connection")

    @Test func theAPIAnswers503WithRetryAfterAndTheProbesSaySo() async throws {
        var configuration = ServerConfiguration()
        configuration.retryAfterSeconds = 7
        let fixture = try await ServerFixture(configuration: configuration)
        try await fixture.test { client in
            #expect(try await client.call(.get, "/v1/domains").status == .ok)
            #expect(fixture.services.storeHealth.record(Self.outage))

            let domains = try await client.call(.get, "/v1/domains")
            #expect(domains.status == .serviceUnavailable)
            #expect(domains.headers[.retryAfter] == "7")
            #expect((domains.object["error"] as? [String: Any])?["code"] as? String == "server.store-unavailable")
            let submission = try await client.call(
                .post, "/v1/messages", body: try ServerFixture.example("flight-two-passengers.eml"))
            #expect(submission.status == .serviceUnavailable && submission.headers[.retryAfter] == "7")

            let health = try await client.call(.get, "/healthz", token: nil)
            #expect(health.status == .ok)
            #expect(health.object["store"] as? String == "unavailable")
            #expect((health.object["storeProblem"] as? String)?.hasPrefix("store.unavailable") == true)
            #expect(health.object["storeUnavailableSince"] is String)
            let ready = try await client.call(.get, "/readyz", token: nil)
            #expect(ready.status == .serviceUnavailable)
            #expect((ready.object["problems"] as? [String])?.contains { $0.contains("store") } == true)

            // The store answers again.
            #expect(fixture.services.storeHealth.markAvailable())
            #expect(try await client.call(.get, "/v1/domains").status == .ok)
            #expect(try await client.call(.get, "/healthz", token: nil).object["store"] as? String == "available")
            #expect(try await client.call(.get, "/readyz", token: nil).status == .ok)
        }
    }

    @Test func lmtpAnswers451AtMailFromAndForEveryRecipient() async throws {
        let fixture = try await ServerFixture()
        let delivery = LMTPDelivery(services: fixture.services, logger: Logger(label: "test"))
        let session = LMTPSession(remoteAddress: nil, clientName: "mta.example", id: 1)
        #expect(await delivery.mailFrom("bounces@mta.example", declaredSize: nil, session: session).code == 250)

        fixture.services.storeHealth.record(Self.outage)
        let refused = await delivery.mailFrom("bounces@mta.example", declaredSize: nil, session: session)
        #expect(refused.code == 451 && refused.enhancedCode == "4.3.0")
        let message = try ServerFixture.example("flight-two-passengers.eml")
        let replies = await delivery.deliver(
            LMTPEnvelope(
                sender: "bounces@mta.example", recipients: ["eva@guest.example.net", "tom@guest.example.net"],
                message: message, session: session))
        #expect(replies.map(\.code) == [451, 451])
        #expect(replies.allSatisfy { $0.enhancedCode == "4.3.0" })
        // Nothing was taken: nothing spooled, nothing decided.
        #expect(try await fixture.store.spooledMessageCount() == 0)
        #expect(try await fixture.store.entries(domain: nil, since: nil, afterID: nil, limit: 10).isEmpty)
    }

    @Test func onlyAnUnreachableStoreCountsAsAnOutage() {
        let health = StoreHealth()
        #expect(!health.record(StoreError(code: .invalidArgument, reason: "too long")))
        #expect(!health.record(StoreError(code: .busy, reason: "locked")))
        #expect(health.isAvailable)
        #expect(health.record(Self.outage))
        #expect(!health.record(Self.outage))
        #expect(!health.isAvailable)
        #expect(health.markAvailable())
        #expect(!health.markAvailable())
    }
}
