import Admission
import Foundation
import Ingestion
import Hummingbird
import HummingbirdTesting
import Sandbox
import SQLiteStore
import Store
import Testing

@testable import GatewayServer

/// The HTTP API through the application builder `gateway serve` uses, in Hummingbird's router test mode.
@Suite("HTTP API routes")
struct RouteTests {
    static let eva = "eva@guest.example.net"
    static let tom = "tom@guest.example.net"

    /// Registers `domain` and returns its sender token.
    static func register(_ domain: String, _ client: any TestClientProtocol) async throws -> String {
        let response = try await client.call(.post, "/v1/domains", json: #"{"domain":"\#(domain)"}"#)
        #expect(response.status == .created)
        return try #require((response.object["senderToken"] as? [String: Any])?["secret"] as? String)
    }

    static func ownerToken(_ owner: String, _ client: any TestClientProtocol) async throws -> String {
        let response = try await client.call(.post, "/v1/tokens", json: #"{"role":"owner","subject":"\#(owner)"}"#)
        #expect(response.status == .created)
        return try #require(response.object["secret"] as? String)
    }

    @Test func healthReadinessAndTheDocumentAreOpen() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            #expect(try await client.call(.get, "/healthz", token: nil).status == .ok)
            let ready = try await client.call(.get, "/readyz", token: nil)
            #expect(ready.status == .ok && ready.object["status"] as? String == "ready")
            let document = try await client.call(.get, "/openapi.yaml", token: nil)
            #expect(document.status == .ok && document.text.hasPrefix("openapi: 3"))
        }
    }

    @Test func everyProtectedEndpointRefusesWithoutAValidToken() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/domains"), (.post, "/v1/messages"), (.get, "/v1/flags"), (.get, "/v1/log"),
                (.get, "/v1/reservations"), (.get, "/v1/tokens"), (.get, "/calendars/eva@guest.example.net.ics"),
            ] {
                let missing = try await client.call(method, path, token: nil)
                #expect(missing.status == .unauthorized, "\(method) \(path)")
                #expect(missing.errorCode == "auth.missing-token")
                #expect(missing.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                let wrong = try await client.call(method, path, token: "gwa_not-a-real-token-at-all-000000")
                #expect(wrong.status == .unauthorized && wrong.errorCode == "auth.invalid-token", "\(method) \(path)")
            }
        }
    }

    /// `POST /v1/domains/{domain}/apps` binds an app as `gateway apps register` does: admin only, one domain per app,
    /// and the app's token then donates for that domain.
    @Test func anAdminBindsAnAppToADomainOverHTTPAndItsTokenDonates() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let skyways = try await Self.register("skyways.example", client)
            _ = try await Self.register("kokkari.example", client)

            let bound = try await client.call(.post, "/v1/domains/Skyways.Example/apps", json: #"{"app":"com.skyways.app"}"#)
            #expect(bound.status == .ok)
            #expect((bound.object["trust"] as? [String: Any])?["apps"] as? [String] == ["com.skyways.app"])
            let again = try await client.call(.post, "/v1/domains/skyways.example/apps", json: #"{"app":"com.skyways.app"}"#)
            #expect(again.status == .ok)
            #expect((again.object["trust"] as? [String: Any])?["apps"] as? [String] == ["com.skyways.app"])
            let elsewhere = try await client.call(.post, "/v1/domains/kokkari.example/apps", json: #"{"app":"com.skyways.app"}"#)
            #expect(elsewhere.status == .conflict && elsewhere.errorCode == "app.bound-elsewhere")
            let invalid = try await client.call(.post, "/v1/domains/kokkari.example/apps", json: #"{"app":"no dots here"}"#)
            #expect(invalid.status == .unprocessableContent && invalid.errorCode == "app.identifier-invalid")
            let unknown = try await client.call(.post, "/v1/domains/unknown.example/apps", json: #"{"app":"com.unknown.app"}"#)
            #expect(unknown.status == .notFound)
            let extra = try await client.call(
                .post, "/v1/domains/kokkari.example/apps", json: #"{"app":"com.kokkari.app","domain":"x"}"#)
            #expect(extra.status == .badRequest && extra.errorCode == "request.unknown-field")
            // A sender cannot bind an app, not even to its own domain (an identifier names one app everywhere).
            let bySender = try await client.call(
                .post, "/v1/domains/skyways.example/apps", token: skyways, json: #"{"app":"com.other.app"}"#)
            #expect(bySender.status == .forbidden)
            let domain = try #require(try await fixture.store.registeredDomain("skyways.example"))
            #expect(domain.trust.apps == ["com.skyways.app"])

            let issued = try await client.call(.post, "/v1/tokens", json: #"{"role":"app","subject":"com.skyways.app"}"#)
            #expect(issued.status == .created)
            let appToken = try #require(issued.object["secret"] as? String)
            let donated = try await client.call(
                .post, "/v1/donations?owner=\(Self.eva)", token: appToken,
                json: String(decoding: try ServerFixture.example("donations/flight.json"), as: UTF8.self))
            #expect(donated.status == .ok)
            #expect(donated.object["verdict"] as? String == "admitted")
            #expect(donated.object["sourceDomain"] as? String == "skyways.example")
            #expect(donated.object["source"] as? String == "app:com.skyways.app")
        }
    }

    @Test func aSenderTokenSubmitsForItsOwnDomainOnly() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let skyways = try await Self.register("skyways.example", client)
            let kokkari = try await Self.register("kokkari.example", client)
            let flight = try ServerFixture.example("flight-two-passengers.eml")

            let refused = try await client.call(.post, "/v1/messages", token: kokkari, body: flight)
            #expect(refused.status == .forbidden && refused.errorCode == "auth.forbidden")
            #expect(try await fixture.store.listAll(limit: 10).isEmpty)

            let admitted = try await client.call(.post, "/v1/messages", token: skyways, body: flight)
            #expect(admitted.status == .ok)
            #expect(admitted.object["verdict"] as? String == "admitted")
            #expect(admitted.object["dkim"] as? String == "pass")
            #expect(admitted.object["channel"] as? String == "http")
            let stored = try await fixture.store.listAll(limit: 100)
            #expect(Set(stored.map(\.owner.address)) == [Self.eva, Self.tom])
            #expect(stored.allSatisfy { $0.sourceDomain == "skyways.example" && $0.version == 1 })

            // The log names the owners, and the owner of each item's outcome (issue 13): as addresses for an admin, as
            // keyed pseudonyms for the sender (issue 15).
            let logged = try #require(
                (try await client.call(.get, "/v1/log").object["entries"] as? [[String: Any]])?.last)
            #expect(Set(logged["owners"] as? [String] ?? []) == [Self.eva, Self.tom])
            let outcomes = try #require(logged["reservations"] as? [[String: Any]])
            #expect(Set(outcomes.compactMap { $0["owner"] as? String }) == [Self.eva, Self.tom])
            #expect(outcomes.count == stored.count && outcomes.allSatisfy { $0["owner"] is String })
            let seen = try #require(
                (try await client.call(.get, "/v1/log", token: skyways).object["entries"] as? [[String: Any]])?.last)
            let pseudonyms = Set(seen["owners"] as? [String] ?? [])
            #expect(pseudonyms.count == 2 && pseudonyms.allSatisfy { $0.hasPrefix("owner:") })
            #expect(Set((seen["reservations"] as? [[String: Any]] ?? []).compactMap { $0["owner"] as? String }) == pseudonyms)

            // The same message again changes nothing.
            let again = try await client.call(.post, "/v1/messages", token: skyways, body: flight)
            #expect((again.object["items"] as? [[String: Any]])?.allSatisfy { $0["outcome"] as? String == "unchanged" } == true)
            #expect(try await fixture.store.listAll(limit: 100).count == stored.count)

            // An owner token may not submit.
            let owner = try await Self.ownerToken(Self.eva, client)
            #expect(try await client.call(.post, "/v1/messages", token: owner, body: flight).status == .forbidden)
        }
    }

    @Test func aCheckDecidesWithoutStoringOrLogging() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let sender = try await Self.register("nordic-rail.example", client)
            let check = try await client.call(
                .post, "/v1/check/messages", token: sender, body: try ServerFixture.example("train-confirmation.eml"))
            #expect(check.status == .ok)
            #expect(check.object["dryRun"] as? Bool == true)
            #expect(check.object["verdict"] as? String == "admitted")
            #expect((check.object["items"] as? [[String: Any]])?.first?["outcome"] as? String == "admissible")
            #expect(try await fixture.store.listAll(limit: 10).isEmpty)
            #expect(try await fixture.store.entries(domain: nil, since: nil, afterID: nil, limit: 10).isEmpty)

            // Samples at registration are checked the same way.
            let sample = String(decoding: try ServerFixture.example("restaurant-microdata.eml"), as: UTF8.self)
            let body = try JSONSerialization.data(withJSONObject: ["domain": "kokkari.example", "samples": [sample]])
            let registered = try await client.call(.post, "/v1/domains", json: String(decoding: body, as: UTF8.self))
            let reports = try #require(registered.object["samples"] as? [[String: Any]])
            #expect(reports.count == 1 && reports.first?["verdict"] as? String == "admitted")
        }
    }

    @Test func anOwnerReadsOnlyItsOwnReservationsAndCalendar() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            _ = try await Self.register("skyways.example", client)
            _ = try await client.call(.post, "/v1/messages", body: try ServerFixture.example("flight-two-passengers.eml"))
            let eva = try await Self.ownerToken(Self.eva, client)

            let mine = try await client.call(.get, "/v1/reservations", token: eva)
            #expect(mine.status == .ok && !mine.array.isEmpty)
            #expect(mine.array.allSatisfy { $0["owner"] as? String == Self.eva })
            #expect(try await client.call(.get, "/v1/reservations?owner=\(Self.tom)", token: eva).status == .forbidden)

            // Another owner's record is "not found", as if it did not exist.
            let toms = try await fixture.store.list(owner: OwnerAddress(Self.tom)!)
            let tomsID = try #require(toms.first?.id)
            #expect(try await client.call(.get, "/v1/reservations/\(tomsID)", token: eva).status == .notFound)
            let evasID = try #require(mine.array.first?["id"] as? Int)
            let shown = try await client.call(.get, "/v1/reservations/\(evasID)", token: eva)
            #expect(shown.status == .ok && (shown.object["history"] as? [String])?.count == 1)

            // Lookup by container reference and item references.
            let lookup = try await client.call(.get, "/v1/reservations/lookup?reference=RXJ34P", token: eva)
            #expect(lookup.status == .ok && lookup.array.count == mine.array.count)
            let item = try #require(mine.array.first?["itemReference"] as? String)
            let encoded = item.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? item
            let narrowed = try await client.call(.get, "/v1/reservations/lookup?reference=RXJ34P&item=\(encoded)", token: eva)
            #expect(narrowed.array.map { $0["itemReference"] as? String } == [item])
            #expect(try await client.call(.get, "/v1/reservations/lookup?reference=NOPE", token: eva).status == .notFound)

            // Calendars: the owner's own, by header or ?token=; not another's.
            #expect(try await client.call(.get, "/calendars/\(Self.tom).ics", token: eva).status == .forbidden)
            let feed = try await client.call(.get, "/calendars/\(Self.eva).ics?token=\(eva)", token: nil)
            #expect(feed.status == .ok)
            #expect(feed.headers[.contentType]?.hasPrefix("text/calendar") == true)
            #expect(feed.text.contains("BEGIN:VEVENT"))
            // Path parameters are percent-decoded: an encoded @ names the same owner.
            let decoded = try await client.call(.get, "/calendars/eva%40guest.example.net.ics", token: eva)
            #expect(decoded.status == .ok && decoded.text == feed.text)
        }
    }

    @Test func moreOwnersThanTheLogKeepsAreRefused() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let owners = (1...17).map { "owner=o\($0)%40\(String(repeating: "0", count: 240))" }.joined(separator: "&")
            let response = try await client.call(
                .post, "/v1/messages?\(owners)", body: try ServerFixture.example("flight-two-passengers.eml"))
            #expect(response.status == .badRequest && response.errorCode == "request.invalid")
        }
    }

    @Test func aCalendarFeedAnswersNotModifiedUntilItChanges() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            _ = try await Self.register("skyways.example", client)
            _ = try await Self.register("nordic-rail.example", client)
            _ = try await client.call(.post, "/v1/messages", body: try ServerFixture.example("flight-two-passengers.eml"))
            let eva = try await Self.ownerToken(Self.eva, client)
            let first = try await client.call(.get, "/calendars/\(Self.eva).ics", token: eva)
            let etag = try #require(first.headers[.eTag])
            #expect(first.headers[.lastModified] != nil)

            try await Task.sleep(for: .milliseconds(1100))  // a feed that does not change must not change with the clock
            let unchanged = try await client.call(.get, "/calendars/\(Self.eva).ics", token: eva, headers: [.ifNoneMatch: etag])
            #expect(unchanged.status == .notModified)
            #expect(unchanged.body.readableBytes == 0)
            // If-None-Match compares weakly (RFC 9110 §13.1.2): a proxy may have weakened the tag.
            let weak = try await client.call(.get, "/calendars/\(Self.eva).ics", token: eva, headers: [.ifNoneMatch: "W/\(etag)"])
            #expect(weak.status == .notModified)

            _ = try await client.call(.post, "/v1/messages", body: try ServerFixture.example("train-confirmation.eml"))
            let changed = try await client.call(.get, "/calendars/\(Self.eva).ics", token: eva, headers: [.ifNoneMatch: etag])
            #expect(changed.status == .ok)
            #expect(changed.headers[.eTag] != etag)
        }
    }

    @Test func flagsAreReadBySendersAndSetByAdminsWithinThePolicy() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let sender = try await Self.register("skyways.example", client)
            #expect(try await client.call(.put, "/v1/flags/allow-any-domain", token: sender, json: #"{"enabled":true}"#).status == .forbidden)
            let set = try await client.call(.put, "/v1/flags/allow-any-domain", json: #"{"enabled":true,"durationSeconds":600}"#)
            #expect(set.status == .ok && set.object["enabled"] as? Bool == true)
            let read = try await client.call(.get, "/v1/flags", token: sender)
            #expect(read.array.first { $0["name"] as? String == "allow-any-domain" }?["enabled"] as? Bool == true)
            #expect(try await client.call(.put, "/v1/flags/allow-everything", json: #"{"enabled":true}"#).errorCode == "flags.unknown")
            #expect(try await client.call(.put, "/v1/flags/allow-any-domain", json: #"{"on":true}"#).status == .badRequest)
            let tooLong = try await client.call(
                .put, "/v1/flags/allow-any-domain", json: #"{"enabled":true,"durationSeconds":99999999}"#)
            #expect(tooLong.status == .unprocessableContent && tooLong.errorCode == "flags.duration-out-of-range")
        }
        let production = try await ServerFixture(policy: "production")
        try await production.test { client in
            let locked = try await client.call(.put, "/v1/flags/allow-unverified-sources", json: #"{"enabled":true}"#)
            #expect(locked.status == .conflict && locked.errorCode == "flags.locked")
        }
    }

    @Test func theLogPagesForwardAndASenderSeesItsOwnDomainOnly() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let skyways = try await Self.register("skyways.example", client)
            _ = try await Self.register("nordic-rail.example", client)
            _ = try await client.call(.post, "/v1/messages", body: try ServerFixture.example("flight-two-passengers.eml"))
            _ = try await client.call(.post, "/v1/messages", body: try ServerFixture.example("train-confirmation.eml"))
            _ = try await client.call(.post, "/v1/messages", body: Array("not a message".utf8))

            let all = try await client.call(.get, "/v1/log?after=0&limit=2")
            let page1 = try #require(all.object["entries"] as? [[String: Any]])
            #expect(page1.count == 2)
            let next = try #require(all.object["nextAfter"] as? Int)
            let page2 = try #require(try await client.call(.get, "/v1/log?after=\(next)&limit=2").object["entries"] as? [[String: Any]])
            #expect(page2.count == 1 && page2.first?["verdict"] as? String == "rejected")

            let own = try #require(try await client.call(.get, "/v1/log", token: skyways).object["entries"] as? [[String: Any]])
            #expect(own.count == 1 && own.first?["sourceDomain"] as? String == "skyways.example")
            #expect(try await client.call(.get, "/v1/log?domain=nordic-rail.example", token: skyways).status == .forbidden)
            #expect(try await client.call(.get, "/v1/log?limit=0").status == .badRequest)
            #expect(try await client.call(.get, "/v1/log?since=yesterday").status == .badRequest)
        }
    }

    @Test func domainsAreApprovedAndRevokedByAdminsAndRefusedWithCodes() async throws {
        let fixture = try await ServerFixture(policy: "production")
        try await fixture.test { client in
            let sender = try await Self.register("skyways.example", client)
            let shown = try await client.call(.get, "/v1/domains/skyways.example", token: sender)
            #expect((shown.object["registration"] as? [String: Any])?["status"] as? String == "pending")
            #expect(try await client.call(.get, "/v1/domains/kokkari.example", token: sender).status == .forbidden)
            #expect(try await client.call(.post, "/v1/domains/skyways.example/approve", token: sender).status == .forbidden)
            // Production approves only a domain that proved control of itself (issue 15).
            let unproved = try await client.call(.post, "/v1/domains/skyways.example/approve")
            #expect(unproved.status == .conflict && unproved.errorCode == "registry.domain-not-verified")
            _ = try await fixture.store.updateDomain("skyways.example", by: "test") { current, now in
                var entry = try #require(current)
                entry.status = .verified
                entry.trust.verifiedAt = now
                return DomainUpdate(registration: entry, recordsChange: true)
            }
            let approved = try await client.call(.post, "/v1/domains/skyways.example/approve")
            #expect(approved.object["status"] as? String == "approved")
            #expect(try await client.call(.post, "/v1/domains/unknown.example/revoke").status == .notFound)
            let suffix = try await client.call(.post, "/v1/domains", json: #"{"domain":"co.uk"}"#)
            #expect(suffix.status == .unprocessableContent && suffix.errorCode == "registry.public-suffix")
            #expect(try await client.call(.get, "/v1/domains?status=approved").array.count == 1)
            let badStatus = try await client.call(.get, "/v1/domains?status=trusted")
            #expect(badStatus.status == .badRequest && badStatus.errorCode == "request.invalid")
        }
    }

    @Test func tokensAreIssuedListedAndRevokedButNeverTheLastAdmin() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let issued = try await client.call(.post, "/v1/tokens", json: #"{"role":"owner","subject":"Ada@Example.org","label":"phone"}"#)
            #expect(issued.object["subject"] as? String == "ada@example.org")
            let secret = try #require(issued.object["secret"] as? String)
            #expect(secret.hasPrefix("gwo_"))
            let id = try #require(issued.object["id"] as? Int)
            // Only the hash is stored.
            #expect(try await client.call(.get, "/v1/tokens?role=root").status == .badRequest)
            let listed = try await client.call(.get, "/v1/tokens?role=owner")
            #expect(listed.array.count == 1 && !listed.text.contains(secret))
            #expect(try await client.call(.get, "/v1/reservations", token: secret).status == .ok)
            #expect(try await client.call(.delete, "/v1/tokens/\(id)").status == .noContent)
            #expect(try await client.call(.get, "/v1/reservations", token: secret).status == .unauthorized)

            let unregistered = try await client.call(.post, "/v1/tokens", json: #"{"role":"sender","subject":"nowhere.example"}"#)
            #expect(unregistered.errorCode == "registry.domain-not-registered")
            #expect(try await client.call(.post, "/v1/tokens", json: #"{"role":"owner","subject":"not an address"}"#).status == .badRequest)

            let admin = try #require(try await fixture.store.tokens(role: .admin).first)
            let last = try await client.call(.delete, "/v1/tokens/\(admin.id)")
            #expect(last.status == .conflict && last.errorCode == "auth.last-admin-token")
        }
    }

    @Test func aBodyOverThePolicyLimitIsRefusedBeforeReadingIt() async throws {
        let fixture = try await ServerFixture()
        let limit = fixture.services.ingestor.environment.policy.limits.maxMessageBytes
        try await fixture.test { client in
            let response = try await client.call(.post, "/v1/messages", body: [UInt8](repeating: 0x41, count: limit + 1))
            #expect(response.status == .contentTooLarge && response.errorCode == "request.too-large")
        }
    }

    @Test func aFullQueueAnswers429WithRetryAfter() async throws {
        let release = AsyncStream<Void>.makeStream()
        let extractor = HeldExtractor(release: release.stream)
        var configuration = ServerConfiguration()
        configuration.maxConcurrentIngestions = 1
        configuration.maxQueuedIngestions = 0
        configuration.retryAfterSeconds = 7
        let fixture = try await ServerFixture(configuration: configuration, extractor: extractor)
        try await fixture.test { client in
            _ = try await Self.register("skyways.example", client)
            let flight = try ServerFixture.example("flight-two-passengers.eml")
            async let first = client.call(.post, "/v1/messages", body: flight)
            while fixture.services.gate.load.running == 0 { try await Task.sleep(for: .milliseconds(5)) }
            let busy = try await client.call(.post, "/v1/messages", body: flight)
            #expect(busy.status == .tooManyRequests && busy.headers[.retryAfter] == "7" && busy.errorCode == "server.busy")
            let metrics = try await client.call(.get, "/metrics", token: nil)
            #expect(metrics.text.contains(#"gateway_busy_refusals_total{channel="http"} 1"#))
            release.continuation.yield()
            #expect(try await first.status == .ok)
        }
    }

    @Test func metricsCountIngestionsByVerdictAndDKIMResult() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            _ = try await Self.register("skyways.example", client)
            _ = try await client.call(.post, "/v1/messages", body: try ServerFixture.example("flight-two-passengers.eml"))
            _ = try await client.call(.post, "/v1/messages", body: try ServerFixture.example("train-confirmation.eml"))
            let metrics = try await client.call(.get, "/metrics", token: nil)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = metrics.text
            #expect(text.contains(#"gateway_ingestions_total{channel="http",verdict="admitted"} 1"#))
            #expect(text.contains(#"gateway_ingestions_total{channel="http",verdict="rejected"} 1"#))
            #expect(text.contains(#"gateway_refusals_total{channel="http",code="registry.domain-not-registered"} 1"#))
            #expect(text.contains(#"gateway_dkim_results_total{result="pass"} 2"#))
            #expect(text.contains("gateway_ingestion_duration_seconds_count"))
            #expect(text.contains(#"gateway_http_requests_total{method="POST",route="/v1/messages",status="200"} 2"#))
            #expect(text.contains("gateway_sandbox_restarts_total 0"))
        }
    }
}

/// Extraction that waits for a signal per document, to hold an ingestion in its slot.
struct HeldExtractor: Extractor {
    let release: AsyncStream<Void>
    let inner = InProcessExtractor(unconfined: DocumentExtraction())

    func extract(_ document: [UInt8], kind: DocumentKind, encoding: String?, deadline: Duration) async -> Result<MarkupGraph, SandboxFailure> {
        for await _ in release { break }
        return await inner.extract(document, kind: kind, encoding: encoding, deadline: deadline)
    }
}

import Markup


@Suite("Token secrets")
struct TokenSecretTests {
    @Test func secretsAreURLSafeBase64OfThirtyTwoRandomBytesBehindTheirRolesPrefix() {
        #expect(TokenAuthority.base64URL([0xFB, 0xFF]) == "-_8")
        #expect(TokenAuthority.base64URL(Array("foobar".utf8)) == "Zm9vYmFy")
        let secret = TokenAuthority.makeSecret(role: .sender)
        #expect(secret.hasPrefix("gws_") && secret.count == 4 + 43)
        #expect(secret.dropFirst(4).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(TokenAuthority.makeSecret(role: .sender) != secret)
    }
}
