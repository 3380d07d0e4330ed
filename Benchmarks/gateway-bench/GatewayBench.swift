import ArgumentParser
import EventLoopSupport
import Foundation

/// `make bench`: throughput of the gateway's hot paths on generated corpora, each printed beside a baseline measured
/// in the same run (OpenSSL's own speed, libopendkim, extruct, in-process extraction, a bare `/healthz`, the markup
/// path), so figures read as ratios.
@main
struct GatewayBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway-bench",
        abstract: "Measure the gateway's throughput against baselines from the same run.",
        discussion: """
            Suites (all of them, in this order, when none is named):
              dkim     DKIM verification on one core against openssl speed and libopendkim
              extract  extraction MB/s in-process, through the sandbox, and against extruct
              ingest   Ingestor.ingestEmail end to end (DKIM, sandbox, resolve, admit, store): SQLite, and
                       PostgreSQL with one node and with two
              stream   a mixed mail stream (95% without markup, 2 KB to 10 MB, a tenth with attachments) against
                       the markup path, in-process and through gateway serve over LMTP (TCP, then a Unix socket)
              serve    gateway serve under HTTP and LMTP load, then a kill -9 crash audit
              publish  gateway serve's ingest rate with 0 and with 3 webhook subscriptions, and delivery latency
              console  the console's pages (p50/p99) with 10,000 decision log entries against /healthz

            The serve and stream suites start the release gateway next to this binary; it is killed when the \
            bench stops on any path (Ctrl-C, SIGTERM, a failure: its parent-death signal and this process's \
            handlers). Exit status: 0 when every suite ran and passed its checks, 1 when a check failed.
            """)

    enum Suite: String, CaseIterable, ExpressibleByArgument {
        case dkim, extract, ingest, stream, serve, publish, console
    }

    @Argument(help: "The suites to run (default: all).")
    var suites: [Suite] = []

    @Option(help: "Messages in the dkim and ingest corpora.")
    var messages = 3000

    @Option(help: "Documents in the extract corpus.")
    var documents = 300

    @Option(help: "Emails in flight at once in the ingest and stream suites.")
    var inFlight = 16

    @Option(help: "Sandbox workers for the ingest suite (default: the gateway's, two per core).")
    var workers: Int?

    @Option(help: "Group-commit transactions under way at once on PostgreSQL in the ingest suite (default: the store's, 2).")
    var postgresLanes: Int?

    @Option(
        help: """
            Milliseconds a lone ingestion's commit waits for another on its way, in the ingest and stream suites' \
            stores (default: the stores' own, 2; 0: never).
            """)
    var commitLinger: Double?

    @Option(help: "Seconds of serve's main run.")
    var duration = 20.0

    @Option(help: "Seconds of each concurrency level of serve's sweep (0: no sweep).")
    var sweepSeconds = 3.0

    @Option(help: "Signed messages serve generates (default: enough for about 1,100 emails/s over every phase).")
    var serveMessages: Int?

    @Option(help: "HTTP connections for serve (skips the sweep).")
    var httpConnections: Int?

    @Option(help: "LMTP sessions for serve (skips the sweep), and for the stream suite (default 8).")
    var lmtpSessions: Int?

    @Option(help: "Acknowledged deliveries in serve's crash phase before the kill -9.")
    var crashAfter = 3000

    @Option(help: "Event loop threads of the load clients (they share the cores with the server).")
    var clientThreads = 1

    @Option(
        help: """
            Rounds of the stream suite, in-process and over LMTP: each round a pass of the markup path, then one of \
            the mixed stream, with confirmations of its own; the ratios are the rounds' medians.
            """)
    var streamRounds = 3

    @Option(help: "Messages in the stream suite's mixed corpus (default 4000).")
    var streamMessages = 4000

    @Option(help: "Seconds of each phase of the publish suite.")
    var publishSeconds = 8.0

    @Option(help: "HTTP connections and LMTP sessions of the publish suite.")
    var publishConnections = 8

    @Option(help: "Rounds of the publish suite (each: a phase without and one with subscriptions).")
    var publishRounds = 2

    @Option(help: "The served gateway's webhook-priority in the publish suite: idle or a nice value 0-19 (default: gateway serve's own, idle).")
    var publishWebhookPriority: String?

    @Option(help: "The served gateway's webhook-busy-share in the publish suite (default: gateway serve's own, 0.1; 1: never paced).")
    var publishWebhookBusyShare: Double?

    @Option(help: "The priority of the publish suite's webhook receiver thread in this process: idle (the default: it stands in for receivers on other machines, so it takes only the CPU the gateway leaves) or a nice value 0-19 (0: as the load's clients).")
    var publishReceiverPriority = "idle"

    @Option(help: "The publish suite's paced phase offers this share of the rate without subscriptions (0 skips it).")
    var publishPacedShare = 0.6

    @Option(help: "Decision log entries the console suite's store holds.")
    var consoleEntries = 10_000

    @Option(help: "Requests per page in the console suite.")
    var consoleRequests = 300

    func validate() throws {
        guard messages > 0, documents > 0, inFlight > 0, duration > 0, sweepSeconds >= 0, crashAfter > 0,
            clientThreads > 0, streamRounds > 0, streamMessages >= 100, publishSeconds > 0, publishConnections > 0,
            publishRounds > 0, consoleEntries > 0, consoleRequests > 0, (0...1).contains(publishPacedShare),
            publishWebhookPriority.map({ BackgroundEventLoops.Priority(setting: $0) != nil }) ?? true,
            BackgroundEventLoops.Priority(setting: publishReceiverPriority) != nil,
            publishWebhookBusyShare.map({ (0.01...1).contains($0) }) ?? true
        else {
            throw ValidationError(
                "counts and durations must be positive (--stream-messages at least 100, --publish-paced-share 0...1, "
                    + "--publish-webhook-priority and --publish-receiver-priority idle or 0...19, --publish-webhook-busy-share 0.01...1)")
        }
        if let workers, workers <= 0 { throw ValidationError("--workers must be positive") }
        if let postgresLanes, postgresLanes <= 0 { throw ValidationError("--postgres-lanes must be positive") }
        if let commitLinger, !(0...1000).contains(commitLinger) {
            throw ValidationError("--commit-linger must be 0...1000 ms")
        }
    }

    var commitLingerDuration: Duration? { commitLinger.map { .microseconds(Int(($0 * 1000).rounded())) } }

    func run() async throws {
        ChildProcesses.installCleanup()
        defer { ChildProcesses.holdIfStopping() }
        let chosen = suites.isEmpty ? Suite.allCases : Suite.allCases.filter(suites.contains)
        do {
            for suite in chosen {
                switch suite {
                case .dkim: try await DKIMBenchmark(messageCount: messages).run()
                case .extract: try await ExtractionBenchmark(documentCount: documents).run()
                case .ingest:
                    try await IngestBenchmark(
                        messageCount: messages, concurrency: inFlight, workerCount: workers, postgresLanes: postgresLanes,
                        commitLinger: commitLingerDuration
                    ).run()
                case .stream:
                    try await StreamBenchmark(
                        messageCount: streamMessages, inFlight: inFlight, lmtpSessions: lmtpSessions ?? 8,
                        rounds: streamRounds, clientThreads: clientThreads, commitLinger: commitLingerDuration
                    ).run()
                case .serve:
                    try await ServeBenchmark(
                        duration: duration, sweepSeconds: sweepSeconds, messageCount: serveMessages,
                        httpConnections: httpConnections, lmtpSessions: lmtpSessions, crashAfterAcknowledged: crashAfter,
                        clientThreads: clientThreads
                    ).run()
                case .publish:
                    try await PublishBenchmark(
                        seconds: publishSeconds, connections: publishConnections, rounds: publishRounds,
                        webhookPriority: publishWebhookPriority, webhookBusyShare: publishWebhookBusyShare,
                        receiverPriority: BackgroundEventLoops.Priority(setting: publishReceiverPriority) ?? .idle,
                        pacedShare: publishPacedShare
                    ).run()
                case .console: try await ConsoleBenchmark(entries: consoleEntries, requests: consoleRequests).run()
                }
            }
        } catch let failure as BenchFailure {
            report("ERROR: \(failure.description)")
            ChildProcesses.killAll()
            throw ExitCode(1)
        }
        ChildProcesses.killAll()
    }
}

/// A check of the bench failed: the run fails (exit status 1) after the servers it started are stopped.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Writes a line at once (unbuffered), so progress shows when the output goes to a file or a pipe.
func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
