import Foundation
import TestSupport
import Testing

/// `gateway check --json` prints the dry run's details the console's tester shows (and `POST /v1/check/messages`
/// answers): each DKIM signature, alignment, the registration, what each developer flag would change, and per
/// reservation its card and Apple's and Gmail's bars — through the real command line, DNS from dnsmasq.
@Suite("gateway check --json: the dry run's details")
struct CheckDetailsEndToEndTests {
    @Test func checkPrintsEachSignatureTheCardsAndThePublishedBars() async throws {
        let spec = StoreEndToEndTests.nordicRail
        try await withGateway(senders: [spec]) { cli, senders, _ in
            let sender = try #require(senders[spec.domain])
            #expect(try await cli.run(["register", spec.domain]).status == 0)
            let email = try await sender.sign(
                BookingMail.train(reservationNumber: "C4D5", to: StoreEndToEndTests.eva, messageID: "C4D5.1@nordic-rail.example"),
                cli: cli, name: "train")
            let result = try await cli.run(["check", email, "--json"], resolver: true)
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            let line = try #require(result.jsonLines.first)
            let report = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
            #expect(report["dryRun"] as? Bool == true)
            let check = try #require(report["check"] as? [String: Any])
            let authentication = try #require(check["authentication"] as? [String: Any])
            #expect(authentication["fromDomain"] as? String == spec.domain)
            #expect(authentication["signedRecipients"] as? [String] == [StoreEndToEndTests.eva])
            let signature = try #require((authentication["signatures"] as? [[String: Any]])?.first)
            #expect(signature["domain"] as? String == spec.domain && signature["selector"] as? String == spec.selector)
            #expect(signature["algorithm"] as? String == "ed25519-sha256" && signature["result"] as? String == "pass")
            #expect(signature["aligned"] as? Bool == true)
            let registration = try #require(check["registration"] as? [String: Any])
            #expect(registration["domain"] as? String == spec.domain && registration["status"] as? String == "approved")
            #expect((check["refusals"] as? [Any])?.isEmpty == true)
            #expect((check["underFlags"] as? [[String: Any]])?.allSatisfy { $0["unchanged"] as? Bool == true } == true)

            let item = try #require((report["items"] as? [[String: Any]])?.first)
            let details = try #require(item["details"] as? [String: Any])
            let card = try #require(details["card"] as? [String: Any])
            #expect((card["title"] as? String)?.hasPrefix("Train 812") == true, "\(card)")
            let start = try #require(card["start"] as? [String: Any])
            #expect((start["utc"] as? String)?.hasSuffix(" UTC") == true && start["zone"] != nil)
            let bars = try #require(details["requirements"] as? [[String: Any]])
            #expect(bars.compactMap { $0["consumer"] as? String }.sorted() == ["Apple", "Gmail"])
            // A dry run stores nothing and logs nothing.
            let log = try await cli.run(["log", "--json"])
            #expect(log.status == 0 && !log.stdout.contains("C4D5"), "\(log.stdout)")
        }
    }
}
