import DNS
import Foundation
import TestSupport
import Testing

/// The `gateway` command line as a subprocess, against one SQLite store in a temporary directory.
/// Every command runs with that directory as its working directory, so nothing is found by
/// accident in the package root (policies, stores).
struct GatewayCLI {
    /// `.build/debug/gateway`, next to the test bundle (`swift build --build-tests` builds it).
    static let executable: String? = {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("gateway"))
        }
        candidates.append(Integration.packageRoot.appendingPathComponent(".build/debug/gateway"))
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    let directory: URL
    var store: String { directory.appendingPathComponent("g.sqlite").path }
    /// `--nameserver` for the commands that look up keys.
    var nameserver: String

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Standard output's lines, each one JSON value.
        var jsonLines: [Data] { stdout.split(separator: "\n").map { Data($0.utf8) } }
    }

    /// Runs `gateway ARGUMENTS --store S --policy P` (and `--nameserver N` when `resolver`).
    /// - Parameters:
    ///   - store: the `--store` given with the policy (default: this directory's SQLite file).
    ///   - environment: variables set for the command (`GATEWAY_STORE`, `PGPASSWORD`, ...).
    func run(
        _ arguments: [String], policy: String? = "development", resolver: Bool = false, nameserver: String? = nil,
        store: String? = nil, environment: [String: String] = [:]
    ) async throws -> Result {
        let gateway = try #require(Self.executable, "no gateway executable next to the tests: run swift build --build-tests")
        var full = arguments
        if let policy { full += ["--store", store ?? self.store, "--policy", policy] }
        if resolver { full += ["--nameserver", nameserver ?? self.nameserver] }
        // env -C: the working directory is the temporary directory, not the package root.
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let result = try await Integration.run("/usr/bin/env", ["-C", directory.path] + variables + [gateway] + full)
        return Result(status: result.status, stdout: result.text, stderr: result.error)
    }

    /// Writes `bytes` to a file in the temporary directory and returns its path.
    func write(_ bytes: [UInt8], to name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    // MARK: - Commands

    /// `gateway ingest email FILE --json`: one report.
    func ingest(
        _ file: String, owner: String? = nil, policy: String = "development", nameserver: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (IngestReport, Int32) {
        var arguments = ["ingest", "email", file, "--json"]
        if let owner { arguments += ["--owner", owner] }
        let result = try await run(arguments, policy: policy, resolver: true, nameserver: nameserver)
        let lines = result.jsonLines
        try #require(lines.count == 1, "ingest printed \(lines.count) lines; stderr: \(result.stderr)", sourceLocation: sourceLocation)
        return (try JSONDecoder().decode(IngestReport.self, from: lines[0]), result.status)
    }

    func reservations(owner: String) async throws -> [ShownReservation] {
        let result = try await run(["reservations", "list", "--owner", owner, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode([ShownReservation].self, from: Data(result.stdout.utf8))
    }

    func show(_ reference: String, owner: String) async throws -> [ShownReservation] {
        let result = try await run(["reservations", "show", reference, "--owner", owner, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.jsonLines.map { try JSONDecoder().decode(ShownReservation.self, from: $0) }
    }

    func log(domain: String) async throws -> [LogEntry] {
        let result = try await run(["log", "--domain", domain, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.jsonLines.map { try JSONDecoder().decode(LogEntry.self, from: $0) }
    }

    func flags(policy: String = "development") async throws -> [String: FlagStatus] {
        let result = try await run(["flags", "show", "--json"], policy: policy)
        #expect(result.status == 0, "\(result.stderr)")
        let statuses = try JSONDecoder().decode([FlagStatus].self, from: Data(result.stdout.utf8))
        return Dictionary(statuses.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// `gateway reservations export --owner X --ics`, parsed by Debian's python3-icalendar.
    func calendar(owner: String) async throws -> ParsedCalendar {
        let export = try await run(["reservations", "export", "--owner", owner, "--ics"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.hasPrefix("BEGIN:VCALENDAR\r\n"))
        let parsed = try await Integration.run(Integration.python, ["-c", ParsedCalendar.script], input: Array(export.stdout.utf8))
        try #require(parsed.status == 0, "python3-icalendar could not read the export: \(parsed.error)")
        return try JSONDecoder().decode(ParsedCalendar.self, from: Data(parsed.output))
    }
}

// MARK: - What the commands print with --json

/// `gateway ingest --json` (Ingestion.IngestionReport).
struct IngestReport: Decodable {
    struct Item: Decodable {
        var kind: String?
        var containerReference: String?
        var itemReference: String
        var summary: String
        var outcome: String
        var version: Int?
        var owners: [String]
        var codes: [String]
        var warnings: [String]
    }

    var source: String
    var channel: String
    var verdict: String
    var codes: [String]
    var sourceDomain: String?
    var dkim: String?
    var flags: [String]
    var owners: [String]
    var items: [Item]
    var diagnostics: [String]
    var logID: Int64?
    var spoolID: Int64?
    var dryRun: Bool
}

/// `gateway reservations list|show --json`.
struct ShownReservation: Decodable {
    var id: Int64
    var owner: String
    var sourceDomain: String
    var containerReference: String
    var itemReference: String
    var kind: String
    var status: String
    var version: Int
    var flags: [String]
    var summary: String
    var history: [String]?
}

/// `gateway log --json` (Store.DecisionLogEntry).
struct LogEntry: Decodable {
    struct Outcome: Decodable {
        var outcome: String
        var version: Int?
        var count: Int?
    }

    struct Reservation: Decodable {
        var itemReference: String
        var owner: String?
        var outcome: Outcome?
        var codes: [String]?
    }

    var id: Int64?
    /// ISO 8601.
    var time: String
    var channel: String
    var sourceDomain: String?
    var source: String?
    var owners: [String]
    var verdict: String
    var codes: [String]
    var flags: [String]
    var reservations: [Reservation]
}

/// `gateway flags show --json`.
struct FlagStatus: Decodable {
    var name: String
    var enabled: Bool
    var expired: Bool
    /// ISO 8601.
    var expiresAt: String?
    var setBy: String?
}

/// A time as the commands print it in JSON (ISO 8601, whole seconds).
func isoTime(_ text: String?) -> Date? {
    text.flatMap { try? Date($0, strategy: .iso8601) }
}

/// `gateway register --json` (Store.RegisteredDomain).
struct Registration: Decodable {
    var domain: String
    var status: String
}

/// What python3-icalendar read from an export.
struct ParsedCalendar: Decodable {
    struct Event: Decodable {
        var uid: String
        var sequence: Int
        var status: String
        var summary: String
        /// ISO 8601 as Python writes it: `2027-03-05T04:15:00+00:00`.
        var dtstart: String
        var dtend: String?
        var description: String?
    }

    var version: String
    var prodid: String
    var events: [Event]

    /// Reads iCalendar on stdin with icalendar.Calendar.from_ical and prints its events as JSON.
    static let script = """
        import icalendar, json, sys
        cal = icalendar.Calendar.from_ical(sys.stdin.read())
        events = []
        for e in cal.walk('VEVENT'):
            events.append({
                'uid': str(e['UID']), 'sequence': int(e.get('SEQUENCE', 0)), 'status': str(e['STATUS']),
                'summary': str(e['SUMMARY']), 'dtstart': e.decoded('DTSTART').isoformat(),
                'dtend': e.decoded('DTEND').isoformat() if 'DTEND' in e else None,
                'description': str(e['DESCRIPTION']) if 'DESCRIPTION' in e else None,
            })
        print(json.dumps({'version': str(cal['VERSION']), 'prodid': str(cal['PRODID']), 'events': events}))
        """
}

// MARK: - Senders and their keys in DNS

/// A sending domain with a key made by `gateway dkim keygen` and published in dnsmasq.
struct Sender {
    var domain: String
    var selector: String
    var keyPath: String
    var record: DNSMasq.Record

    /// `gateway dkim keygen`: writes the key and parses the record line it prints
    /// (`SEL._domainkey.DOMAIN. IN TXT "..." "..."`).
    static func make(_ domain: String, selector: String, algorithm: String, in directory: URL) async throws -> Sender {
        let gateway = try #require(GatewayCLI.executable)
        let keyPath = directory.appendingPathComponent("\(selector).\(domain).pem").path
        let result = try await Integration.run(
            gateway, ["dkim", "keygen", "--domain", domain, "--selector", selector, "--algorithm", algorithm, "--out", keyPath])
        try #require(result.status == 0, "keygen: \(result.error)")
        let line = result.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let name = try #require(line.split(separator: " ").first.map { String($0.dropLast()) })
        #expect(name == "\(selector)._domainkey.\(domain)")
        // The quoted strings, concatenated: the record's value (RFC 6376 §3.6.2.2).
        let strings = line.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        return Sender(domain: domain, selector: selector, keyPath: keyPath, record: .txt(name, strings.joined()))
    }

    /// `gateway dkim sign`: the message with a DKIM-Signature on top.
    func sign(_ message: [UInt8], cli: GatewayCLI, name: String, canonicalization: String = "relaxed/relaxed") async throws -> String {
        let gateway = try #require(GatewayCLI.executable)
        let unsigned = try cli.write(message, to: "\(name).unsigned.eml")
        let result = try await Integration.run(
            gateway, ["dkim", "sign", unsigned, "--domain", domain, "--selector", selector, "--key", keyPath, "--canonicalization", canonicalization])
        try #require(result.status == 0, "sign: \(result.error)")
        return try cli.write(result.output, to: "\(name).eml")
    }
}

/// A temporary directory with a store path, the senders' keys, and dnsmasq serving their records
/// (names under `example` without a record answer NXDOMAIN). Everything is removed afterwards.
func withGateway<T>(
    senders specs: [(domain: String, selector: String, algorithm: String)],
    _ body: (GatewayCLI, [String: Sender], DNSMasq) async throws -> T
) async throws -> T {
    let directory = try Integration.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var senders: [String: Sender] = [:]
    for spec in specs {
        senders[spec.domain] = try await Sender.make(spec.domain, selector: spec.selector, algorithm: spec.algorithm, in: directory)
    }
    return try await withDNSMasq(records: senders.values.map(\.record), localDomains: ["example"]) { dnsmasq in
        let cli = GatewayCLI(directory: directory, nameserver: dnsmasq.nameserver.description)
        return try await body(cli, senders, dnsmasq)
    }
}
