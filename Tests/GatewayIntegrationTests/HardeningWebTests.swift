import Foundation
import TestSupport
import Testing

/// Issue 13 on the web channel, through `gateway ingest url` and `gateway check`. Defect 4: a page that sends its markup
/// and then keeps the connection open past the fetch's total time limit was admitted from the bytes received so far
/// (a real HTTPS server, Python's ssl module with the test site's certificate, sends the page and holds the
/// connection). Defect 2: a page on a look-alike host written as A-labels.
@Suite("Hardening: the web channel", .serialized)
struct HardeningWebTests {
    static let booking = "booking.example.test"

    /// `holding_server.py` for one framing; killed afterwards.
    final class HoldingServer {
        let process: ChildProcess
        let port: Int

        init(mode: String, page: URL, in directory: URL) async throws {
            let output = directory.appendingPathComponent("holding-\(mode).log")
            let process = try ChildProcess(
                executable: Integration.python,
                arguments: [
                    Integration.scripts.appendingPathComponent("holding_server.py").path,
                    Certificates.path("booking.example.test.pem"), Certificates.path("booking.example.test.key"),
                    page.path, mode,
                ],
                outputPath: output.path)
            let started = ContinuousClock.now
            var port: Int?
            while port == nil, ContinuousClock.now - started < .seconds(10) {
                let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                if let line = text.split(separator: "\n").first, let number = Int(line) { port = number }
                if port == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            guard let port else {
                process.terminate()
                throw FixtureError("holding_server.py did not start: \((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
            }
            self.process = process
            self.port = port
        }

        deinit { process.terminate(grace: .milliseconds(200)) }
    }

    @Test("Markup sent, then the connection held past web.totalTimeoutSeconds: web.timeout, nothing admitted",
          arguments: ["close-delimited", "short-length", "open-chunked"])
    func heldConnectionIsATimeout(mode: String) async throws {
        try await withWebGateway { web in
            let policy = try web.policy(
                "web-held", from: "test", web: ["  firstByteTimeoutSeconds: 2.5", "  totalTimeoutSeconds: 2.5"])
            _ = try await web.register(Self.booking, policy: policy)
            let page = web.cli.directory.appendingPathComponent("trip.html")
            try Data(BookingPage.trip.utf8).write(to: page)

            // The control: the same server, page and framing, the connection closed at the end: admitted.
            let complete = try await HoldingServer(mode: "complete", page: page, in: web.cli.directory)
            let (admitted, admittedStatus) = try await web.ingest(
                try #require(URL(string: "https://\(Self.booking):\(complete.port)/trip.html")), policy: policy)
            #expect(admittedStatus == 0, "\(admitted.codes) \(admitted.diagnostics)")
            #expect(admitted.items.map(\.outcome) == ["created", "created"])

            let held = try await HoldingServer(mode: mode, page: page, in: web.cli.directory)
            let url = try #require(URL(string: "https://\(Self.booking):\(held.port)/trip.html"))
            for ingest in [false, true] {
                let (report, status) = ingest ? try await web.ingest(url, policy: policy) : try await web.check(url, policy: policy)
                #expect(status == 1)
                #expect(report.verdict == "rejected")
                #expect(report.codes == ["web.timeout"], "\(report.diagnostics)")
                #expect(report.diagnostics.first?.hasPrefix("web.timeout: total time") == true, "\(report.diagnostics)")
                #expect(report.items.isEmpty, "\(report.items.map(\.summary))")
            }
            let entry = try #require(try await web.log().last)
            #expect(entry.verdict == "rejected")
            #expect(entry.codes == ["web.timeout"])
            #expect(entry.reservations.isEmpty)
            // What is stored is only the control's: still version 1, nothing from the held page.
            #expect(try await web.reservations().map(\.version) == [1, 1])
        }
    }

    /// Defect 2 on the web channel: a page on a look-alike host typed as A-labels (`bоoking`, a Cyrillic о) is
    /// refused with the registry's code even with both flags on: allow-any-domain lifts the registry check, not the
    /// check of the name itself.
    @Test("A page on a look-alike A-label host is refused registry.mixed-scripts, whatever the flags")
    func lookalikeHostIsRefused() async throws {
        try await withWebGateway { web in
            let lookalike = "xn--boking-wqf.example.test"
            let policy = try web.policy("web-lookalike", from: "test", hosts: [lookalike: "127.0.0.1"])
            for flag in ["allow-unverified-sources", "allow-any-domain"] {
                #expect(try await web.setFlag(flag, true, policy: policy).status == 0)
            }
            let url = web.site.url("/page.html", host: lookalike)
            let (report, status) = try await web.ingest(url, policy: policy)
            #expect(status == 1)
            #expect(report.verdict == "rejected")
            #expect(report.codes == ["registry.mixed-scripts"], "\(report.diagnostics) \(url)")
            #expect(report.items.isEmpty)
            #expect(try await web.reservations().isEmpty)
            // The same page under the real name, with the same flags: admitted (the site and flags work).
            let (admitted, admittedStatus) = try await web.ingest(web.site.url("/page.html"), policy: policy)
            #expect(admittedStatus == 0, "\(admitted.codes)")
        }
    }
}
