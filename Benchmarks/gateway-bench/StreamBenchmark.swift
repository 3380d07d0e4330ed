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
///   the mixed stream (it must not grow).
///
/// Target: the mixed stream at least 10 times the markup path's emails/s, on 2 cores.
struct StreamBenchmark {
    var messageCount: Int
    var inFlight: Int
    var lmtpSessions: Int
    var seconds: Double
    var clientThreads: Int

    static let target = 10.0

    /// One message of the stream: one of the pool's, or a signed confirmation.
    enum Entry {
        case pool(Int)
        case markup([UInt8])
    }
    /// Distinct messages without markup the stream draws from.
    static let poolSize = 400

    func run() async throws {
        report("== Mixed mail stream: 95% without markup (2 KB to 10 MB, a tenth with attachments) vs the markup path ==")
        let started = ContinuousClock.now
        let markupCount = Int(Double(messageCount) * StreamCorpus.markupShare)
        // Unique signed confirmations: the mixed stream's, then the markup-only runs' (in-process, then LMTP).
        let markupOnly = max(500, markupCount * 4)
        let (signed, zone) = try IngestBenchmark.corpus(count: markupCount * 2 + markupOnly * 2)
        let pool = StreamCorpus.messagesWithoutMarkup(count: Self.poolSize, seed: 20_261_125)
        // The stream: which messages, in order (deterministic); markup ones spread evenly. A pool message is given
        // by its index, so that the LMTP run prepares each once.
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
        let mixedInProcess = stream(markup: signed[0..<markupCount]).map(bytes)
        let servedEntries = stream(markup: signed[markupCount..<(2 * markupCount)])
        let poolPrepared = pool.map { LoadCorpus.prepared($0.bytes) }
        let mixedServed = servedEntries.map { entry in
            switch entry {
            case .pool(let index): poolPrepared[index]
            case .markup(let message): LoadCorpus.prepared(message)
            }
        }
        let markupInProcess = Array(signed[(2 * markupCount)..<(2 * markupCount + markupOnly)])
        let markupServed = signed[(2 * markupCount + markupOnly)...].map(LoadCorpus.prepared)
        let streamBytes = mixedInProcess.reduce(0) { $0 + $1.count }
        let sizes = mixedInProcess.map(\.count).sorted()
        report(
            String(
                format: "corpus: a stream of %d messages (%d with markup, %d with attachments), %.0f MB, mean %.0f KB, "
                    + "median %.0f KB, largest %.1f MB, from a pool of %d without markup; %d more signed confirmations "
                    + "for the markup path; generated in %.1f s",
                messageCount, markupCount, mixedInProcess.count { $0.count > 150_000 }, Double(streamBytes) / 1e6,
                Double(streamBytes) / Double(messageCount) / 1e3, Double(sizes[sizes.count / 2]) / 1e3,
                Double(sizes.last ?? 0) / 1e6, Self.poolSize, 2 * markupOnly,
                (ContinuousClock.now - started).seconds))

        try await inProcess(
            mixed: mixedInProcess, confirmations: markupCount, markup: markupInProcess, zone: zone, streamBytes: streamBytes)
        try await served(mixed: mixedServed, markup: markupServed, zone: zone, streamBytes: streamBytes)
    }

    // MARK: - In-process

    private func inProcess(
        mixed: [[UInt8]], confirmations: Int, markup: [[UInt8]], zone: String, streamBytes: Int
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
        let store = try SQLiteStore(path: directory.appendingPathComponent("stream.sqlite").path)
        defer { try? store.closeNow() }
        let pool = try await WorkerPool(configuration: configuration)
        let ingestor = Ingestor(
            environment: Ingestor.Environment(
                store: store, policy: policy, resolver: CachingResolver(upstream: try ZoneFileResolver(zoneText: zone)),
                extractor: SandboxedExtractor(pool: pool), publicSuffixes: try PublicSuffixList()))
        _ = try await ingestor.registry.register("bench.example", contact: nil, by: "gateway-bench")
        for message in markup.suffix(20) { _ = try await ingestor.ingestEmail(message, source: "warm-up") }

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
        let markupRun = try await measure(Array(markup.dropLast(20)))
        let mixedRun = try await measure(mixed)
        // The stream's messages without markup alone, the same way: what one of them costs the whole path (the
        // prefilter, the task, the report), apart from the markup messages' share of the mixed stream's CPU.
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
        report(
            String(
                format: "messages without markup alone through Ingestor.ingestEmail: CPU %.1f µs per email (%.0f emails/s); "
                    + "the markup messages' share of the mixed stream's CPU: %.1f µs per email",
                withoutMarkupRun.cpu * 1e6, withoutMarkupRun.rate,
                (mixedRun.cpu * Double(mixed.count) - withoutMarkupRun.cpu * Double(withoutMarkup.count)) / Double(mixed.count) * 1e6))
        report(
            String(
                format: "in-process (Ingestor.ingestEmail, %d in flight): markup path %.0f emails/s (CPU %.2f ms per email); "
                    + "mixed stream %.0f emails/s, %.0f MB/s (CPU %.3f ms per email): %.1f× the markup path (target ≥ %.0f×: %@); "
                    + "by CPU per email %.1f×",
                inFlight, markupRun.rate, markupRun.cpu * 1e3, mixedRun.rate, mixedRun.rate * Double(streamBytes) / Double(mixed.count) / 1e6,
                mixedRun.cpu * 1e3, mixedRun.rate / markupRun.rate, Self.target,
                mixedRun.rate / markupRun.rate >= Self.target ? "met" : "NOT met", markupRun.cpu / mixedRun.cpu))
        report(
            String(
                format: "  of which the workers (sandboxed extraction): markup path %.2f ms per email, mixed stream %.3f ms per email",
                markupRun.workerCPU * 1e3, mixedRun.workerCPU * 1e3))
        let verdicts = mixedRun.verdicts.sorted { $0.key.rawValue < $1.key.rawValue }
        report("  verdicts in the mixed stream: " + verdicts.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "))
        guard mixedRun.verdicts[.admitted, default: 0] == confirmations, markupRun.verdicts[.admitted, default: 0] == markup.count - 20
        else { throw BenchFailure("stream: not every confirmation was admitted") }
    }

    // MARK: - Through gateway serve (LMTP)

    private func served(
        mixed: [(message: ByteBuffer, data: ByteBuffer)], markup: [(message: ByteBuffer, data: ByteBuffer)],
        zone: String, streamBytes: Int
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
        let server = try await ServerProcess.start(
            executable: gateway,
            arguments: [
                "serve", "--store", directory.appendingPathComponent("gateway.sqlite").path, "--policy", "development",
                "--keys", zonePath, "--http", "127.0.0.1:0", "--lmtp", "127.0.0.1:0", "--log-level", "warning",
            ],
            environment: ["GATEWAY_ADMIN_TOKEN": adminToken], logPath: directory.appendingPathComponent("server.log").path)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: clientThreads)
        do {
            let control = ControlClient(group: group, port: server.httpPort)
            let response = try await control.request(
                .POST, "/v1/domains", token: adminToken, json: ["domain": "bench.example", "contact": "markup@bench.example"])
            guard response.status == 201 else { throw BenchFailure("stream: POST /v1/domains answered \(response.status)") }
            let driver = LoadDriver(group: group, httpPort: server.httpPort, lmtpPort: server.lmtpPort)

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
            _ = await measure(Array(markup.suffix(20)))  // warm-up: workers, key cache, tables
            let markupRun = await measure(Array(markup.dropLast(20)))
            let before = ServerProcess.memory(of: server.pid)
            let firstPass = await measure(mixed)
            let between = ServerProcess.memory(of: server.pid)
            let secondPass = await measure(mixed)
            let after = ServerProcess.memory(of: server.pid)
            for run in [markupRun, firstPass, secondPass] {
                for problem in run.outcome.lmtp.problems { report("  problem: \(problem)") }
            }
            let failed = [markupRun, firstPass, secondPass].reduce(0) { total, run in
                total + run.outcome.lmtp.sent.count { !$0.outcome.isAcknowledged }
            }
            let ratio = firstPass.rate / markupRun.rate
            let meanBytes = Double(streamBytes) / Double(mixed.count)
            report(
                String(
                    format: "gateway serve over LMTP (%d sessions): markup path %.0f emails/s (server CPU %.2f ms per email); "
                        + "mixed stream %.0f emails/s, %.0f MB/s (server CPU %.3f ms per email), second pass %.0f emails/s: "
                        + "%.1f× the markup path (target ≥ %.0f×: %@)",
                    lmtpSessions, markupRun.rate, markupRun.cpu * 1e3, firstPass.rate, firstPass.rate * meanBytes / 1e6,
                    firstPass.cpu * 1e3, secondPass.rate, ratio, Self.target, ratio >= Self.target ? "met" : "NOT met"))
            report(
                String(
                    format: "  server CPU per email, mixed stream: %.3f ms (%.2f ms per MB), second pass %.3f ms; "
                        + "the sender (this process, on the same cores) %.3f ms per email, %.3f ms per markup email",
                    firstPass.cpu * 1e3, firstPass.cpu * 1e3 / (meanBytes / 1e6), secondPass.cpu * 1e3,
                    firstPass.senderCPU * 1e3, markupRun.senderCPU * 1e3))
            report(
                String(
                    format: "  server resident memory (VmRSS): %.0f MB before the mixed stream, %.0f MB after one pass, "
                        + "%.0f MB after two (peak VmHWM %.0f MB); %d deliveries not acknowledged",
                    Double(before.serverNow) / 1e6, Double(between.serverNow) / 1e6, Double(after.serverNow) / 1e6,
                    Double(after.serverPeak) / 1e6, failed))
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

