import Admission
import DNS
import Foundation
import Glibc
import Ingestion
import MailMessage
import NIOCore
import NIOHTTP1
import NIOPosix
import Sandbox
import SQLiteStore
import Store

/// The mail stream a gateway behind an MX sees (`gateway-bench stream`; ``StreamCorpus``): emails/s of the mixed
/// stream against emails/s of the markup path alone, in the same run, the two ways mail reaches the gateway:
///
/// - in-process, through `Ingestor.ingestEmail` (what `gateway ingest email` and `POST /v1/messages` run: the
///   prefilter, then DKIM, sandboxed extraction and the SQLite store for the messages with markup), `inFlight` at a
///   time;
/// - through the release `gateway serve` over LMTP from this process (`lmtpSessions` pipelining sessions), as an MTA
///   delivers, with the server's CPU per email and its resident memory before, between and after two passes of
///   the mixed stream (it must not grow); over TCP, then to a second server on a Unix socket (`--lmtp unix:PATH`), as
///   an MTA on the same machine delivers.
///
/// Each way runs `rounds` rounds, each a pass of the markup path and then one of the mixed stream, with confirmations of
/// their own (every confirmation is ingested once): the machine's other load comes and goes between passes, so a ratio
/// is taken within a round and the rounds' median is the figure.
///
/// Target: the mixed stream at least 10 times the markup path's emails/s, on 2 cores.
struct StreamBenchmark {
    var messageCount: Int
    var inFlight: Int
    var lmtpSessions: Int
    var rounds: Int
    var clientThreads: Int
    /// The in-process store's commit linger (`--commit-linger MS`); the store's own when not given.
    var commitLinger: Duration?

    static let target = 10.0

    /// One message of the stream: one of the pool's, or a signed confirmation.
    enum Entry {
        case pool(Int)
        case markup([UInt8])
    }
    /// Distinct messages without markup the stream draws from.
    static let poolSize = 400

    /// One round's messages, one way: the markup path's confirmations, then the mixed stream.
    struct Round<Message> {
        var markup: [Message]
        var mixed: [Message]
    }

    /// Confirmations each way warms up with (workers, key cache, tables) before its first round.
    static let warmUpCount = 20

    func run() async throws {
        report("== Mixed mail stream: 95% without markup (2 KB to 10 MB, a tenth with attachments) vs the markup path ==")
        let started = ContinuousClock.now
        let markupCount = Int(Double(messageCount) * StreamCorpus.markupShare)
        let markupOnly = max(500, markupCount * 4)
        // Unique signed confirmations: each way's warm-up, then per round the markup path's and the mixed stream's.
        let perWay = Self.warmUpCount + rounds * (markupOnly + markupCount)
        let (signed, zone) = try IngestBenchmark.corpus(count: 2 * perWay)
        var nextSigned = 0
        func take(_ count: Int) -> ArraySlice<[UInt8]> {
            defer { nextSigned += count }
            return signed[nextSigned..<(nextSigned + count)]
        }
        let pool = StreamCorpus.messagesWithoutMarkup(count: Self.poolSize, seed: 20_261_125)
        // The stream: which messages, in order (deterministic, the same in every round); markup ones spread evenly. A
        // pool message is given by its index, so that the LMTP run prepares each once.
        var generator = SplitMix64(seed: 20_261_126)
        let poolOrder = (0..<messageCount).map { _ in Int(generator.next() % UInt64(pool.count)) }
        func stream(markup: ArraySlice<[UInt8]>) -> [Entry] {
            var entries: [Entry] = []
            entries.reserveCapacity(messageCount)
            var next = markup.startIndex
            for index in 0..<messageCount {
                if next < markup.endIndex, index % (messageCount / max(1, markup.count)) == 0 {
                    entries.append(.markup(markup[next]))
                    next += 1
                } else {
                    entries.append(.pool(poolOrder[index]))
                }
            }
            return entries
        }
        func bytes(_ entry: Entry) -> [UInt8] {
            switch entry {
            case .pool(let index): pool[index].bytes
            case .markup(let message): message
            }
        }
        let warmUpInProcess = Array(take(Self.warmUpCount))
        let inProcessRounds = (0..<rounds).map { _ in
            Round(markup: Array(take(markupOnly)), mixed: stream(markup: take(markupCount)).map(bytes))
        }
        let poolPrepared = pool.map { LoadCorpus.prepared($0.bytes) }
        func prepared(_ entry: Entry) -> (message: ByteBuffer, data: ByteBuffer) {
            switch entry {
            case .pool(let index): poolPrepared[index]
            case .markup(let message): LoadCorpus.prepared(message)
            }
        }
        let warmUpServed = take(Self.warmUpCount).map(LoadCorpus.prepared)
        let servedRounds = (0..<rounds).map { _ in
            Round(markup: take(markupOnly).map(LoadCorpus.prepared), mixed: stream(markup: take(markupCount)).map(prepared))
        }
        let mixed = inProcessRounds[0].mixed
        let streamBytes = mixed.reduce(0) { $0 + $1.count }
        let sizes = mixed.map(\.count).sorted()
        report(
            String(
                format: "corpus: a stream of %d messages (%d with markup, %d with attachments), %.0f MB, mean %.0f KB, "
                    + "median %.0f KB, largest %.1f MB, from a pool of %d without markup; %d rounds each way, each with "
                    + "its own %d confirmations for the markup path and %d in the stream; generated in %.1f s",
                messageCount, markupCount, mixed.count { $0.count > 150_000 }, Double(streamBytes) / 1e6,
                Double(streamBytes) / Double(messageCount) / 1e3, Double(sizes[sizes.count / 2]) / 1e3,
                Double(sizes.last ?? 0) / 1e6, Self.poolSize, rounds, markupOnly, markupCount,
                (ContinuousClock.now - started).seconds))

        try await inProcess(rounds: inProcessRounds, warmUp: warmUpInProcess, confirmations: markupCount, zone: zone)
        try await served(rounds: servedRounds, warmUp: warmUpServed, zone: zone, streamBytes: streamBytes)
        // The same rounds again to a new server (a store of its own) on a Unix socket, as an MTA on the same machine
        // delivers (Postfix's lmtp:unix:): no TCP on either side.
        try await served(
            rounds: servedRounds, warmUp: warmUpServed, zone: zone, streamBytes: streamBytes, overUnixSocket: true)
    }

    /// One round's line: each pass's emails/s and CPU per email (seconds), and the two ratios.
    static func reportRound(
        _ way: String, _ index: Int, cpu: String, markup: (rate: Double, cpu: Double), mixed: (rate: Double, cpu: Double)
    ) {
        report(
            String(
                format: "  %@ round %d: markup path %.0f emails/s (%@ %.2f ms per email), mixed stream %.0f emails/s "
                    + "(%@ %.3f ms per email): %.1f×, by %@ %.1f×",
                way, index + 1, markup.rate, cpu, markup.cpu * 1e3, mixed.rate, cpu, mixed.cpu * 1e3,
                mixed.rate / markup.rate, cpu, markup.cpu / mixed.cpu))
    }

    /// The middle value (the mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    // MARK: - In-process

    private func inProcess(
        rounds: [Round<[UInt8]>], warmUp: [[UInt8]], confirmations: Int, zone: String
    ) async throws {
        let workerPath = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("gateway-worker").path
        guard FileManager.default.isExecutableFile(atPath: workerPath) else {
            throw BenchFailure("stream: no gateway-worker next to the bench; run swift build -c release --product gateway-worker")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-stream-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        ChildProcesses.removeOnSignal(directory.path)
        defer { try? FileManager.default.removeItem(at: directory) }
        var policy = Policy()
        policy.name = "bench"
        policy.registration.approveOnRegister = true
        var configuration = WorkerPool.Configuration(workerExecutable: workerPath)
        configuration.maxDocumentBytes = policy.limits.maxMessageBytes
        configuration.confinement.addressSpaceBytes = UInt64(policy.sandbox.workerMemoryBytes)
        var storeConfiguration = SQLiteStore.Configuration()
        if let commitLinger { storeConfiguration.commitLinger = commitLinger }
        let store = try SQLiteStore(
            path: directory.appendingPathComponent("stream.sqlite").path, configuration: storeConfiguration)
        defer { try? store.closeNow() }
        let pool = try await WorkerPool(configuration: configuration)
        let ingestor = Ingestor(
            environment: Ingestor.Environment(
                store: store, policy: policy, resolver: CachingResolver(upstream: try ZoneFileResolver(zoneText: zone)),
                extractor: SandboxedExtractor(pool: pool), publicSuffixes: try PublicSuffixList()))
        _ = try await ingestor.registry.register("bench.example", contact: nil, by: "gateway-bench")
        for message in warmUp { _ = try await ingestor.ingestEmail(message, source: "warm-up") }

        func measure(
            _ messages: [[UInt8]]
        ) async throws -> (rate: Double, cpu: Double, workerCPU: Double, verdicts: [DecisionLogEntry.Verdict: Int]) {
            let before = CPUTime.now()
            let workersBefore = CPUTime.workers(of: pool)
            let start = ContinuousClock.now
            let verdicts = try await IngestBenchmark.ingestAll(messages, with: ingestor, concurrency: inFlight)
            let elapsed = (ContinuousClock.now - start).seconds
            let workers = CPUTime.workers(of: pool) - workersBefore
            let cpu = (CPUTime.now() - before).process + workers
            return (Double(messages.count) / elapsed, cpu / Double(messages.count), workers / Double(messages.count), verdicts)
        }
        typealias Run = (rate: Double, cpu: Double, workerCPU: Double, verdicts: [DecisionLogEntry.Verdict: Int])
        var runs: [(markup: Run, mixed: Run)] = []
        var mixedLingers = CommitLingerStatistics()
        for (index, round) in rounds.enumerated() {
            let markupRun = try await measure(round.markup)
            let lingersBefore = store.commitLingers ?? CommitLingerStatistics()
            let mixedRun = try await measure(round.mixed)
            mixedLingers.add((store.commitLingers ?? CommitLingerStatistics()).since(lingersBefore))
            guard mixedRun.verdicts[.admitted, default: 0] == confirmations,
                markupRun.verdicts[.admitted, default: 0] == round.markup.count
            else { throw BenchFailure("stream: not every confirmation was admitted in round \(index + 1)") }
            Self.reportRound(
                "in-process", index, cpu: "CPU", markup: (markupRun.rate, markupRun.cpu), mixed: (mixedRun.rate, mixedRun.cpu))
            runs.append((markupRun, mixedRun))
        }
        // The stream's messages without markup alone, the same way: what one of them costs the whole path (the
        // prefilter, the task, the report), apart from the markup messages' share of the mixed stream's CPU.
        let mixed = rounds[0].mixed
        let withoutMarkup = mixed.filter { !ingestor.prefilter($0).hasMarkup }
        let withoutMarkupRun = try await measure(withoutMarkup)
        await pool.shutdown()
        // The prefilter alone, one message after another on one core, over the messages without markup.
        let prefilterBytes = withoutMarkup.reduce(0) { $0 + $1.count }
        var prefilterCPU = Double.infinity
        for _ in 0..<3 {
            let before = CPUTime.now().process
            for message in withoutMarkup where ingestor.prefilter(message).hasMarkup { throw BenchFailure("stream: markup?") }
            prefilterCPU = min(prefilterCPU, CPUTime.now().process - before)
        }
        report(
            String(
                format: "prefilter alone (markupEvidence on the bytes as received, one core): %.1f µs per message without markup, %.2f GB/s",
                prefilterCPU / Double(withoutMarkup.count) * 1e6, Double(prefilterBytes) / prefilterCPU / 1e9))
        let mixedCPU = Self.median(runs.map(\.mixed.cpu))
        report(
            String(
                format: "messages without markup alone through Ingestor.ingestEmail: CPU %.1f µs per email (%.0f emails/s); "
                    + "the markup messages' share of the mixed stream's CPU: %.1f µs per email (the rounds' median)",
                withoutMarkupRun.cpu * 1e6, withoutMarkupRun.rate,
                (mixedCPU * Double(mixed.count) - withoutMarkupRun.cpu * Double(withoutMarkup.count)) / Double(mixed.count) * 1e6))
        let ratio = Self.median(runs.map { $0.mixed.rate / $0.markup.rate })
        let meanBytes = Double(mixed.reduce(0) { $0 + $1.count }) / Double(mixed.count)
        report(
            String(
                format: "in-process (Ingestor.ingestEmail, %d in flight; the median of %d rounds): markup path %.0f emails/s "
                    + "(CPU %.2f ms per email); mixed stream %.0f emails/s, %.0f MB/s (CPU %.3f ms per email): %.1f× the "
                    + "markup path (target ≥ %.0f×: %@); by CPU per email %.1f×",
                inFlight, runs.count, Self.median(runs.map(\.markup.rate)), Self.median(runs.map(\.markup.cpu)) * 1e3,
                Self.median(runs.map(\.mixed.rate)), Self.median(runs.map(\.mixed.rate)) * meanBytes / 1e6, mixedCPU * 1e3,
                ratio, Self.target, ratio >= Self.target ? "met" : "NOT met",
                Self.median(runs.map { $0.markup.cpu / $0.mixed.cpu })))
        report(
            String(
                format: "  of which the workers (sandboxed extraction): markup path %.2f ms per email, mixed stream %.3f ms per email",
                Self.median(runs.map(\.markup.workerCPU)) * 1e3, Self.median(runs.map(\.mixed.workerCPU)) * 1e3))
        let linger = storeConfiguration.commitLinger
        report(
            String(
                format: "  commit linger %.1f ms: in the mixed stream's passes, %d lone commits waited for a message "
                    + "on its way: %d shared their commit with it, %d found it had nothing to write, %d waited the whole "
                    + "linger; %.2f ms waited on average",
                linger.seconds * 1e3, mixedLingers.began,
                mixedLingers.joined, mixedLingers.noneLeft, mixedLingers.timedOut,
                mixedLingers.began == 0 ? 0 : mixedLingers.waited.seconds * 1e3 / Double(mixedLingers.began)))
        var verdicts: [DecisionLogEntry.Verdict: Int] = [:]
        for run in runs { verdicts.merge(run.mixed.verdicts, uniquingKeysWith: +) }
        report(
            "  verdicts in the mixed stream's \(runs.count) passes: "
                + verdicts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
                .joined(separator: ", "))
    }

    // MARK: - Through gateway serve (LMTP)

    private func served(
        rounds: [Round<(message: ByteBuffer, data: ByteBuffer)>], warmUp: [(message: ByteBuffer, data: ByteBuffer)],
        zone: String, streamBytes: Int, overUnixSocket: Bool = false
    ) async throws {
        let directoryOfBench = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let gateway = directoryOfBench.appendingPathComponent("gateway").path
        guard FileManager.default.isExecutableFile(atPath: gateway) else {
            throw BenchFailure("stream: no \(gateway); run swift build -c release --product gateway")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-stream-serve-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        ChildProcesses.removeOnSignal(directory.path)
        let zonePath = directory.appendingPathComponent("keys.zone").path
        try zone.write(toFile: zonePath, atomically: true, encoding: .utf8)
        let adminToken = (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined()
        let socket = overUnixSocket ? directory.appendingPathComponent("lmtp.sock").path : nil
        let way = overUnixSocket ? "over LMTP on a Unix socket" : "over LMTP"
        let server = try await ServerProcess.start(
            executable: gateway,
            arguments: [
                "serve", "--store", directory.appendingPathComponent("gateway.sqlite").path, "--policy", "development",
                "--keys", zonePath, "--http", "127.0.0.1:0", "--lmtp", socket.map { "unix:\($0)" } ?? "127.0.0.1:0",
                "--log-level", "warning",
            ],
            environment: ["GATEWAY_ADMIN_TOKEN": adminToken], logPath: directory.appendingPathComponent("server.log").path)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: clientThreads)
        do {
            let control = ControlClient(group: group, port: server.httpPort)
            let response = try await control.request(
                .POST, "/v1/domains", token: adminToken, json: ["domain": "bench.example", "contact": "markup@bench.example"])
            guard response.status == 201 else { throw BenchFailure("stream: POST /v1/domains answered \(response.status)") }
            let driver = LoadDriver(
                group: group, httpPort: server.httpPort, lmtpPort: server.lmtpPort, lmtpSocket: socket)

            func measure(
                _ messages: [(message: ByteBuffer, data: ByteBuffer)]
            ) async -> (rate: Double, cpu: Double, senderCPU: Double, outcome: LoadDriver.Outcome) {
                let corpus = LoadCorpus(messages)
                let cpuBefore = server.cpuSeconds
                let senderBefore = CPUTime.now().process
                let outcome = await driver.run(
                    corpus: corpus, token: "", httpConnections: 0, lmtpSessions: lmtpSessions, duration: .seconds(600))
                let senderCPU = CPUTime.now().process - senderBefore
                let cpuAfter = server.cpuSeconds
                let acknowledged = Double(max(1, outcome.lmtp.sent.count { $0.outcome.isAcknowledged }))
                let cpu = cpuAfter.server - cpuBefore.server + cpuAfter.workers - cpuBefore.workers
                return (acknowledged / outcome.elapsed.seconds, cpu / acknowledged, senderCPU / acknowledged, outcome)
            }
            _ = await measure(warmUp)
            typealias Run = (rate: Double, cpu: Double, senderCPU: Double, outcome: LoadDriver.Outcome)
            var runs: [(markup: Run, mixed: Run)] = []
            var before: ServerProcess.Memory?
            var afterOne: ServerProcess.Memory?
            for (index, round) in rounds.enumerated() {
                let markupRun = await measure(round.markup)
                if before == nil { before = ServerProcess.memory(of: server.pid) }
                let mixedRun = await measure(round.mixed)
                if afterOne == nil { afterOne = ServerProcess.memory(of: server.pid) }
                Self.reportRound(
                    way, index, cpu: "server CPU", markup: (markupRun.rate, markupRun.cpu),
                    mixed: (mixedRun.rate, mixedRun.cpu))
                runs.append((markupRun, mixedRun))
            }
            let after = ServerProcess.memory(of: server.pid)
            let all = runs.flatMap { [$0.markup, $0.mixed] }
            for run in all {
                for problem in run.outcome.lmtp.problems { report("  problem: \(problem)") }
            }
            let failed = all.reduce(0) { total, run in
                total + run.outcome.lmtp.sent.count { !$0.outcome.isAcknowledged }
            }
            let ratio = Self.median(runs.map { $0.mixed.rate / $0.markup.rate })
            let mixedCount = rounds[0].mixed.count
            let meanBytes = Double(streamBytes) / Double(mixedCount)
            let mixedRate = Self.median(runs.map(\.mixed.rate))
            let mixedCPU = Self.median(runs.map(\.mixed.cpu))
            report(
                String(
                    format: "gateway serve %@ (%d sessions; the median of %d rounds): markup path %.0f emails/s "
                        + "(server CPU %.2f ms per email); mixed stream %.0f emails/s, %.0f MB/s (server CPU %.3f ms per "
                        + "email): %.1f× the markup path (target ≥ %.0f×: %@); by server CPU per email %.1f×",
                    way, lmtpSessions, runs.count, Self.median(runs.map(\.markup.rate)),
                    Self.median(runs.map(\.markup.cpu)) * 1e3,
                    mixedRate, mixedRate * meanBytes / 1e6, mixedCPU * 1e3, ratio, Self.target,
                    ratio >= Self.target ? "met" : "NOT met", Self.median(runs.map { $0.markup.cpu / $0.mixed.cpu })))
            report(
                String(
                    format: "  server CPU per email, mixed stream: %.3f ms (%.2f ms per MB); "
                        + "the sender (this process, on the same cores) %.3f ms per email, %.3f ms per markup email",
                    mixedCPU * 1e3, mixedCPU * 1e3 / (meanBytes / 1e6), Self.median(runs.map(\.mixed.senderCPU)) * 1e3,
                    Self.median(runs.map(\.markup.senderCPU)) * 1e3))
            if let before, let afterOne {
                report(
                    String(
                        format: "  server resident memory (VmRSS): %.0f MB before the mixed stream, %.0f MB after one pass, "
                            + "%.0f MB after %d (peak VmHWM %.0f MB); %d deliveries not acknowledged",
                        Double(before.serverNow) / 1e6, Double(afterOne.serverNow) / 1e6, Double(after.serverNow) / 1e6,
                        runs.count, Double(after.serverPeak) / 1e6, failed))
            }
            let status = await server.stop()
            try? await group.shutdownGracefully()
            guard failed == 0, status == 0 else {
                throw BenchFailure(
                    "stream: \(failed) LMTP deliveries were not acknowledged, gateway serve exited with status \(status) "
                        + "(its log: \(server.logPath))")
            }
            try? FileManager.default.removeItem(at: directory)
        } catch {
            if server.process.isRunning { await server.killHard() }
            try? await group.shutdownGracefully()
            throw error
        }
    }
}
