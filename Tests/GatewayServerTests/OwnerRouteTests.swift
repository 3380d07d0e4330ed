import Foundation
import Hummingbird
import HummingbirdTesting
import SQLiteStore
import Store
import Testing

@testable import GatewayServer

/// What an owner does through the API with their own token (issue 16): accept, decline, trust and block senders, name
/// themselves, see it in their calendar, export everything, and erase it.
@Suite("HTTP API: the owner decides")
struct OwnerRouteTests {
    static let eva = RouteTests.eva
    static let tom = RouteTests.tom

    /// Registers skyways.example, admits the two-passenger flight for Eva and Tom, and returns Eva's owner token.
    static func admitFlight(_ client: any TestClientProtocol) async throws -> String {
        let sender = try await RouteTests.register("skyways.example", client)
        let admitted = try await client.call(
            .post, "/v1/messages", token: sender, body: try ServerFixture.example("flight-two-passengers.eml"))
        #expect(admitted.status == .ok && admitted.object["verdict"] as? String == "admitted")
        return try await RouteTests.ownerToken(eva, client)
    }

    static func reservations(_ client: any TestClientProtocol, token: String) async throws -> [[String: Any]] {
        try await client.call(.get, "/v1/reservations", token: token).array
    }

    @Test func acceptAndDeclineThroughTheOwnersToken() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let token = try await Self.admitFlight(client)
            let listed = try await Self.reservations(client, token: token)
            #expect(!listed.isEmpty)
            #expect(listed.allSatisfy { ($0["consent"] as? [String: Any])?["state"] as? String == "suggested" })
            // Provenance on each: the channel, the From domain, the DKIM identity, the policy.
            let provenance = try #require((listed.first?["provenance"] as? [[String: Any]])?.first)
            #expect(provenance["channel"] as? String == "http")
            #expect(provenance["sourceDomain"] as? String == "skyways.example")
            #expect((provenance["dkim"] as? [String: Any])?["signingDomain"] as? String == "skyways.example")
            #expect((provenance["messageIDSHA256"] as? String)?.count == 64)
            #expect(provenance["policy"] as? String == "development")
            let id = try #require(listed.first?["id"] as? Int)

            let accepted = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(id)/accept", token: token)
            #expect(accepted.status == .ok)
            #expect(accepted.object["changed"] as? Bool == true)
            #expect((accepted.object["previous"] as? [String: Any])?["state"] as? String == "suggested")
            let consent = ((accepted.object["reservation"] as? [String: Any])?["consent"] as? [String: Any])
            #expect(consent?["state"] as? String == "accepted" && consent?["reason"] as? String == "owner")
            #expect(accepted.object["learnedName"] as? String == "Eva Green")

            let again = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(id)/accept", token: token)
            #expect(again.object["changed"] as? Bool == false)
            let declined = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(id)/decline", token: token)
            #expect(((declined.object["reservation"] as? [String: Any])?["consent"] as? [String: Any])?["state"] as? String == "declined")

            // Tom's token acts for Tom only; Tom's reservation is not Eva's to decide.
            let tom = try await RouteTests.ownerToken(Self.tom, client)
            let foreign = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(id)/accept", token: tom)
            #expect(foreign.status == .forbidden)
            let tomsRecord = try #require(try await Self.reservations(client, token: tom).first?["id"] as? Int)
            let notEvas = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(tomsRecord)/accept", token: token)
            #expect(notEvas.status == .notFound)
            #expect(try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/x/accept", token: token).status == .badRequest)
            // An admin acts for anyone.
            let admin = try await client.call(.post, "/v1/owners/\(Self.tom)/reservations/\(tomsRecord)/accept")
            #expect(admin.status == .ok)
        }
    }

    @Test func trustNeedsAnAcceptanceAndBlockKeepsNewReservationsOut() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let token = try await Self.admitFlight(client)
            let path = "/v1/owners/\(Self.eva)/senders/SkyWays.example"
            let early = try await client.call(.put, path, token: token, json: #"{"decision":"trust"}"#)
            #expect(early.status == .conflict && early.errorCode == "consent.sender-not-accepted")

            let id = try #require(try await Self.reservations(client, token: token).first?["id"] as? Int)
            _ = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(id)/accept", token: token)
            let trusted = try await client.call(.put, path, token: token, json: #"{"decision":"trust"}"#)
            #expect(trusted.status == .ok)
            #expect(trusted.object["domain"] as? String == "skyways.example")
            #expect(trusted.object["decision"] as? String == "trust")

            let blocked = try await client.call(.put, path, token: token, json: #"{"decision":"block"}"#)
            #expect(blocked.object["decision"] as? String == "block")
            let listed = try await client.call(.get, "/v1/owners/\(Self.eva)/senders", token: token)
            #expect(listed.array.map { $0["decision"] as? String } == ["block"])

            #expect(try await client.call(.put, path, token: token, json: #"{"decision":"maybe"}"#).status == .badRequest)
            let unknown = try await client.call(.put, path, token: token, json: #"{"decision":"ask","x":1}"#)
            #expect(unknown.errorCode == "request.unknown-field")
            #expect(
                try await client.call(.put, "/v1/owners/\(Self.eva)/senders/not..a.domain", token: token, json: #"{"decision":"ask"}"#)
                    .status == .badRequest)
        }
    }

    @Test func theCalendarShowsConsent() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let token = try await Self.admitFlight(client)
            let feed = "/calendars/\(Self.eva).ics"
            let suggested = try await client.call(.get, feed, token: token).text
            #expect(suggested.contains("STATUS:TENTATIVE"))
            #expect(!suggested.contains("STATUS:CONFIRMED"))

            let ids = try await Self.reservations(client, token: token).compactMap { $0["id"] as? Int }
            #expect(ids.count >= 2)
            _ = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(ids[0])/accept", token: token)
            _ = try await client.call(.post, "/v1/owners/\(Self.eva)/reservations/\(ids[1])/decline", token: token)
            let decided = try await client.call(.get, feed, token: token).text
            #expect(decided.components(separatedBy: "STATUS:CONFIRMED").count == 2)
            #expect(decided.components(separatedBy: "BEGIN:VEVENT").count == ids.count)  // one declined is gone

            let profile = try await client.call(
                .put, "/v1/owners/\(Self.eva)/profile", token: token, json: #"{"suggestedInCalendar":"hidden"}"#)
            #expect(profile.object["suggestedInCalendar"] as? String == "hidden")
            let hidden = try await client.call(.get, feed, token: token).text
            #expect(hidden.components(separatedBy: "BEGIN:VEVENT").count == 2)  // only the accepted one
            #expect(!hidden.contains("TENTATIVE"))
        }
    }

    @Test func theOwnersNamesMakeAnotherPassengersBookingASuggestion() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let sender = try await RouteTests.register("skyways.example", client)
            let token = try await RouteTests.ownerToken(Self.eva, client)
            let set = try await client.call(.put, "/v1/owners/\(Self.eva)/profile", token: token, json: #"{"names":["Eva Green"]}"#)
            #expect(set.object["names"] as? [String] == ["Eva Green"])
            _ = try await client.call(
                .post, "/v1/messages", token: sender, body: try ServerFixture.example("flight-two-passengers.eml"))
            let listed = try await Self.reservations(client, token: token)
            let reasons = Dictionary(
                grouping: listed, by: { $0["underName"] as? String ?? "" }
            ).mapValues { $0.compactMap { ($0["consent"] as? [String: Any])?["reason"] as? String } }
            #expect(reasons["Eva Green"]?.allSatisfy { $0 == "new" } == true)
            #expect(reasons["Tom Green"]?.allSatisfy { $0 == "name-mismatch" } == true)
            #expect(reasons["Tom Green"]?.isEmpty == false)
        }
    }

    @Test func exportThenForget() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let token = try await Self.admitFlight(client)
            let tom = try await RouteTests.ownerToken(Self.tom, client)
            let export = try await client.call(.get, "/v1/owners/\(Self.eva)/export", token: token)
            #expect(export.status == .ok)
            #expect(export.headers[.contentDisposition]?.contains("attachment") == true)
            let document = export.object
            #expect(document["owner"] as? String == Self.eva)
            let reservations = try #require(document["reservations"] as? [[String: Any]])
            #expect(reservations.count == (try await fixture.store.list(owner: OwnerAddress(Self.eva)!)).count)
            #expect(reservations.allSatisfy { ($0["versions"] as? [[String: Any]])?.first?["markup"] != nil })
            // The email named Tom too: Eva's export holds her part of its log entry only.
            let log = try #require(document["decisionLog"] as? [[String: Any]])
            #expect(log.count == 1)
            #expect(log.first?["owners"] as? [String] == [Self.eva])
            let items = log.first?["reservations"] as? [[String: Any]] ?? []
            #expect(!items.isEmpty && items.allSatisfy { $0["owner"] as? String == Self.eva })
            let tokens = try #require(document["tokens"] as? [[String: Any]])
            #expect(tokens.count == 1 && tokens.allSatisfy { $0["secret"] == nil && $0["secretHash"] == nil })
            #expect(try await client.call(.get, "/v1/owners/\(Self.eva)/export", token: tom).status == .forbidden)

            let forgot = try await client.call(.delete, "/v1/owners/\(Self.eva)", token: token)
            #expect(forgot.status == .ok)
            #expect(forgot.object["reservations"] as? Int == reservations.count)
            #expect(forgot.object["tokens"] as? Int == 1)
            #expect(forgot.object["decisionLogEntriesRedacted"] as? Int == 1)  // the email named Tom too
            #expect(forgot.object["compacted"] as? Bool == true)
            // Her token went with her; Tom keeps everything.
            #expect(try await client.call(.get, "/v1/reservations", token: token).status == .unauthorized)
            #expect(try await fixture.store.list(owner: OwnerAddress(Self.eva)!).isEmpty)
            #expect(try await Self.reservations(client, token: tom).count == reservations.count)
            let after = try await client.call(.get, "/v1/owners/\(Self.eva)/export")
            #expect((after.object["reservations"] as? [Any])?.isEmpty == true)
        }
    }
}
