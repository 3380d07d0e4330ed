import Foundation
import TestSupport
import Testing

/// The web channel through the command line: a temporary store, the nginx test site on 127.0.0.1
/// serving ``BookingPage/trip`` (and the site's standard files), and policies derived from the
/// checked-in ones. `gateway ingest url` and `gateway check` for one owner.
struct WebGateway {
    static let owner = "eva@guest.example.net"

    let cli: GatewayCLI
    let site: TestSite

    /// `gateway ingest url URL --owner eva --json`: the report and the exit status.
    func ingest(
        _ url: URL, policy: String = "test", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (IngestReport, Int32) {
        try await report(
            ["ingest", "url", url.absoluteString, "--owner", Self.owner, "--json"], policy: policy,
            sourceLocation: sourceLocation)
    }

    /// `gateway check URL --owner eva --json`: a dry run.
    func check(
        _ url: URL, policy: String = "test", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (IngestReport, Int32) {
        try await report(
            ["check", url.absoluteString, "--owner", Self.owner, "--json"], policy: policy, sourceLocation: sourceLocation)
    }

    private func report(
        _ arguments: [String], policy: String, sourceLocation: SourceLocation
    ) async throws -> (IngestReport, Int32) {
        let result = try await cli.run(arguments, policy: policy)
        let lines = result.jsonLines
        try #require(
            lines.count == 1, "\(arguments[0]) printed \(lines.count) lines; stderr: \(result.stderr)",
            sourceLocation: sourceLocation)
        return (try JSONDecoder().decode(IngestReport.self, from: lines[0]), result.status)
    }

    /// `gateway register DOMAIN --json`.
    func register(_ domain: String, policy: String = "test") async throws -> Registration {
        let result = try await cli.run(["register", domain, "--json"], policy: policy)
        try #require(result.status == 0, "register: \(result.stderr)")
        return try JSONDecoder().decode(Registration.self, from: try #require(result.jsonLines.first))
    }

    /// `gateway flags set NAME on|off`; returns the result so a refusal can be checked.
    func setFlag(_ name: String, _ on: Bool, policy: String = "test") async throws -> GatewayCLI.Result {
        try await cli.run(["flags", "set", name, on ? "on" : "off"] + (on ? ["--for", "10m"] : []), policy: policy)
    }

    /// Every decision log entry, oldest first.
    func log() async throws -> [LogEntry] {
        let result = try await cli.run(["log", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.jsonLines.map { try JSONDecoder().decode(LogEntry.self, from: $0) }
    }

    func reservations() async throws -> [ShownReservation] {
        try await cli.reservations(owner: Self.owner)
    }

    /// What the gateway records as an admitted page's source: the final URL, then the subject and
    /// SHA-256 fingerprint of the certificate the server presented, as `openssl x509` reads the
    /// certificate file (not the gateway's own code); `; not verified` when it did not validate.
    func source(_ url: URL, certificate: String?, verified: Bool = true) async throws -> String {
        guard let certificate else { return url.absoluteString }
        let x509 = try await Integration.run(
            "/usr/bin/openssl",
            ["x509", "-in", Certificates.path(certificate), "-noout", "-subject", "-nameopt", "RFC2253", "-fingerprint", "-sha256"])
        try #require(x509.status == 0, "openssl x509: \(x509.error)")
        var fields: [String: String] = [:]
        for line in x509.text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        let subject = try #require(fields["subject"])
        let fingerprint = try #require(fields["sha256 Fingerprint"]).replacingOccurrences(of: ":", with: "").lowercased()
        return "\(url.absoluteString) (\(subject); sha256 \(fingerprint)\(verified ? "" : "; not verified"))"
    }

    /// Writes `NAME.yaml` to the temporary directory: the checked-in policy `base` with `hosts`
    /// added to `web.hosts`, `web` lines added to `web:`, `sections` (top-level YAML) appended,
    /// and its trust bundle paths made absolute. The development CA is trusted unless
    /// `trustBundles` replaces the bundles (paths relative to the temporary directory, as the
    /// policy file's own).
    /// - Returns: the file's path, for `--policy`.
    func policy(
        _ name: String, from base: String, hosts: [String: String] = [:], web: [String] = [], sections: String = "",
        trustBundles: [String]? = nil
    ) throws -> String {
        let original = try String(
            contentsOf: Integration.packageRoot.appendingPathComponent("policies/\(base).yaml"), encoding: .utf8)
        var lines = original.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines = lines.map { line in
            line.hasPrefix("name: ")
                ? "name: \(name)" : line.replacingOccurrences(of: "../certs/", with: Certificates.directory.path + "/")
        }
        var webLines = web
        if let trustBundles {
            lines.removeAll { $0.hasPrefix("  trustBundles:") }
            webLines.append("  trustBundles: [\(trustBundles.joined(separator: ", "))]")
        } else if !lines.contains(where: { $0.hasPrefix("  trustBundles:") }) {
            webLines.append("  trustBundles: [\(Certificates.path("dev-ca.pem"))]")
        }
        let hostLines = hosts.sorted { $0.key < $1.key }.map { "    \($0.key): \($0.value)" }
        if let index = lines.firstIndex(of: "  hosts:") {
            lines.insert(contentsOf: hostLines, at: index + 1)
        } else if !hostLines.isEmpty {
            webLines += ["  hosts:"] + hostLines
        }
        if let index = lines.firstIndex(of: "web:") {
            lines.insert(contentsOf: webLines, at: index + 1)
        } else {
            lines += ["web:"] + webLines
        }
        let text = lines.joined(separator: "\n") + "\n" + sections
        let url = cli.directory.appendingPathComponent("\(name).yaml")
        try Data(text.utf8).write(to: url)
        return url.path
    }
}

/// A temporary directory for the store and policies, and the nginx test site serving the booking
/// pages; both removed, and nginx stopped, on every path.
func withWebGateway<T>(_ body: (WebGateway) async throws -> T) async throws -> T {
    let directory = try Integration.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await TestSite.with(pages: ["page.html": BookingPage.trip]) { site in
        try await body(WebGateway(cli: GatewayCLI(directory: directory, nameserver: "127.0.0.1"), site: site))
    }
}

/// The booking page the test site serves as `/page.html` (every redirect of the site leads there):
/// a concert ticket and the hotel for that night, as a ticketing site's "your trip" page carries
/// them, with every property MARKUP.md requires of an EventReservation and a LodgingReservation.
enum BookingPage {
    static let eventReference = "E7T-40291"
    static let lodgingReference = "HX-88213"

    static let trip = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>Your trip to Stockholm</title>
        <script type="application/ld+json">
        {"@context": "https://schema.org", "@type": "EventReservation", "reservationId": "\(eventReference)",
         "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "reservedTicket": {"@type": "Ticket", "ticketNumber": "T-40291-1", "ticketedSeat": {"@type": "Seat", "seatRow": "F", "seatNumber": "12"}},
         "reservationFor": {"@type": "MusicEvent", "name": "Nordic Strings in Concert",
          "startDate": "2027-05-14T19:30:00+02:00", "endDate": "2027-05-14T22:00:00+02:00",
          "location": {"@type": "Place", "name": "Konserthuset",
           "address": {"@type": "PostalAddress", "streetAddress": "Hötorget 8", "addressLocality": "Stockholm",
            "postalCode": "111 57", "addressCountry": "SE"}}}}
        </script>
        <script type="application/ld+json">
        {"@context": "https://schema.org", "@type": "LodgingReservation", "reservationId": "\(lodgingReference)",
         "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "checkinTime": "2027-05-14T15:00:00+02:00", "checkoutTime": "2027-05-15T11:00:00+02:00",
         "reservationFor": {"@type": "Hotel", "name": "Hotel Skeppsholmen", "telephone": "+46 8 407 23 00",
          "address": {"@type": "PostalAddress", "streetAddress": "Gröna gången 1", "addressLocality": "Stockholm",
           "postalCode": "111 86", "addressCountry": "SE"}}}
        </script></head>
        <body><h1>Your trip to Stockholm</h1>
        <p>Nordic Strings in Concert, Konserthuset, 14 May 2027 at 19:30: row F, seat 12 (booking E7T-40291).</p>
        <p>Hotel Skeppsholmen, one night from 14 May 2027 (booking HX-88213).</p>
        </body></html>

        """

    /// The page's size as served.
    static var bytes: Int { trip.utf8.count }
}
