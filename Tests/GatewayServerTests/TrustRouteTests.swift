import Admission
import Foundation
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Store
import Testing

@testable import GatewayServer

/// Issue 15 through the HTTP API: self-service registration, what a sender token may do before its proof passes,
/// the proof's check, test mode and link hosts, quotas (429 with Retry-After), and the log a sender reads.
@Suite("HTTP API: sender trust")
struct TrustRouteTests {
    static let eva = "eva@guest.example.net"

    /// A policy file in a temporary directory: `base` with `extra` YAML laid over it.
    static func policy(_ yaml: String) throws -> String {
        let path = NSTemporaryDirectory() + "trust-policy-\(UUID().uuidString).yaml"
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func selfServiceRegistrationIsOpenOnlyWhenThePolicySaysSo() async throws {
        let closed = try await ServerFixture()
        try await closed.test { client in
            let refused = try await client.call(.post, "/v1/domains", token: nil, json: #"{"domain":"new.example"}"#)
            #expect(refused.status == .unauthorized && refused.errorCode == "auth.missing-token")
        }
        let open = try await ServerFixture(policy: "test")
        try await open.test { client in
            let created = try await client.call(.post, "/v1/domains", token: nil, json: #"{"domain":"new.example"}"#)
            #expect(created.status == .created)
            let registration = try #require(created.object["registration"] as? [String: Any])
            #expect(registration["status"] as? String == "pending")
            let challenge = try #require(created.object["challenge"] as? [String: Any])
            let token = try #require((registration["trust"] as? [String: Any])?["challenge"] as? String)
            #expect(challenge["name"] as? String == "_gateway-challenge.new.example")
            #expect(challenge["value"] as? String == "gateway-verification=\(token)")
            #expect(
                challenge["zoneLine"] as? String
                    == "_gateway-challenge.new.example. IN TXT \"gateway-verification=\(token)\"")
            let secret = try #require((created.object["senderToken"] as? [String: Any])?["secret"] as? String)

            // Someone else cannot take it over, nor mint tokens by registering again.
            let taken = try await client.call(.post, "/v1/domains", token: nil, json: #"{"domain":"new.example"}"#)
            #expect(taken.status == .conflict && taken.errorCode == "registry.domain-taken")
            let samples = try await client.call(
                .post, "/v1/domains", token: nil, json: #"{"domain":"other.example","samples":["x"]}"#)
            #expect(samples.status == .forbidden)

            // Until the proof passes, the token reads its registration and asks for the check, nothing else.
            let flight = try ServerFixture.example("flight-two-passengers.eml")
            for (method, path) in [
                (HTTPRequest.Method.post, "/v1/messages"), (.get, "/v1/log"), (.post, "/v1/domains/new.example/samples"),
            ] {
                let refused = try await client.call(method, path, token: secret, body: flight)
                #expect(refused.status == .forbidden, "\(method) \(path)")
                #expect(refused.errorCode == "registry.domain-not-verified", "\(method) \(path)")
            }
            let testMode = try await client.call(
                .put, "/v1/domains/new.example/test-mode", token: secret, json: #"{"enabled":true,"owners":["a@b.example"]}"#)
            #expect(testMode.status == .forbidden)
            #expect(try await client.call(.get, "/v1/domains/new.example", token: secret).status == .ok)
            let verify = try await client.call(.post, "/v1/domains/new.example/verify", token: secret)
            #expect(verify.status == .ok)
            let check = try #require(verify.object["check"] as? [String: Any])
            #expect(check["result"] as? String == "missing")
            #expect(check["code"] as? String == "dns.nxdomain")
            #expect((check["nameserver"] as? String)?.hasPrefix("zone file ") == true)
            #expect((verify.object["registration"] as? [String: Any])?["status"] as? String == "pending")
        }
    }

    @Test func approvalUnderProductionNeedsTheProofAndTestModeNeedsAVerifiedDomain() async throws {
        let fixture = try await ServerFixture(policy: "production")
        try await fixture.test { client in
            let created = try await client.call(.post, "/v1/domains", json: #"{"domain":"skyways.example"}"#)
            #expect(created.status == .created)
            let approve = try await client.call(.post, "/v1/domains/skyways.example/approve")
            #expect(approve.status == .conflict && approve.errorCode == "registry.domain-not-verified")
            let early = try await client.call(
                .put, "/v1/domains/skyways.example/test-mode", json: #"{"enabled":true,"owners":["\#(Self.eva)"]}"#)
            #expect(early.status == .conflict && early.errorCode == "registry.domain-not-verified")

            // Verified (as a found record would make it).
            _ = try await fixture.store.updateDomain("skyways.example", by: "test") { current, now in
                var entry = try #require(current)
                entry.status = .verified
                entry.trust.verifiedAt = now
                return DomainUpdate(registration: entry, recordsChange: true)
            }
            let missingOwners = try await client.call(.put, "/v1/domains/skyways.example/test-mode", json: #"{"enabled":true}"#)
            #expect(missingOwners.status == .badRequest && missingOwners.errorCode == "request.invalid")
            let tooLong = try await client.call(
                .put, "/v1/domains/skyways.example/test-mode",
                json: #"{"enabled":true,"owners":["\#(Self.eva)"],"durationSeconds":9999999}"#)
            #expect(tooLong.status == .unprocessableContent && tooLong.errorCode == "test-mode.duration-out-of-range")
            let on = try await client.call(
                .put, "/v1/domains/skyways.example/test-mode",
                json: #"{"enabled":true,"owners":["\#(Self.eva)"],"durationSeconds":600}"#)
            #expect(on.status == .ok)
            let testMode = try #require((on.object["trust"] as? [String: Any])?["testMode"] as? [String: Any])
            #expect(testMode["owners"] as? [String] == [Self.eva])

            let hosts = try await client.call(.put, "/v1/domains/skyways.example/hosts", json: #"{"hosts":["CDN.Skyways-Img.example"]}"#)
            #expect(hosts.status == .ok)
            #expect((hosts.object["trust"] as? [String: Any])?["hosts"] as? [String] == ["cdn.skyways-img.example"])
            let suffix = try await client.call(.put, "/v1/domains/skyways.example/hosts", json: #"{"hosts":["com"]}"#)
            #expect(suffix.status == .unprocessableContent && suffix.errorCode == "registry.host-invalid")

            #expect(try await client.call(.post, "/v1/domains/skyways.example/approve").status == .ok)
            let shown = try await client.call(.get, "/v1/domains/skyways.example")
            let changes = try #require(shown.object["changes"] as? [[String: Any]])
            #expect(changes.compactMap { $0["status"] as? String } == ["pending", "verified", "verified", "verified", "approved"])
            #expect(changes.contains { ($0["reason"] as? String)?.hasPrefix("test mode on") == true })
            let revoke = try await client.call(.post, "/v1/domains/skyways.example/revoke")
            #expect(revoke.status == .ok)
            #expect(revoke.object["status"] as? String == "suspended")
        }
    }

    @Test func aSubmissionOverAQuotaIs429WithRetryAfterAndNothingStored() async throws {
        let path = try Self.policy(
            """
            name: quota-test
            registration: {approveOnRegister: true}
            quotas:
              domain:
                messages: {limit: 2, seconds: 3600}
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fixture = try await ServerFixture(policy: path)
        try await fixture.test { client in
            let skyways = try await RouteTests.register("skyways.example", client)
            let flight = try ServerFixture.example("flight-two-passengers.eml")
            for _ in 0..<2 {
                #expect(try await client.call(.post, "/v1/messages", token: skyways, body: flight).status == .ok)
            }
            let before = try await fixture.store.entries(domain: nil, since: nil, afterID: nil, limit: 100).count
            let over = try await client.call(.post, "/v1/messages", token: skyways, body: flight)
            #expect(over.status == .tooManyRequests)
            #expect(over.errorCode == "quota.domain-messages")
            let retryAfter = try #require(over.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...3600).contains(retryAfter))
            #expect(try await fixture.store.entries(domain: nil, since: nil, afterID: nil, limit: 100).count == before)
            // A dry run is not counted.
            #expect(try await client.call(.post, "/v1/check/messages", token: skyways, body: flight).status == .ok)

            let shown = try await client.call(.get, "/v1/domains/skyways.example", token: skyways)
            let quotas = try #require(shown.object["quotas"] as? [[String: Any]])
            #expect(quotas.count == 1)
            #expect(quotas.first?["metric"] as? String == "messages")
            #expect(quotas.first?["used"] as? Int == 2)
            #expect(quotas.first?["limit"] as? Int == 2)
            let metrics = try await client.call(.get, "/metrics", token: nil).text
            let refusals = metrics.split(separator: "\n").filter { $0.hasPrefix("gateway_quota_refusals_total{") }
            #expect(refusals.count == 1)
            #expect(refusals.first.map { $0.contains(#"scope="domain""#) && $0.contains(#"metric="messages""#) && $0.hasSuffix(" 1") } == true)
        }
    }

    /// A sender reads its own domain's entries, each owner a keyed pseudonym: the same owner reads the same within a
    /// domain and differently for another sender, and no address is in the answer.
    @Test func aSenderReadsItsOwnLogWithOwnersReducedToPseudonyms() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let skyways = try await RouteTests.register("skyways.example", client)
            let nordic = try await RouteTests.register("nordic-rail.example", client)
            for example in ["flight-two-passengers.eml", "train-confirmation.eml"] {
                let bytes = try ServerFixture.example(example)
                #expect(try await client.call(.post, "/v1/messages", body: bytes).status == .ok)
            }
            #expect(
                try await client.call(.post, "/v1/messages", body: try ServerFixture.example("flight-two-passengers.eml"))
                    .status == .ok)

            let own = try await client.call(.get, "/v1/log", token: skyways)
            #expect(own.status == .ok)
            #expect(!own.text.contains("@guest.example.net"))
            let entries = try #require(own.object["entries"] as? [[String: Any]])
            #expect(entries.count == 2)
            #expect(entries.allSatisfy { $0["sourceDomain"] as? String == "skyways.example" })
            let owners = entries.map { $0["owners"] as? [String] ?? [] }
            #expect(owners.allSatisfy { $0.count == 2 && $0.allSatisfy { $0.hasPrefix("owner:") && $0.count == 38 } })
            #expect(owners[0] == owners[1])
            let outcomeOwners = Set(entries.flatMap { ($0["reservations"] as? [[String: Any]] ?? []).compactMap { $0["owner"] as? String } })
            #expect(outcomeOwners == Set(owners[0]))

            let other = try await client.call(.get, "/v1/log", token: nordic)
            let trainEntries = try #require(other.object["entries"] as? [[String: Any]])
            #expect(trainEntries.count == 1)
            let evaForNordic = try #require((trainEntries.first?["owners"] as? [String])?.first)
            #expect(!owners[0].contains(evaForNordic))
            #expect(try await client.call(.get, "/v1/log?domain=nordic-rail.example", token: skyways).status == .forbidden)

            // The admin reads the addresses.
            let admin = try await client.call(.get, "/v1/log?domain=skyways.example")
            #expect(admin.text.contains(Self.eva))
        }
    }
}
