import Foundation
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Store
import Testing

@testable import GatewayServer

/// The change feed and the webhook subscriptions through the application builder `gateway serve` uses.
@Suite("HTTP API: the change feed and webhooks")
struct ChangeRoutesTests {
    /// The changes of one page, and its next cursor.
    static func page(_ response: TestResponse) throws -> (changes: [[String: Any]], next: String) {
        let object = response.object
        return (
            try #require(object["changes"] as? [[String: Any]]), try #require(object["next"] as? String)
        )
    }

    @Test func theFeedShowsEachTokenItsChangesInCommitOrderAndResumesAfterACursor() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let skyways = try await RouteTests.register("skyways.example", client)
            let kokkari = try await RouteTests.register("kokkari.example", client)
            let eva = try await RouteTests.ownerToken(RouteTests.eva, client)
            let flight = try ServerFixture.example("flight-two-passengers.eml")
            #expect(try await client.call(.post, "/v1/messages", token: skyways, body: flight).status == .ok)

            let all = try Self.page(try await client.call(.get, "/v1/changes"))
            #expect(all.changes.count == 8)  // 4 items, each for Eva and Tom (the signed recipients)
            #expect(all.changes.allSatisfy { $0["specversion"] as? String == "1.0" && $0["type"] as? String == "gateway.reservation.created" })
            let data = try #require(all.changes.first?["data"] as? [String: Any])
            #expect((data["provenance"] as? [String: Any])?["channel"] as? String == "http")
            #expect((data["reservation"] as? [String: Any])?["sourceDomain"] as? String == "skyways.example")
            #expect(all.next == (all.changes.last?["data"] as? [String: Any])?["cursor"] as? String)

            let own = try Self.page(try await client.call(.get, "/v1/changes", token: eva))
            #expect(own.changes.count == 4)
            #expect(own.changes.allSatisfy {
                (($0["data"] as? [String: Any])?["reservation"] as? [String: Any])?["owner"] as? String == RouteTests.eva
            })
            #expect(try Self.page(try await client.call(.get, "/v1/changes", token: skyways)).changes.count == 8)
            #expect(try Self.page(try await client.call(.get, "/v1/changes", token: kokkari)).changes.isEmpty)
            #expect(try Self.page(try await client.call(.get, "/v1/changes?owner=tom@guest.example.net")).changes.count == 4)

            // Resuming: nothing after the last; the second half after the second.
            let empty = try Self.page(try await client.call(.get, "/v1/changes?after=\(all.next)"))
            #expect(empty.changes.isEmpty && empty.next == all.next)
            let second = try #require((all.changes[1]["data"] as? [String: Any])?["cursor"] as? String)
            let rest = try Self.page(try await client.call(.get, "/v1/changes?after=\(second)&limit=1"))
            #expect(rest.changes.map { $0["id"] as? String } == [all.changes[2]["id"] as? String])

            // Refusals: another owner's or domain's changes, a cursor the feed never handed out, a wait too long.
            #expect(try await client.call(.get, "/v1/changes?owner=tom@guest.example.net", token: eva).status == .forbidden)
            #expect(try await client.call(.get, "/v1/changes?domain=skyways.example", token: kokkari).status == .forbidden)
            let badCursor = try await client.call(.get, "/v1/changes?after=7")
            #expect(badCursor.status == .badRequest && badCursor.errorCode == "request.invalid")
            #expect(try await client.call(.get, "/v1/changes?wait=61").status == .badRequest)
            #expect(try await client.call(.get, "/v1/changes", token: nil).status == .unauthorized)
        }
    }

    @Test func aLongPollReturnsAsSoonAsAChangeCommits() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let skyways = try await RouteTests.register("skyways.example", client)
            let clock = ContinuousClock()
            let started = clock.now
            async let waiting = client.call(.get, "/v1/changes?wait=30")
            try await Task.sleep(for: .milliseconds(300))
            #expect(
                try await client.call(
                    .post, "/v1/messages", token: skyways, body: try ServerFixture.example("flight-two-passengers.eml")
                ).status == .ok)
            let page = try Self.page(try await waiting)
            #expect(page.changes.count == 8)
            #expect(clock.now - started < .seconds(10))
            // With nothing to come, the poll ends after its wait.
            let quiet = clock.now
            let none = try Self.page(try await client.call(.get, "/v1/changes?after=\(page.next)&wait=0.5"))
            #expect(none.changes.isEmpty)
            #expect(clock.now - quiet >= .milliseconds(450))
        }
    }

    @Test func subscriptionsAreHTTPSWithinEachTokensReachAndTheirSecretIsShownOnce() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let skyways = try await RouteTests.register("skyways.example", client)
            let eva = try await RouteTests.ownerToken(RouteTests.eva, client)

            let created = try await client.call(.post, "/v1/webhooks", json: #"{"url":"https://hooks.example/in"}"#)
            #expect(created.status == .created)
            let secret = try #require(created.object["secret"] as? String)
            #expect(secret.hasPrefix("whsec_") && secret.count > 40)
            let hook = try #require(created.object["webhook"] as? [String: Any])
            #expect(hook["owner"] == nil && hook["domain"] == nil && (hook["types"] as? [String]) == [])

            let mine = try await client.call(
                .post, "/v1/webhooks", token: eva, json: #"{"url":"https://eva.example/hook","types":["reservation.cancelled"]}"#)
            #expect(mine.status == .created)
            #expect((mine.object["webhook"] as? [String: Any])?["owner"] as? String == RouteTests.eva)
            let theirs = try await client.call(
                .post, "/v1/webhooks", token: skyways, json: #"{"url":"https://ops.skyways.example/hook"}"#)
            #expect((theirs.object["webhook"] as? [String: Any])?["domain"] as? String == "skyways.example")

            // Lists never show a secret; each token sees its own.
            let listed = try await client.call(.get, "/v1/webhooks")
            #expect(listed.array.count == 3)
            #expect(!listed.text.contains("whsec_"))
            #expect(try await client.call(.get, "/v1/webhooks", token: eva).array.count == 1)
            #expect(try await client.call(.get, "/v1/webhooks", token: skyways).array.count == 1)
            let adminHook = try #require(hook["id"] as? Int)
            #expect(try await client.call(.delete, "/v1/webhooks/\(adminHook)", token: eva).status == .notFound)

            // Refusals, each with its code and place.
            for (body, code, at) in [
                (#"{"url":"http://hooks.example/in"}"#, "web.not-https", "url"),
                (#"{"url":"https://user:pw@hooks.example/in"}"#, "web.invalid-url", "url"),
                (#"{"url":"https://127.0.0.1/in"}"#, "web.address-not-public", "url"),
                (#"{"url":"https://hooks.example/in","types":["reservation.deleted"]}"#, "request.invalid", "types[0]"),
                (#"{"url":"https://hooks.example/in","owner":"a@b.example","domain":"b.example"}"#, "request.invalid", "domain"),
                (#"{"url":"https://hooks.example/in","secret":"mine"}"#, "request.unknown-field", "secret"),
            ] {
                let refused = try await client.call(.post, "/v1/webhooks", json: body)
                #expect(refused.errorCode == code, "\(body)")
                #expect((refused.object["error"] as? [String: Any])?["at"] as? String == at, "\(body)")
            }
            #expect(
                try await client.call(
                    .post, "/v1/webhooks", token: eva, json: #"{"url":"https://x.example/","owner":"tom@guest.example.net"}"#
                ).status == .forbidden)

            // Deliveries and replays of a subscription; removal.
            #expect(try await client.call(.post, "/v1/messages", token: skyways, body: try ServerFixture.example("flight-two-passengers.eml")).status == .ok)
            _ = try await fixture.store.queueDeliveries(limit: 100)
            let deliveries = try await client.call(.get, "/v1/webhooks/\(adminHook)/deliveries")
            #expect(deliveries.array.count == 8)
            #expect(deliveries.array.allSatisfy { $0["state"] as? String == "pending" && $0["attempts"] as? Int == 0 })
            #expect(try await client.call(.get, "/v1/webhooks/\(adminHook)/deliveries?state=dead").array.isEmpty)
            let replayed = try await client.call(
                .post, "/v1/webhooks/\(adminHook)/replay", json: #"{"since":"2000-01-01T00:00:00Z"}"#)
            #expect(replayed.status == .accepted && replayed.object["queued"] as? Int == 8)
            #expect(try await client.call(.delete, "/v1/webhooks/\(adminHook)").status == .noContent)
            #expect(try await client.call(.delete, "/v1/webhooks/\(adminHook)").status == .notFound)
        }
    }
}
