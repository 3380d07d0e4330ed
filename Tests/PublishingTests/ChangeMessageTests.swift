import Foundation
@testable import Publishing
import Reservations
import Store
import Testing

@Suite("Change events: cursors, CloudEvents, Standard Webhooks signatures, retries")
struct ChangeMessageTests {
    @Test(arguments: [Int64(0), 1, 255, 256, 1 << 40, Int64.max])
    func aCursorReadsBackItsPosition(position: Int64) throws {
        let text = ChangeCursor(position: position).description
        #expect(text.utf8.count == 12)
        #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
        #expect(try #require(ChangeCursor(text)).position == position)
    }

    @Test(arguments: ["", "7", "AQAAAAAAAAA", "AQAAAAAAAAAAA", "AgAAAAAAAAAB", "AQAAAAAAAAA!", "gAAAAAAAAAAA", "AYAAAAAAAAAA"])
    func anythingElseIsNoCursor(text: String) {
        #expect(ChangeCursor(text) == nil)
    }

    static func event(kind: ChangeKind = .updated, channel: IngestionChannel? = .lmtp) throws -> ChangeEvent {
        var reservation = Reservation(kind: .train)
        reservation.reservationId = "B9C8"
        reservation.tripNumber = "812"
        let payload = try JSONEncoder().encode(StoredPayload(reservation: reservation, markup: .object([:])))
        let stored = StoredReservation(
            id: 3,
            key: ReservationKey(owner: OwnerAddress("eva@guest.example.net")!, sourceDomain: "nordic-rail.example", itemReference: "B9C8"),
            content: ReservationContent(
                containerReference: "B9C8", status: .confirmed, kind: "train", payload: payload, flags: ["allow-any-domain"],
                source: "<b9c8@nordic-rail.example>"),
            version: 2, createdAt: Date(timeIntervalSince1970: 1_790_000_000), updatedAt: Date(timeIntervalSince1970: 1_790_000_060),
            cancelledAt: nil)
        return ChangeEvent(
            position: 7, kind: kind, recordedAt: Date(timeIntervalSince1970: 1_790_000_060), channel: channel, reservation: stored)
    }

    @Test func aChangeIsACloudEventWithTheReservationViewItsVersionKindAndProvenance() throws {
        let message = ChangeMessage(try Self.event())
        let object = try #require(JSONSerialization.jsonObject(with: Data(try message.encoded())) as? [String: Any])
        #expect(object["specversion"] as? String == "1.0")
        #expect(object["id"] as? String == "change-7")
        #expect(object["source"] as? String == "/v1/changes")
        #expect(object["type"] as? String == "gateway.reservation.updated")
        #expect(object["subject"] as? String == "reservations/3")
        #expect(object["time"] as? String == "2026-09-21T14:14:20.000Z")
        #expect(object["datacontenttype"] as? String == "application/json")
        let data = try #require(object["data"] as? [String: Any])
        #expect(data["change"] as? String == "reservation.updated")
        #expect(data["version"] as? Int == 2)
        #expect(data["cursor"] as? String == ChangeCursor(position: 7).description)
        let reservation = try #require(data["reservation"] as? [String: Any])
        #expect(reservation["id"] as? Int == 3)
        #expect(reservation["owner"] as? String == "eva@guest.example.net")
        #expect(reservation["status"] as? String == "confirmed")
        #expect(reservation["version"] as? Int == 2)
        let provenance = try #require(data["provenance"] as? [String: Any])
        #expect(provenance["channel"] as? String == "lmtp")
        #expect(provenance["sourceDomain"] as? String == "nordic-rail.example")
        #expect(provenance["source"] as? String == "<b9c8@nordic-rail.example>")
        #expect(provenance["flags"] as? [String] == ["allow-any-domain"])
        // The view is the API's, field for field.
        let view = try JSONSerialization.jsonObject(
            with: ChangeMessage.encoder.encode(ReservationView(try Self.event().reservation))) as? [String: Any]
        #expect(NSDictionary(dictionary: reservation).isEqual(to: view ?? [:]))
        // The same change encodes to the same bytes: what a signature covers, again on a retry.
        #expect(try message.encoded() == (try ChangeMessage(try Self.event()).encoded()))
    }

    /// The test vector of the Standard Webhooks specification's reference libraries.
    @Test func theSignatureMatchesTheStandardWebhooksVector() throws {
        let secret = try #require(WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = WebhookSignature.signature(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, secret: secret)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(
            WebhookSignature.isValid(
                header: "v1,bm90IGl0 " + signature, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
                body: body, secret: secret))
        #expect(
            !WebhookSignature.isValid(
                header: signature, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_331, body: body,
                secret: secret))
        let headers = WebhookSignature.headers(id: "change-7", timestamp: 1_614_265_330, body: body, secret: secret)
        #expect(headers.map(\.0) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(headers[1].1 == "1614265330")
    }

    @Test func aNewSecretIsThirtyTwoRandomBytesInTheStandardForm() throws {
        let first = WebhookSecret.generate()
        #expect(first.description.hasPrefix("whsec_"))
        #expect(first.key.count == 32)
        #expect(try #require(WebhookSecret(first.description)) == first)
        #expect(WebhookSecret.generate() != first)
        #expect(WebhookSecret("whsec_c2hvcnQ=") == nil)
        #expect(WebhookSecret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == nil)
    }

    @Test func retriesBackOffExponentiallyWithJitterForADayThenStop() {
        let schedule = RetrySchedule()
        let queued = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(schedule.interval(afterFailures: 1) == 5)
        #expect(schedule.interval(afterFailures: 2) == 10)
        #expect(schedule.interval(afterFailures: 10) == 2560)
        #expect(schedule.interval(afterFailures: 11) == 3600)
        #expect(schedule.interval(afterFailures: 500) == 3600)
        let early = schedule.nextAttempt(afterFailures: 3, firstAttempt: queued, now: queued + 30, random: 0)
        let late = schedule.nextAttempt(afterFailures: 3, firstAttempt: queued, now: queued + 30, random: 0.999)
        #expect(early == queued + 30 + 10)
        #expect(late.map { $0.timeIntervalSince(queued + 30) } ?? 0 > 19.9)
        // Failing every time at the latest moment the schedule allows: attempts go on for at least 24 hours.
        var now = queued
        var attempts = 0
        while let next = schedule.nextAttempt(afterFailures: attempts + 1, firstAttempt: queued, now: now, random: 1) {
            attempts += 1
            now = next
        }
        #expect(now.timeIntervalSince(queued) >= 86_400)
        #expect(attempts < 60)
    }
}
