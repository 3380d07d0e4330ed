import Admission
import CDispatch  // timeval: with the server targets linked in, its fields resolve to CDispatch (MemberImportVisibility)
import DKIM
import DNS
import Foundation
import Dispatch
import Glibc
import Ingestion
import MailMessage
import Markup
import Reservations
import GatewayServer
import Logging
import PostgresStore
import Sandbox
import SQLiteStore
import Store
import Synchronization
import TestSupport

/// Emails per second through the whole pipeline (`Ingestor.ingestEmail`: DKIM, sandboxed extraction,
/// resolution, admission, the store), as `gateway ingest` and the server run it, on a corpus of signed
/// confirmation emails with JSON-LD reservations (5–50 KB), with enough emails in flight to keep both cores
/// busy: on SQLite, and on a durable PostgreSQL with one node and with two (issue 12), in one run.
struct IngestBenchmark {
    var messageCount: Int
    /// Emails in flight at once (`--in-flight N`): enough that a worker never waits for the next document.
    var concurrency = 16
    /// Sandbox workers (`--workers N`); the gateway's default (two per core) when not given.
    var workerCount: Int?
    var postgresLanes: Int?
    /// The stores' commit linger (`--commit-linger MS`); theirs when not given.
    var commitLinger: Duration?

    /// What one measurement runs on: SQLite at a durability, or PostgreSQL with one or two nodes, with or without the
    /// servers' read cache.
    enum Setup: CustomStringConvertible {
        case sqlite(SQLiteStore.Configuration.Durability)
        case postgres(nodes: Int, readCache: Bool)

        var description: String {
            switch self {
            case .sqlite(let durability): "SQLite, synchronous=\(durability == .full ? "FULL" : "NORMAL")"
            case .postgres(let nodes, let cache):
                "PostgreSQL, \(nodes) node\(nodes == 1 ? "" : "s")\(cache ? "" : ", no read cache")"
            }
        }
    }

    /// One setup's figures.
    struct Measurement {
        var emailsPerSecond: Double
        var p50: Double
        var p99: Double
        /// Wall ms per email inside store calls: writes (ingest) and reads (registry, flags).
        var storeWrite: Double
        var storeRead: Double
        /// CPU ms per email: this process, the sandbox workers, the PostgreSQL server.
        var gatewayCPU: Double
        var workerCPU: Double
        var databaseCPU: Double
    }

    func run() async throws {
        report("== Ingest end to end (DKIM, sandboxed extraction, resolve, admit, store): SQLite and PostgreSQL ==")
        let workerPath = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("gateway-worker").path
        guard FileManager.default.isExecutableFile(atPath: workerPath) else {
            throw BenchFailure("ingest: no gateway-worker next to the bench; run swift build -c release --product gateway-worker")
        }
        let (corpus, zone) = try Self.reportedCorpus(count: messageCount)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        ChildProcesses.removeOnSignal(directory.path)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A durable PostgreSQL on the same disk as the SQLite files: every commit flushed, as synchronous=FULL.
        let postgres = try await PostgresServer.start(durable: true)
        ChildProcesses.runOnSignal { postgres.stop() }
        defer { postgres.stop() }
        report("PostgreSQL: \(postgres.host):\(postgres.port), data in \(postgres.directory), fsync and synchronous_commit on")

        let setups: [Setup] = [
            .sqlite(.full), .sqlite(.normal), .postgres(nodes: 1, readCache: true), .postgres(nodes: 1, readCache: false),
            .postgres(nodes: 2, readCache: true),
        ]
        var results: [Measurement] = []
        for setup in setups {
            results.append(try await measure(setup, corpus: corpus, zone: zone, directory: directory, postgres: postgres, workerPath: workerPath))
        }
        let (sqlite, pg, pgUncached, pgTwo) = (results[0], results[2], results[3], results[4])
        report("ratios, same corpus, same run:")
        report(
            String(
                format: "  PostgreSQL 1 node / SQLite FULL: %.0f%% of the throughput (target: at least 60%%); p99 %.1f ms against %.1f ms (target: under 50 ms)",
                pg.emailsPerSecond / sqlite.emailsPerSecond * 100, pg.p99 * 1e3, sqlite.p99 * 1e3))
        report(
            String(
                format: "  PostgreSQL 2 nodes / 1 node: %.2fx the throughput, p99 %.1f ms against %.1f ms",
                pgTwo.emailsPerSecond / pg.emailsPerSecond, pgTwo.p99 * 1e3, pg.p99 * 1e3))
        report(
            String(
                format: "  PostgreSQL read cache on / off: %.2fx the throughput; store reads %.3f ms per email against %.3f ms",
                pg.emailsPerSecond / pgUncached.emailsPerSecond, pg.storeRead, pgUncached.storeRead))
        report(
            String(
                format: "  store cost per email, wall ms (writes + reads): SQLite FULL %.2f + %.2f, PostgreSQL %.2f + %.2f; database server CPU %.2f ms",
                sqlite.storeWrite, sqlite.storeRead, pg.storeWrite, pg.storeRead, pg.databaseCPU))
    }

    /// Ingests the corpus on `setup` (after a warm-up) and reports its figures.
    private func measure(
        _ setup: Setup, corpus: [[UInt8]], zone: String, directory: URL, postgres: PostgresServer, workerPath: String
    ) async throws -> Measurement {
        var policy = Policy()
        policy.name = "bench"
        policy.registration.approveOnRegister = true
        let publicSuffixes = try PublicSuffixList()
        let resolver = CachingResolver(upstream: try ZoneFileResolver(zoneText: zone))
        var configuration = WorkerPool.Configuration(workerExecutable: workerPath)
        configuration.maxDocumentBytes = policy.limits.maxMessageBytes
        configuration.confinement.addressSpaceBytes = UInt64(policy.sandbox.workerMemoryBytes)
        if let workerCount { configuration.workerCount = workerCount }

        // The nodes: each its own store (its own connections and group commit) and read cache; they share the
        // sandbox workers, as nodes on one machine share its cores.
        var stores: [any ManagedStore] = []
        var caches: [StoreReadCache?] = []
        var databaseProcess: Int32?
        switch setup {
        case .sqlite(let durability):
            var storeConfiguration = SQLiteStore.Configuration()
            storeConfiguration.durability = durability
            if let commitLinger { storeConfiguration.commitLinger = commitLinger }
            let name = durability == .full ? "full" : "normal"
            stores = [try SQLiteStore(path: directory.appendingPathComponent("\(name).sqlite").path, configuration: storeConfiguration)]
            caches = [nil]
        case .postgres(let nodes, let readCache):
            let database = try await postgres.createDatabase()
            guard case .postgres(let settings) = try StoreLocation(parsing: postgres.url(database: database)) else {
                throw FixtureError("not a PostgreSQL URL")
            }
            for _ in 0..<nodes {
                var storeConfiguration = PostgresStore.Configuration()
                if let postgresLanes { storeConfiguration.writeLanes = postgresLanes }
                if let commitLinger { storeConfiguration.commitLinger = commitLinger }
                storeConfiguration.maximumConnections = 8
                stores.append(try await PostgresStore.open(settings, configuration: storeConfiguration))
                caches.append(readCache ? StoreReadCache() : nil)
            }
            databaseProcess = postgres.processIdentifier
        }
        let timed = stores.map(TimedStore.init)
        let pool = try await WorkerPool(configuration: configuration)
        let extractor = TimedExtractor(SandboxedExtractor(pool: pool))
        let ingestors = zip(timed, caches).map { store, cache in
            var environment = Ingestor.Environment(
                store: store, policy: policy, resolver: resolver, extractor: extractor, publicSuffixes: publicSuffixes)
            environment.readCache = cache
            return Ingestor(environment: environment)
        }

        let measurement = try await withThrowingTaskGroup(of: Void.self, returning: Measurement.self) { group in
            for store in stores { group.addTask { try await store.run() } }
            for (store, cache) in zip(stores, caches) {
                guard let cache else { continue }
                let watcher = StoreWatcher(
                    store: store, cache: cache, health: StoreHealth(),
                    logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() }))
                group.addTask { try await watcher.run() }
            }
            defer { group.cancelAll() }
            // Let the watchers confirm their caches (a poll, and on PostgreSQL the LISTEN) before the clock starts.
            try await Task.sleep(for: .milliseconds(800))
            _ = try await ingestors[0].registry.register("bench.example", contact: nil, by: "gateway-bench")
            try await Task.sleep(for: .milliseconds(200))
            // Warm-up: starts the workers' parsers, fills the key cache, creates the tables' first pages.
            for (index, message) in corpus.prefix(20).enumerated() {
                _ = try await ingestors[index % ingestors.count].ingestEmail(message, source: "warm-up")
            }
            for store in timed { store.reset() }
            extractor.reset()

            let before = CPUTime.now()
            let workersBefore = CPUTime.workers(of: pool)
            let databaseBefore = databaseProcess.map(CPUTime.processTree) ?? 0
            let clock = ContinuousClock()
            let start = clock.now
            let (verdicts, latencies) = try await Self.ingestAll(corpus, with: ingestors, concurrency: concurrency)
            let elapsed = (clock.now - start).seconds
            let cpu = CPUTime.now() - before
            let workerCPU = CPUTime.workers(of: pool) - workersBefore
            let databaseCPU = (databaseProcess.map(CPUTime.processTree) ?? 0) - databaseBefore

            let admitted = verdicts[.admitted, default: 0]
            let summary = verdicts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
                .joined(separator: ", ")
            let perEmail = { (seconds: Double) in seconds / Double(corpus.count) * 1e3 }
            var load = [0.0, 0, 0]
            getloadavg(&load, 3)
            let result = Measurement(
                emailsPerSecond: Double(corpus.count) / elapsed, p50: latencies.percentile(0.5), p99: latencies.percentile(0.99),
                storeWrite: perEmail(timed.reduce(0) { $0 + $1.writes.seconds }),
                storeRead: perEmail(timed.reduce(0) { $0 + $1.reads.seconds }), gatewayCPU: perEmail(cpu.process),
                workerCPU: perEmail(workerCPU), databaseCPU: perEmail(databaseCPU))
            report(
                String(
                    format: "ingest (%@): %.0f emails/s, %d in flight, %d workers (%@; load average %.1f); per email p50 %.1f ms, p99 %.1f ms",
                    setup.description, result.emailsPerSecond, concurrency, configuration.workerCount, summary, load[0],
                    result.p50 * 1e3, result.p99 * 1e3))
            report(
                String(
                    format: "  per email, wall ms (queueing included): extraction in the sandbox %.2f, store writes %.2f, store reads %.3f",
                    perEmail(extractor.seconds), result.storeWrite, result.storeRead))
            let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
            let total = result.gatewayCPU + result.workerCPU + result.databaseCPU
            report(
                String(
                    format:
                        "  CPU per email %.2f ms (gateway %.2f + workers %.2f + database server %.2f): %.0f idle cores would ingest about %.0f emails/s",
                    total, result.gatewayCPU, result.workerCPU, result.databaseCPU, cores, cores / (total / 1e3)))
            guard admitted == corpus.count else {
                await pool.shutdown()
                throw BenchFailure("\(corpus.count - admitted) emails were not admitted")
            }
            switch setup {
            case .sqlite(.full), .postgres(nodes: 1, readCache: true):
                try await breakdown(
                    corpus, ingestor: ingestors[0], extractor: extractor.base, resolver: resolver, graphs: extractor.sample,
                    freshStores: setup.description.hasPrefix("SQLite") ? directory : nil)
            default: break
            }
            return result
        }
        await pool.shutdown()
        for store in stores { try await store.close() }
        return measurement
    }

    /// Stage costs measured one email at a time in this process (CPU time, so the machine's load does
    /// not count), so they can be compared with the concurrent run's CPU per email.
    ///
    /// - Parameter freshStores: Where to make the SQLite stores (synchronous=FULL) that the sample's new reservations
    ///   are written to, 16 in flight (``newReservationWrites(_:in:)``); nil on PostgreSQL.
    private func breakdown(
        _ corpus: [[UInt8]], ingestor: Ingestor, extractor: any Extractor, resolver: any TXTResolver,
        graphs: [MarkupGraph], freshStores: URL?
    ) async throws {
        let sample = Array(corpus.prefix(300))
        func cpu(_ body: () async throws -> Void) async rethrows -> Double {
            let start = CPUTime.now()
            try await body()
            return (CPUTime.now() - start).process / Double(sample.count) * 1e3
        }
        let verifier = DKIMVerifier(resolver: resolver)
        let dkim = try await cpu { for message in sample { _ = await verifier.verify(try RawMessage(bytes: message)) } }
        let extraction = await cpu {
            for message in sample { _ = await extractor.extract(message, kind: .email, deadline: .seconds(5)) }
        }
        let reservations = ReservationResolver()
        let resolve = await cpu {
            for index in sample.indices { _ = reservations.resolve(graphs[index % graphs.count]) }
        }
        let domain = try DomainName(normalizing: "bench.example")
        let reads = try await cpu {
            for _ in sample {
                _ = try await ingestor.registry.entry(covering: domain)
                _ = try await ingestor.flags.active()
            }
        }
        let hash = await cpu { for message in sample { _ = ContentHash.sha256Hex(message) } }
        // The markup prefilter, which every email passes before DKIM (on the parsed message: the authentication
        // stage below counts the parse).
        let parsed = try sample.map { try RawMessage(bytes: $0) }
        let prefilter = await cpu { for message in parsed { _ = ingestor.prefilter(message) } }
        // Authentication (From alignment, signed recipients) and the decision (with the payload's canonical JSON).
        let registration = try await ingestor.registry.entry(covering: domain)
        let flags = try await ingestor.flags.active()
        var inputs: [(EmailAuthentication, [Resolution])] = []
        for (index, message) in sample.enumerated() {
            let parsed = try RawMessage(bytes: message)
            let authentication = EmailAuthentication(
                message: parsed, verification: await verifier.verify(parsed),
                publicSuffixes: ingestor.environment.publicSuffixes)
            inputs.append((authentication, reservations.resolve(graphs[index % graphs.count])))
        }
        let authenticate = try await cpu {
            for (index, message) in sample.enumerated() {
                _ = EmailAuthentication(
                    message: try RawMessage(bytes: message), verification: inputs[index].0.verification,
                    publicSuffixes: ingestor.environment.publicSuffixes)
            }
        }
        var decisions: [AdmissionDecision] = []
        let admit = await cpu {
            for (authentication, resolutions) in inputs {
                decisions.append(
                    AdmissionDecision(
                        source: .email(authentication), resolutions: resolutions, owners: [], registration: registration,
                        flags: flags,
                        policy: ingestor.environment.policy, markupInUnsignedTail: false, sourceDescription: "probe"))
            }
        }
        // The store write alone, as the whole ingest below makes it for these emails (stored already: the lifecycle's
        // read finds each unchanged, and the log entry is written): the items and the entry handed to `ingest`.
        let store = ingestor.environment.store
        let hashes = sample.map { ContentHash.sha256Hex($0) }
        let storeWrite = try await cpu {
            for (index, decision) in decisions.enumerated() {
                _ = try await store.ingest(
                    decision.items.flatMap(\.admitted),
                    decision: DecisionLogEntry(
                        time: Date(), channel: .email, sourceDomain: decision.sourceDomain?.ascii, source: "probe-\(index)",
                        owners: decision.owners, contentHash: hashes[index], verdict: decision.verdict,
                        codes: decision.codes, flags: []),
                    removingSpooledMessage: nil)
            }
        }
        let whole = try await cpu {
            for (index, message) in sample.enumerated() {
                _ = try await ingestor.ingestEmail(message, source: "probe-\(index)")
            }
        }
        let parts = [dkim, extraction, resolve, reads, hash, authenticate, admit]
        report(
            String(
                format:
                    "  one at a time, gateway CPU ms per email: whole ingest %.3f = DKIM verify %.3f + extraction (parent side) %.3f "
                    + "+ resolve %.3f + registry and flag reads %.3f + content hash %.3f + authentication %.3f + admission %.3f "
                    + "+ the rest (store write, report) %.3f",
                whole, dkim, extraction, resolve, reads, hash, authenticate, admit, whole - parts.reduce(0, +)))
        // The rest, taken apart: the prefilter (a stage since issue 19), the store write measured
        // alone, and what is left (the report, the hand-offs between threads and the stages' colder caches in a whole
        // ingest).
        let rest = whole - parts.reduce(0, +)
        report(
            String(
                format: "  the rest %.3f = prefilter %.3f + store write alone %.3f + report, hand-offs and colder caches %.3f",
                rest, prefilter, storeWrite, rest - prefilter - storeWrite))
        guard let freshStores else { return }
        let requests = decisions.enumerated().map { index, decision in
            (
                decision.items.flatMap(\.admitted),
                DecisionLogEntry(
                    time: Date(), channel: .email, sourceDomain: decision.sourceDomain?.ascii, source: "probe-\(index)",
                    owners: decision.owners, contentHash: hashes[index], verdict: decision.verdict, codes: decision.codes,
                    flags: [])
            )
        }
        let (created, cpu) = try await newReservationWrites(requests, in: freshStores)
        report(
            String(
                format: "  store write of new reservations alone, %d in flight (SQLite FULL, %d writes): %.3f ms CPU per email",
                concurrency, created, cpu))
    }

    /// The store write of new reservations alone, as ingestion makes it under load: `requests` (the sample's admitted
    /// items and log entries) handed to `ingest` with ``concurrency`` in flight, on fresh SQLite stores
    /// (synchronous=FULL), one per round so that every reservation is new. This process's CPU while they write, per
    /// email: the store's statements, the group commit's hand-offs and fsync, without the pipeline's stages.
    /// - Returns: The writes made and the CPU ms per email.
    private func newReservationWrites(
        _ requests: [([IncomingReservation], DecisionLogEntry)], in directory: URL
    ) async throws -> (Int, Double) {
        let rounds = 10
        var cpu = 0.0
        for round in 0..<rounds {
            var configuration = SQLiteStore.Configuration()
            configuration.durability = .full
            let store = try SQLiteStore(
                path: directory.appendingPathComponent("fresh-\(round).sqlite").path, configuration: configuration)
            try await withThrowingTaskGroup(of: Void.self) { runner in
                runner.addTask { try await store.run() }
                defer { runner.cancelAll() }
                let start = CPUTime.now()
                try await Self.concurrently(requests.count, concurrency: concurrency) { index in
                    _ = try await store.ingest(requests[index].0, decision: requests[index].1, removingSpooledMessage: nil)
                } collect: { _ in }
                cpu += (CPUTime.now() - start).process
            }
            try await store.close()
        }
        let writes = rounds * requests.count
        return (writes, cpu / Double(writes) * 1e3)
    }

    /// Ingests every email with at most `concurrency` in flight; returns the verdicts counted.
    static func ingestAll(_ corpus: [[UInt8]], with ingestor: Ingestor, concurrency: Int) async throws
        -> [DecisionLogEntry.Verdict: Int]
    {
        try await ingestAll(corpus, with: [ingestor], concurrency: concurrency).0
    }

    /// Ingests every email with at most `concurrency` in flight, spread over `ingestors` (the nodes) in turn; returns
    /// the verdicts counted and each email's latency.
    static func ingestAll(_ corpus: [[UInt8]], with ingestors: [Ingestor], concurrency: Int) async throws
        -> ([DecisionLogEntry.Verdict: Int], Latencies)
    {
        var verdicts: [DecisionLogEntry.Verdict: Int] = [:]
        var latencies: [Int64] = []
        try await concurrently(corpus.count, concurrency: concurrency) { index in
            let clock = ContinuousClock()
            let start = clock.now
            let verdict = try await ingestors[index % ingestors.count].ingestEmail(corpus[index], source: "bench-\(index)")
                .verdict
            let elapsed = clock.now - start
            return (verdict, elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        } collect: { (verdict: DecisionLogEntry.Verdict, latency: Int64) in
            verdicts[verdict, default: 0] += 1
            latencies.append(latency)
        }
        return (verdicts, Latencies(latencies))
    }

    /// Runs `work` for each index of `0..<count`, at most `concurrency` at a time, in index order, handing each result
    /// to `collect` as it completes.
    static func concurrently<Output: Sendable>(
        _ count: Int, concurrency: Int, _ work: @escaping @Sendable (Int) async throws -> Output,
        collect: (Output) -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Output.self) { group in
            var next = 0
            func submit() {
                let index = next
                group.addTask { try await work(index) }
                next += 1
            }
            while next < min(concurrency, count) { submit() }
            while let output = try await group.next() {
                collect(output)
                if next < count { submit() }
            }
        }
    }

    /// ``corpus(count:)``, with a report line on its size and how long it took.
    /// - Parameter detail: what the line says of the messages, after their size.
    static func reportedCorpus(count: Int, detail: String = "") throws -> ([[UInt8]], String) {
        let started = Date()
        let (corpus, zone) = try corpus(count: count)
        let bytes = corpus.reduce(0) { $0 + $1.count }
        let size = String(
            format: "corpus: %d signed emails, %.1f MB (mean %.0f KB)", corpus.count, Double(bytes) / 1e6,
            Double(bytes) / Double(max(1, corpus.count)) / 1000)
        report(size + detail + String(format: ", generated and signed in %.1f s", Date().timeIntervalSince(started)))
        return (corpus, zone)
    }

    /// Signed confirmation emails (70% rsa-2048 relaxed/relaxed, 20% ed25519, 10% rsa-1024 simple/simple),
    /// each a distinct flight reservation for a signed recipient, and the zone with their keys. Made on every core
    /// (message `i` from its own seed, so the corpus is the same however it is split).
    static func corpus(count: Int) throws -> ([[UInt8]], String) {
        let profiles: [(String, PrivateKey, DKIMSignature.Canonicalization)] = [
            ("rsa2048", try PrivateKey.generate(type: .rsa, bits: 2048), .relaxed),
            ("ed25519", try PrivateKey.generate(type: .ed25519), .relaxed),
            ("rsa1024", try PrivateKey.generate(type: .rsa, bits: 1024), .simple),
        ]
        var zone = ""
        for (selector, key, _) in profiles {
            let data = Data(try key.publicKeyRecordData()).base64EncodedString()
            zone +=
                "\(selector)._domainkey.bench.example. 3600 IN TXT \"v=DKIM1; k=\(key.type == .rsa ? "rsa" : "ed25519"); p=\(data)\"\n"
        }
        let signers = profiles.map { selector, key, canonicalization in
            var configuration = DKIMSigner.Configuration(signingDomain: "bench.example", selector: selector)
            configuration.headerCanonicalization = canonicalization
            configuration.bodyCanonicalization = canonicalization
            return DKIMSigner(key: key, configuration: configuration)
        }
        let slices = max(1, min(count, 4 * ProcessInfo.processInfo.activeProcessorCount))
        let results = Mutex<[Int: Result<[[UInt8]], any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: slices) { slice in
            let range = (count * slice / slices)..<(count * (slice + 1) / slices)
            let made = Result { () throws -> [[UInt8]] in
                try range.map { index in
                    var generator = SplitMix64(seed: 20_261_204 &+ UInt64(index) &* 0x9E37_79B9)
                    let roll = generator.next() % 10
                    let signer = roll < 7 ? signers[0] : roll < 9 ? signers[1] : signers[2]
                    let size = 5_000 + Int(generator.next() % 45_001)
                    return try signer.sign(RawMessage(bytes: CorpusGenerator.email(index: index, htmlBytes: size, using: &generator)))
                }
            }
            results.withLock { $0[slice] = made }
        }
        var corpus: [[UInt8]] = []
        corpus.reserveCapacity(count)
        for slice in 0..<slices { corpus += try results.withLock { $0[slice]! }.get() }
        return (corpus, zone)
    }
}

/// Accumulated wall time, shared by concurrent tasks.
private final class Stopwatch: Sendable {
    private let nanoseconds = Atomic<Int64>(0)

    func time<T>(_ body: () async throws -> T) async rethrows -> T {
        let clock = ContinuousClock()
        let start = clock.now
        defer {
            let elapsed = clock.now - start
            nanoseconds.add(
                elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000,
                ordering: .relaxed)
        }
        return try await body()
    }

    var seconds: Double { Double(nanoseconds.load(ordering: .relaxed)) / 1e9 }
    func reset() { nanoseconds.store(0, ordering: .relaxed) }
}

/// The sandboxed extractor, timed; keeps the first graphs for the resolve measurement.
private final class TimedExtractor: Extractor {
    let base: any Extractor
    let stopwatch = Stopwatch()
    private let graphs = Mutex<[MarkupGraph]>([])

    init(_ base: any Extractor) { self.base = base }

    func extract(
        _ document: [UInt8], kind: DocumentKind, encoding: String?, deadline: Duration
    ) async -> Result<MarkupGraph, SandboxFailure> {
        let result = await stopwatch.time { await base.extract(document, kind: kind, encoding: encoding, deadline: deadline) }
        if case .success(let graph) = result {
            graphs.withLock { if $0.count < 200 { $0.append(graph) } }
        }
        return result
    }

    var seconds: Double { stopwatch.seconds }
    var sample: [MarkupGraph] { graphs.withLock { $0 } }
    func reset() { stopwatch.reset() }
}

/// A store, every call the pipeline makes timed: writes (ingest, spool) and reads (registry, flags) apart.
private struct TimedStore: GatewayStore {
    let base: any ManagedStore
    let writes = Stopwatch()
    let reads = Stopwatch()

    init(_ base: any ManagedStore) { self.base = base }

    func reset() {
        writes.reset()
        reads.reset()
    }

    func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry, removingSpooledMessage spoolID: Int64?
    ) async throws -> DecisionLogEntry {
        try await writes.time {
            try await base.ingest(reservations, decision: decision, removingSpooledMessage: spoolID)
        }
    }
    func expectingIngestion<T>(_ body: () async throws -> T) async rethrows -> T {
        try await base.expectingIngestion(body)
    }
    var commitLingers: CommitLingerStatistics? { base.commitLingers }
    func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome] {
        try await writes.time { try await base.apply(reservations) }
    }
    func reservation(id: Int64) async throws -> StoredReservation? { try await base.reservation(id: id) }
    func lookup(containerReference: String, itemReferences: [String], owner: OwnerAddress, sourceDomain: String?) async throws
        -> [StoredReservation]
    {
        try await base.lookup(
            containerReference: containerReference, itemReferences: itemReferences, owner: owner, sourceDomain: sourceDomain)
    }
    func list(owner: OwnerAddress) async throws -> [StoredReservation] { try await base.list(owner: owner) }
    func listAll(limit: Int) async throws -> [StoredReservation] { try await base.listAll(limit: limit) }
    func history(of id: Int64) async throws -> [ReservationHistoryEntry] { try await base.history(of: id) }
    func append(_ entry: DecisionLogEntry) async throws -> DecisionLogEntry {
        try await writes.time { try await base.append(entry) }
    }
    func entries(domain: String?, since: Date?, afterID: Int64?, limit: Int) async throws -> [DecisionLogEntry] {
        try await base.entries(domain: domain, since: since, afterID: afterID, limit: limit)
    }
    func registeredDomain(_ domain: String) async throws -> RegisteredDomain? {
        try await reads.time { try await base.registeredDomain(domain) }
    }
    func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain] {
        try await base.registeredDomains(status: status)
    }
    func updateDomain(
        _ domain: String, by actor: String,
        _ change: @escaping @Sendable (RegisteredDomain?, Date) throws -> DomainUpdate?
    ) async throws -> RegisteredDomain? {
        try await base.updateDomain(domain, by: actor, change)
    }
    func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange] {
        try await base.domainChanges(domain: domain, limit: limit)
    }
    func flag(_ name: String) async throws -> DeveloperFlagState? { try await reads.time { try await base.flag(name) } }
    func flags() async throws -> [DeveloperFlagState] { try await reads.time { try await base.flags() } }
    func setFlag(_ name: String, enabled: Bool, expiresAt: Date?, by actor: String) async throws -> DeveloperFlagState {
        try await base.setFlag(name, enabled: enabled, expiresAt: expiresAt, by: actor)
    }
    func flagChanges(name: String?, limit: Int) async throws -> [FlagChange] {
        try await base.flagChanges(name: name, limit: limit)
    }
    func spool(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date,
        claimedUnder lease: SpoolLease?
    ) async throws -> SpooledMessage {
        try await writes.time {
            try await base.spool(
                message, channel: channel, owner: owner, reasonCode: reasonCode, nextAttemptAt: nextAttemptAt,
                claimedUnder: lease)
        }
    }
    func claimSpooledMessages(under lease: SpoolLease, dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        try await writes.time { try await base.claimSpooledMessages(under: lease, dueBy: dueBy, limit: limit) }
    }
    func renewSpoolClaims(_ ids: [Int64], under lease: SpoolLease) async throws -> [Int64] {
        try await base.renewSpoolClaims(ids, under: lease)
    }
    func nextSpoolClaimableAt() async throws -> Date? { try await base.nextSpoolClaimableAt() }
    func spoolClaimHolders() async throws -> [String] { try await base.spoolClaimHolders() }
    func releaseSpoolClaims(heldBy holder: String) async throws -> Int {
        try await base.releaseSpoolClaims(heldBy: holder)
    }
    func spooledMessage(id: Int64) async throws -> SpooledMessage? { try await base.spooledMessage(id: id) }
    func spooledMessages(dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        try await base.spooledMessages(dueBy: dueBy, limit: limit)
    }
    func recordAttempt(id: Int64, reasonCode: String, nextAttemptAt: Date) async throws -> SpooledMessage? {
        try await writes.time { try await base.recordAttempt(id: id, reasonCode: reasonCode, nextAttemptAt: nextAttemptAt) }
    }
    func removeSpooledMessage(id: Int64) async throws -> Bool {
        try await writes.time { try await base.removeSpooledMessage(id: id) }
    }
    func addToken(role: AccessToken.Role, subject: String, label: String, secretHash: String, by actor: String) async throws
        -> AccessToken
    {
        try await base.addToken(role: role, subject: subject, label: label, secretHash: secretHash, by: actor)
    }
    func spooledMessageCount() async throws -> Int { try await base.spooledMessageCount() }
    func spooledMessages(afterID: Int64, limit: Int) async throws -> [SpooledMessage] {
        try await base.spooledMessages(afterID: afterID, limit: limit)
    }
    func token(secretHash: String) async throws -> AccessToken? {
        try await reads.time { try await base.token(secretHash: secretHash) }
    }
    func entries(matching query: DecisionLogQuery) async throws -> [DecisionLogEntry] {
        try await base.entries(matching: query)
    }
    func entry(id: Int64) async throws -> DecisionLogEntry? { try await base.entry(id: id) }
    func token(id: Int64) async throws -> AccessToken? { try await base.token(id: id) }
    func tokens(role: AccessToken.Role?) async throws -> [AccessToken] { try await base.tokens(role: role) }
    func revokeToken(id: Int64) async throws -> Bool { try await base.revokeToken(id: id) }
    func acquireLease(_ name: String, holder: String, for duration: TimeInterval, ifLastStartedBefore: Date?)
        async throws -> Bool
    {
        try await base.acquireLease(name, holder: holder, for: duration, ifLastStartedBefore: ifLastStartedBefore)
    }
    func releaseLease(_ name: String, holder: String) async throws { try await base.releaseLease(name, holder: holder) }
    func leases() async throws -> [JobLease] { try await base.leases() }
    func decide(_ decision: ConsentDecision, reservation id: Int64, owner: OwnerAddress) async throws -> ConsentChange? {
        try await base.decide(decision, reservation: id, owner: owner)
    }
    func setSenderDecision(_ decision: SenderDecision, domain: String, owner: OwnerAddress) async throws
        -> SenderPreferenceResult
    {
        try await base.setSenderDecision(decision, domain: domain, owner: owner)
    }
    func senderPreferences(owner: OwnerAddress) async throws -> [SenderPreference] {
        try await base.senderPreferences(owner: owner)
    }
    func profile(owner: OwnerAddress) async throws -> OwnerProfile? { try await base.profile(owner: owner) }
    func updateProfile(_ update: OwnerProfileUpdate, owner: OwnerAddress) async throws -> OwnerProfile {
        try await base.updateProfile(update, owner: owner)
    }
    func records(of owner: OwnerAddress) async throws -> OwnerRecords { try await base.records(of: owner) }
    func forget(_ owner: OwnerAddress) async throws -> ForgetReport { try await base.forget(owner) }
    func prune(_ cutoffs: RetentionCutoffs) async throws -> PruneReport { try await base.prune(cutoffs) }
    func changeGenerations() async throws -> [ChangeArea: Int64] { try await base.changeGenerations() }
    func notifications(channel: String) -> AsyncStream<StoreNotification> { base.notifications(channel: channel) }
    func chargeQuotas(_ charges: [QuotaCharge]) async throws -> QuotaRefusal? {
        try await writes.time { try await base.chargeQuotas(charges) }
    }
    func quotaCounters(scope: QuotaKey.Scope, subject: String) async throws -> [QuotaCounter] {
        try await base.quotaCounters(scope: scope, subject: subject)
    }
    func removeQuotaCounters(endedBefore instant: Date) async throws -> Int {
        try await base.removeQuotaCounters(endedBefore: instant)
    }
    func secret(_ name: String, orMake make: @escaping @Sendable () -> Data) async throws -> Data {
        try await base.secret(name, orMake: make)
    }
    // The change feed and webhooks, passed through untimed (the suite measures ingestion).
    var changeSignal: ChangeSignal { base.changeSignal }
    func changes(after position: Int64, scope: ChangeScope, limit: Int) async throws -> [ChangeEvent] {
        try await base.changes(after: position, scope: scope, limit: limit)
    }
    func latestChangePosition() async throws -> Int64 { try await base.latestChangePosition() }
    func addWebhook(
        url: String, owner: OwnerAddress?, domain: String?, types: [ChangeKind], secret: String, by actor: String
    ) async throws -> Webhook {
        try await base.addWebhook(url: url, owner: owner, domain: domain, types: types, secret: secret, by: actor)
    }
    func webhooks() async throws -> [Webhook] { try await base.webhooks() }
    func removeWebhook(id: Int64) async throws -> Bool { try await base.removeWebhook(id: id) }
    func dueDeliveries(at now: Date, limit: Int) async throws -> [DueDelivery] {
        try await base.dueDeliveries(at: now, limit: limit)
    }
    func recordDeliveryAttempts(_ attempts: [DeliveryAttempt], queueingChanges limit: Int) async throws -> Int {
        try await base.recordDeliveryAttempts(attempts, queueingChanges: limit)
    }
    func deliveries(webhookID: Int64?, state: WebhookDelivery.State?, limit: Int) async throws -> [WebhookDelivery] {
        try await base.deliveries(webhookID: webhookID, state: state, limit: limit)
    }
    func replayDeliveries(webhookID: Int64, since: Date) async throws -> Int? {
        try await base.replayDeliveries(webhookID: webhookID, since: since)
    }
}

/// CPU time of this process and of its reaped children (the sandbox workers), from getrusage(2).
struct CPUTime {
    var process: Double
    var children: Double

    /// Clock ticks per second, the unit of /proc's CPU times.
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func now() -> CPUTime {
        func seconds(_ who: Int32) -> Double {
            var usage = rusage()
            getrusage(__rusage_who_t(who), &usage)
            let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            return user + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        }
        return CPUTime(process: seconds(RUSAGE_SELF.rawValue), children: seconds(RUSAGE_CHILDREN.rawValue))
    }

    /// CPU seconds of the pool's workers: those that exited (reaped children) and those running now.
    static func workers(of pool: WorkerPool) -> Double {
        var total = now().children
        let ticks = ticksPerSecond
        for worker in pool.workers {
            guard let pid = worker.processID, let fields = statFields(String(pid)) else { continue }
            // After "pid (comm)": state is field 3, utime and stime are fields 14 and 15.
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) {
                total += (user + system) / ticks
            }
        }
        return total
    }

    /// CPU seconds of process `pid` and its children, living (from /proc) and reaped (its cutime and cstime): the
    /// PostgreSQL server, its postmaster and backends.
    static func processTree(_ pid: Int32) -> Double {
        let ticks = ticksPerSecond
        var total = 0.0
        // After "pid (comm)": ppid is field 4; utime, stime, cutime, cstime fields 14 to 17.
        if let own = statFields(String(pid)), own.count > 14 {
            total += own[11...14].compactMap { Double($0) }.reduce(0, +) / ticks
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            guard let child = statFields(entry), child.count > 12, Int32(child[1]) == pid else { continue }
            total += ((Double(child[11]) ?? 0) + (Double(child[12]) ?? 0)) / ticks
        }
        return total
    }

    /// The fields of /proc/PID/stat after "pid (comm)", the process's state (field 3) first; nil when it is gone.
    static func statFields(_ pid: String) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    static func - (lhs: CPUTime, rhs: CPUTime) -> CPUTime {
        CPUTime(process: lhs.process - rhs.process, children: lhs.children - rhs.children)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
