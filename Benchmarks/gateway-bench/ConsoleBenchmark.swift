import Foundation
import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import SQLiteStore
import Store

/// The console's pages (issue 20: under 50 ms p99 with 10,000 decision log entries): the release `gateway serve` on a
/// store seeded with 10,000 log entries (most of them the bench sender's: channels, verdicts and codes mixed, a
/// fortnight of times) and a few admitted bookings, signed in as the sender and as an owner the way a browser is
/// (the sign-in form, its cookie and form token). Each page is requested one after another, each request on a new
/// connection as the API's bench client makes them, and reported as p50/p99/max beside a bare `/healthz` measured
/// the same way in the same run.
///
///   gateway-bench console [--console-entries N (10000)] [--console-requests N (300)]
struct ConsoleBenchmark {
    var entries: Int
    var requests: Int
    static let target = 0.050

    typealias Failure = BenchFailure

    func run() async throws {
        report("== Console pages (release gateway serve; one request at a time, each on a new connection) ==")
        let directoryOfBench = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let gateway = directoryOfBench.appendingPathComponent("gateway").path
        guard FileManager.default.isExecutableFile(atPath: gateway) else {
            throw Failure("no \(gateway); run swift build -c release --product gateway --product gateway-worker")
        }
        let (messages, zone) = try IngestBenchmark.reportedCorpus(count: 30, detail: ", bookings for the owner page")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-console-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let zonePath = directory.appendingPathComponent("keys.zone").path
        try zone.write(toFile: zonePath, atomically: true, encoding: .utf8)
        let storePath = directory.appendingPathComponent("gateway.sqlite").path

        let seeded = Date()
        try await Self.seed(storePath: storePath, count: entries)
        report(String(format: "store: %d decision log entries seeded in %.1f s", entries, Date().timeIntervalSince(seeded)))

        let adminToken = (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined()
        let server = try await ServerProcess.start(
            executable: gateway,
            arguments: [
                "serve", "--store", storePath, "--policy", "development", "--keys", zonePath, "--http", "127.0.0.1:0",
                "--lmtp", "127.0.0.1:0", "--log-level", "warning",
            ],
            environment: ["GATEWAY_ADMIN_TOKEN": adminToken], logPath: directory.appendingPathComponent("server.log").path)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var failure: (any Error)?
        do {
            try await measure(ControlClient(group: group, port: server.httpPort), admin: adminToken, messages: messages)
        } catch {
            failure = error
        }
        _ = await server.stop()
        try await group.shutdownGracefully()
        if let failure { throw failure }
    }

    /// Appends `count` decision log entries: 80% from bench.example (and a subdomain), the rest from two others;
    /// 70% admitted, 20% rejected with one of four codes, 10% partial; the four channels; over 14 days.
    static func seed(storePath: String, count: Int) async throws {
        let store = try SQLiteStore(path: storePath)
        let codes = ["dkim.body-hash-mismatch", "registry.domain-not-registered", "markup.missing-property", "admission.unsigned"]
        let start = Date().addingTimeInterval(-14 * 86_400)
        let owner = OwnerAddress("eva@guest.example.net")!
        var random = SplitMix64(seed: 20_261_121)
        let batch = 64
        var index = 0
        while index < count {
            let upper = min(index + batch, count)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in index..<upper {
                    let roll = random.next() % 100
                    let domain = roll < 70 ? "bench.example" : roll < 80 ? "mail.bench.example" : roll < 90 ? "other.example" : "third.example"
                    let verdictRoll = random.next() % 10
                    let verdict: DecisionLogEntry.Verdict = verdictRoll < 7 ? .admitted : verdictRoll < 9 ? .rejected : .partial
                    let code = codes[Int(random.next() % UInt64(codes.count))]
                    let channel = IngestionChannel.allCases[number % IngestionChannel.allCases.count]
                    let entry = DecisionLogEntry(
                        time: start.addingTimeInterval(Double(number) * 14 * 86_400 / Double(count)), channel: channel,
                        sourceDomain: domain, source: "<B\(number)@\(domain)>", owners: [owner],
                        contentHash: String(format: "%064x", number), verdict: verdict,
                        codes: verdict == .rejected ? [code] : [],
                        reservations: verdict == .partial
                            ? [ReservationOutcomeRecord(itemReference: "B\(number)-2", owner: owner, outcome: nil, codes: [code])] : [])
                    group.addTask { _ = try await store.ingest([], decision: entry) }
                }
                try await group.waitForAll()
            }
            index = upper
        }
        try await store.close()
    }

    /// Signs in as a browser does. - Returns: the session cookie (`name=value`).
    static func signIn(_ client: ControlClient, token: String) async throws -> String {
        let form = try await client.request(.GET, "/console/sign-in")
        guard let nonceCookie = form.values("Set-Cookie").first?.split(separator: ";").first.map(String.init),
            let range = form.text.range(of: #"name="form-token" value=""#),
            let end = form.text[range.upperBound...].firstIndex(of: "\"")
        else { throw Failure("GET /console/sign-in gave no sign-in form (\(form.status))") }
        let nonce = String(form.text[range.upperBound..<end])
        let body = "form-token=\(nonce)&token=\(token)"
        let signedIn = try await client.request(
            .POST, "/console/sign-in",
            fields: [("Cookie", nonceCookie), ("Origin", "http://\(client.host):\(client.port)")], raw: Array(body.utf8),
            contentType: "application/x-www-form-urlencoded")
        guard signedIn.status == 303,
            let session = signedIn.values("Set-Cookie").first(where: { $0.hasPrefix("__Host-gateway-session=") })
        else { throw Failure("POST /console/sign-in answered \(signedIn.status), no session") }
        return String(session.split(separator: ";")[0])
    }

    func measure(_ client: ControlClient, admin: String, messages: [[UInt8]]) async throws {
        let registered = try await client.request(
            .POST, "/v1/domains", token: admin, json: ["domain": "bench.example", "contact": "markup@bench.example"])
        guard registered.status == 201,
            let object = try JSONSerialization.jsonObject(with: Data(registered.body)) as? [String: Any],
            let sender = (object["senderToken"] as? [String: Any])?["secret"] as? String
        else { throw Failure("POST /v1/domains answered \(registered.status)") }
        for message in messages {
            let submitted = try await client.request(.POST, "/v1/messages", token: sender, raw: message, contentType: "message/rfc822")
            guard submitted.status == 200 else { throw Failure("POST /v1/messages answered \(submitted.status)") }
        }
        let issued = try await client.request(
            .POST, "/v1/tokens", token: admin, json: ["role": "owner", "subject": "eva@guest.example.net"])
        guard let owner = (try JSONSerialization.jsonObject(with: Data(issued.body)) as? [String: Any])?["secret"] as? String
        else { throw Failure("POST /v1/tokens answered \(issued.status)") }

        let senderCookie = try await Self.signIn(client, token: sender)
        let ownerCookie = try await Self.signIn(client, token: owner)
        let logPage = try await client.request(.GET, "/console/log", fields: [("Cookie", senderCookie)])
        let rows = logPage.text.components(separatedBy: "<tr data-id=\"").count - 1
        let newest = logPage.text.components(separatedBy: "<tr data-id=\"").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        report("signed in as bench.example's sender and as eva@guest.example.net; the log's first page shows \(rows) rows")

        let pages: [(String, String, String)] = [
            ("healthz (baseline)", "/healthz", ""),
            ("sign-in form", "/console/sign-in", ""),
            ("tester", "/console/tester", senderCookie),
            ("log, newest 50", "/console/log", senderCookie),
            ("log, filtered", "/console/log?verdict=rejected&channel=lmtp&code=dkim.body-hash-mismatch", senderCookie),
            ("log, since a date", "/console/log?since=\(Self.sinceParameter())", senderCookie),
            ("log, paged back", "/console/log?before=\(max(1, newest / 2))", senderCookie),
            ("log, an entry", "/console/log/\(max(1, newest / 2))", senderCookie),
            ("log, live updates", "/console/log/updates?after=\(max(0, newest - 5))", senderCookie),
            ("domain", "/console/domain", senderCookie),
            ("owner, reservations", "/console/owner", ownerCookie),
        ]
        report("page                    requests   p50 ms   p99 ms   max ms   p99 vs healthz")
        var baseline = 0.0
        var worst = 0.0
        for (name, path, cookie) in pages {
            let fields = cookie.isEmpty ? [] : [("Cookie", cookie)]
            for _ in 0..<20 { _ = try await client.request(.GET, path, fields: fields) }  // warm-up
            var latencies: [Int64] = []
            latencies.reserveCapacity(requests)
            let clock = ContinuousClock()
            for _ in 0..<requests {
                let started = clock.now
                let response = try await client.request(.GET, path, fields: fields)
                let elapsed = clock.now - started
                guard response.status == 200 else { throw Failure("GET \(path) answered \(response.status)") }
                latencies.append(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
            }
            let measured = Latencies(latencies)
            let p99 = measured.percentile(0.99)
            if path == "/healthz" { baseline = p99 } else { worst = max(worst, p99) }
            report(
                name.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(
                        format: "%8d %8.2f %8.2f %8.2f   %6.1f×", requests, measured.percentile(0.5) * 1000, p99 * 1000,
                        measured.maximum * 1000, baseline > 0 ? p99 / baseline : 1))
        }
        report(
            String(format: "worst page p99 %.1f ms with %d log entries: target < %.0f ms ", worst * 1000, entries, Self.target * 1000)
                + (worst < Self.target ? "met" : "NOT met"))
    }

    /// Seven days ago, as a `datetime-local` value.
    static func sinceParameter() -> String {
        let date = Date().addingTimeInterval(-7 * 86_400)
        return String(date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false)).prefix(16))
    }
}
