import DKIM
import Foundation
import MailMessage
import TestSupport
import Testing

/// The console in a real headless Chromium (Debian's chromium and chromium-driver, driven by python3-selenium:
/// Scripts/console_browser.py) against `gateway serve` on loopback: a sender signs in, tests a valid email (uploaded)
/// and a broken one (pasted) and reads the card and the codes, hostile markup stays text and runs nothing, a form
/// without its token is refused, the log filters, opens an entry and shows a new decision while open, the pages fit a
/// phone, sign-out ends the session; an owner sees their reservations. Every step is checked on the page's content;
/// the screenshots are kept under .build/console-screenshots (artifacts, not committed).
@Suite("Console in a browser (Chromium)")
struct ConsoleBrowserTests {
    static let adminToken = "console-browser-admin-token-0123456789"
    static let script = Integration.scripts.appendingPathComponent("console_browser.py").path
    static let screenshots = Integration.packageRoot.appendingPathComponent(".build/console-screenshots")

    /// A confirmation from skyways.example signed with the example key, its HTML part `html`.
    static func signed(html: String) throws -> [UInt8] {
        let text = [
            "From: SkyWays <no-reply@skyways.example>", "To: Eva Green <eva@guest.example.net>",
            "Subject: Your trip", "Date: Wed, 04 Nov 2026 10:00:00 +0000",
            "Message-ID: <\(UUID().uuidString)@skyways.example>", "MIME-Version: 1.0",
            "Content-Type: text/html; charset=utf-8", "", html, "",
        ].joined(separator: "\r\n")
        let pem = try String(
            contentsOf: Integration.packageRoot.appendingPathComponent("examples/keys/sel1.skyways.example.pem"),
            encoding: .utf8)
        let signer = DKIMSigner(
            key: try PrivateKey(pem: pem), configuration: .init(signingDomain: "skyways.example", selector: "sel1"))
        return try signer.sign(try RawMessage(text))
    }

    /// A flight whose names, places and URLs carry script, event-handler and `javascript:` payloads (JSON strings;
    /// `<\/script>` keeps the HTML parser from ending the block).
    static func hostile() throws -> [UInt8] {
        try signed(
            html: #"""
                <html><body><script type="application/ld+json">
                {"@context":"https://schema.org","@type":"FlightReservation","reservationId":"XSS1",
                 "reservationStatus":"https://schema.org/ReservationConfirmed",
                 "underName":{"@type":"Person","name":"<script>alert('name')<\/script>"},
                 "reservationFor":{"@type":"Flight","flightNumber":"UA110",
                  "provider":{"@type":"Airline","name":"<img src=x onerror=alert('airline')>","iataCode":"UA"},
                  "departureAirport":{"@type":"Airport","name":"\"><svg onload=alert('place')>","iataCode":"SFO"},
                  "departureTime":"2027-03-04T20:15:00-08:00",
                  "arrivalAirport":{"@type":"Airport","name":"<a href=\"javascript:alert('link')\">JFK</a>","iataCode":"JFK"},
                  "arrivalTime":"2027-03-05T06:30:00-05:00"},
                 "url":"javascript:alert('url')",
                 "potentialAction":{"@type":"CheckInAction","target":"javascript:alert(document.cookie)"}}
                </script></body></html>
                """#)
    }

    @Test(.timeLimit(.minutes(5)))
    func aSenderAndAnOwnerUseTheConsoleInChromium() async throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: run make deps")
        }
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await ServerProcess.run(
            ServerProcess.Options(
                directory: directory, adminToken: Self.adminToken,
                resolver: ["--keys", Integration.packageRoot.appendingPathComponent("examples/keys.zone").path]),
            expectLMTP: false
        ) { server in
            let sender = try await server.register("skyways.example")
            let owner = try await server.ownerToken("eva@guest.example.net").secret
            let valid = [UInt8](
                try Data(contentsOf: Integration.packageRoot.appendingPathComponent("examples/flight-two-passengers.eml")))
            // The body changed after signing: dkim.body-hash-mismatch.
            let broken = Array(
                String(decoding: valid, as: UTF8.self).replacingOccurrences(
                    of: "Trip RXJ34P, two passengers", with: "Trip RXJ34P, three passengers"
                ).utf8)
            // The log's history: admitted, rejected for a changed body, rejected unsigned, admitted again (unchanged).
            let unsigned = [UInt8](
                try Data(contentsOf: Integration.packageRoot.appendingPathComponent("examples/unsigned/flight-two-passengers.eml")))
            for message in [valid, broken, unsigned, broken, valid] {
                let reply = try await server.curl("POST", "/v1/messages", token: sender, body: message, contentType: "message/rfc822")
                try #require(reply.status == 200, "\(reply.text)")
            }
            var files: [String: String] = [:]
            for (name, bytes) in [("valid", valid), ("broken", broken), ("hostile", try Self.hostile())] {
                let url = directory.appendingPathComponent("\(name).eml")
                try Data(bytes).write(to: url)
                files[name] = url.path
            }
            let config: [String: String] = [
                "base": server.baseURL, "sender": sender, "owner": owner, "valid": files["valid"]!,
                "broken": files["broken"]!, "hostile": files["hostile"]!, "live": files["valid"]!,
                "screenshots": Self.screenshots.path,
            ]
            let configPath = directory.appendingPathComponent("browser.json")
            try JSONSerialization.data(withJSONObject: config).write(to: configPath)

            let run = try await Integration.run(Integration.python, [Self.script, configPath.path])
            #expect(run.status == 0, "the browser checks failed:\n\(run.text)\n\(run.error.suffix(3000))")
            let passed = run.text.split(separator: "\n").filter { $0.hasPrefix("ok  ") }
            #expect(passed.count >= 40, "only \(passed.count) checks ran:\n\(run.text)")
            #expect(run.text.contains("all browser checks passed"))
            for name in ["tester-valid", "tester-broken", "tester-hostile", "domain", "log", "phone-log", "owner"] {
                let path = Self.screenshots.appendingPathComponent("\(name).png").path
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                #expect(size > 10_000, "no screenshot \(name).png")
            }
            // Nothing the tester checked was logged: the five submissions and the live one only.
            let log = try await server.curl("GET", "/v1/log", token: Self.adminToken)
            #expect(log.text.components(separatedBy: #""contentHash""#).count - 1 == 6, "\(log.text)")
        }
    }
}
