import Admission
import DKIM
import DNS
import Foundation
import Glibc
import Ingestion
import MailMessage
import Markup
import Reservations
import Sandbox
import SQLiteStore
import Store
import Synchronization

/// Emails per second through the whole pipeline (`Ingestor.ingestEmail`: DKIM, sandboxed extraction,
/// resolution, admission, the SQLite store), as `gateway ingest` and the server run it, on a corpus
/// of signed confirmation emails with JSON-LD reservations (5–50 KB), with enough emails in flight
/// to keep both cores busy.
struct IngestBenchmark {
    var messageCount: Int
    /// Emails in flight at once (`--in-flight N`): enough that a worker never waits for the next document.
    var concurrency = 16
    /// Sandbox workers (`--workers N`); the gateway's default (two per core) when not given.
    var workerCount: Int?

    func run() async throws {
        report("== Ingest end to end (DKIM, sandboxed extraction, resolve, admit, SQLite store) ==")
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

        var policy = Policy()
        policy.name = "bench"
        policy.registration.approveOnRegister = true
        let publicSuffixes = try PublicSuffixList()
        let resolver = CachingResolver(upstream: try ZoneFileResolver(zoneText: zone))
        var configuration = WorkerPool.Configuration(workerExecutable: workerPath)
        configuration.maxDocumentBytes = policy.limits.maxMessageBytes
        configuration.confinement.addressSpaceBytes = UInt64(policy.sandbox.workerMemoryBytes)
        if let workerCount { configuration.workerCount = workerCount }

        for durability in [SQLiteStore.Configuration.Durability.full, .normal] {
            var storeConfiguration = SQLiteStore.Configuration()
            storeConfiguration.durability = durability
            let name = durability == .full ? "full" : "normal"
            let store = TimedStore(
                try SQLiteStore(
                    path: directory.appendingPathComponent("\(name).sqlite").path, configuration: storeConfiguration))
            let pool = try await WorkerPool(configuration: configuration)
            let extractor = TimedExtractor(SandboxedExtractor(pool: pool))
            let ingestor = Ingestor(
                environment: Ingestor.Environment(
                    store: store, policy: policy, resolver: resolver, extractor: extractor,
                    publicSuffixes: publicSuffixes))
            _ = try await ingestor.registry.register("bench.example", contact: nil, by: "gateway-bench")
            // Warm-up: starts the workers' parsers, fills the key cache, creates the tables' first pages.
            for message in corpus.prefix(20) { _ = try await ingestor.ingestEmail(message, source: "warm-up") }
            store.reset()
            extractor.reset()

            let before = CPUTime.now()
            let workersBefore = CPUTime.workers(of: pool)
            let clock = ContinuousClock()
            let start = clock.now
            let verdicts = try await Self.ingestAll(corpus, with: ingestor, concurrency: concurrency)
            let elapsed = (clock.now - start).seconds
            let cpu = CPUTime.now() - before
            let workerCPU = CPUTime.workers(of: pool) - workersBefore

            let admitted = verdicts[.admitted, default: 0]
            let summary = verdicts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
                .joined(separator: ", ")
            let perEmail = { (seconds: Double) in seconds / Double(corpus.count) * 1e3 }
            var load = [0.0, 0, 0]
            getloadavg(&load, 3)
            report(
                String(
                    format: "ingest (synchronous=%@): %.0f emails/s, %d in flight, %d workers (%@; load average %.1f)",
                    name.uppercased(), Double(corpus.count) / elapsed, concurrency, configuration.workerCount, summary,
                    load[0]))
            report(
                String(
                    format: "  per email, wall ms (queueing included): extraction in the sandbox %.2f, store %.2f",
                    perEmail(extractor.seconds), perEmail(store.seconds)))
            let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
            report(
                String(
                    format:
                        "  CPU per email %.2f ms (gateway %.2f + workers %.2f): %.0f idle cores would ingest about %.0f emails/s",
                    perEmail(cpu.process + workerCPU), perEmail(cpu.process), perEmail(workerCPU), cores,
                    cores / ((cpu.process + workerCPU) / Double(corpus.count))))
            guard admitted == corpus.count else {
                await pool.shutdown()
                throw BenchFailure("\(corpus.count - admitted) emails were not admitted")
            }
            try await breakdown(
                corpus, ingestor: ingestor, extractor: extractor.base, resolver: resolver, graphs: extractor.sample)
            await pool.shutdown()
            try store.base.closeNow()
        }
    }

    /// Stage costs measured one email at a time in this process (CPU time, so the machine's load does
    /// not count), so they can be compared with the concurrent run's CPU per email.
    private func breakdown(
        _ corpus: [[UInt8]], ingestor: Ingestor, extractor: any Extractor, resolver: any TXTResolver,
        graphs: [MarkupGraph]
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
        let admit = await cpu {
            for (authentication, resolutions) in inputs {
                _ = AdmissionDecision(
                    source: .email(authentication), resolutions: resolutions, owners: [], registration: registration,
                    flags: flags,
                    policy: ingestor.environment.policy, markupInUnsignedTail: false, sourceDescription: "probe")
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
    }

    /// Ingests every email with at most `concurrency` in flight; returns the verdicts counted.
    static func ingestAll(_ corpus: [[UInt8]], with ingestor: Ingestor, concurrency: Int) async throws
        -> [DecisionLogEntry.Verdict: Int]
    {
        try await withThrowingTaskGroup(of: DecisionLogEntry.Verdict.self) { group in
            var verdicts: [DecisionLogEntry.Verdict: Int] = [:]
            var next = 0
            func submit() {
                let message = corpus[next]
                let source = "bench-\(next)"
                group.addTask { try await ingestor.ingestEmail(message, source: source).verdict }
                next += 1
            }
            while next < min(concurrency, corpus.count) { submit() }
            while let verdict = try await group.next() {
                verdicts[verdict, default: 0] += 1
                if next < corpus.count { submit() }
            }
            return verdicts
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

/// The SQLite store, every call timed.
private struct TimedStore: GatewayStore {
    let base: SQLiteStore
    let stopwatch = Stopwatch()

    init(_ base: SQLiteStore) { self.base = base }

    var seconds: Double { stopwatch.seconds }
    func reset() { stopwatch.reset() }

    func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry, removingSpooledMessage spoolID: Int64?
    ) async throws -> DecisionLogEntry {
        try await stopwatch.time {
            try await base.ingest(reservations, decision: decision, removingSpooledMessage: spoolID)
        }
    }
    func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome] {
        try await stopwatch.time { try await base.apply(reservations) }
    }
    func reservation(id: Int64) async throws -> StoredReservation? {
        try await stopwatch.time { try await base.reservation(id: id) }
    }
    func lookup(containerReference: String, itemReferences: [String], owner: OwnerAddress, sourceDomain: String?) async throws
        -> [StoredReservation]
    {
        try await stopwatch.time {
            try await base.lookup(
                containerReference: containerReference, itemReferences: itemReferences, owner: owner,
                sourceDomain: sourceDomain)
        }
    }
    func list(owner: OwnerAddress) async throws -> [StoredReservation] {
        try await stopwatch.time { try await base.list(owner: owner) }
    }
    func listAll(limit: Int) async throws -> [StoredReservation] {
        try await stopwatch.time { try await base.listAll(limit: limit) }
    }
    func history(of id: Int64) async throws -> [ReservationHistoryEntry] {
        try await stopwatch.time { try await base.history(of: id) }
    }
    func append(_ entry: DecisionLogEntry) async throws -> DecisionLogEntry {
        try await stopwatch.time { try await base.append(entry) }
    }
    func entries(domain: String?, since: Date?, afterID: Int64?, limit: Int) async throws -> [DecisionLogEntry] {
        try await stopwatch.time {
            try await base.entries(domain: domain, since: since, afterID: afterID, limit: limit)
        }
    }
    func registeredDomain(_ domain: String) async throws -> RegisteredDomain? {
        try await stopwatch.time { try await base.registeredDomain(domain) }
    }
    func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain] {
        try await stopwatch.time { try await base.registeredDomains(status: status) }
    }
    func updateDomain(
        _ domain: String, by actor: String,
        _ change: @escaping @Sendable (RegisteredDomain?, Date) throws -> DomainUpdate?
    ) async throws -> RegisteredDomain? {
        try await stopwatch.time { try await base.updateDomain(domain, by: actor, change) }
    }
    func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange] {
        try await stopwatch.time { try await base.domainChanges(domain: domain, limit: limit) }
    }
    func flag(_ name: String) async throws -> DeveloperFlagState? {
        try await stopwatch.time { try await base.flag(name) }
    }
    func flags() async throws -> [DeveloperFlagState] { try await stopwatch.time { try await base.flags() } }
    func setFlag(_ name: String, enabled: Bool, expiresAt: Date?, by actor: String) async throws -> DeveloperFlagState {
        try await stopwatch.time { try await base.setFlag(name, enabled: enabled, expiresAt: expiresAt, by: actor) }
    }
    func flagChanges(name: String?, limit: Int) async throws -> [FlagChange] {
        try await stopwatch.time { try await base.flagChanges(name: name, limit: limit) }
    }
    func spool(_ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date)
        async throws -> SpooledMessage
    {
        try await stopwatch.time {
            try await base.spool(
                message, channel: channel, owner: owner, reasonCode: reasonCode, nextAttemptAt: nextAttemptAt)
        }
    }
    func spooledMessage(id: Int64) async throws -> SpooledMessage? {
        try await stopwatch.time { try await base.spooledMessage(id: id) }
    }
    func spooledMessages(dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        try await stopwatch.time { try await base.spooledMessages(dueBy: dueBy, limit: limit) }
    }
    func recordAttempt(id: Int64, reasonCode: String, nextAttemptAt: Date) async throws -> SpooledMessage? {
        try await stopwatch.time {
            try await base.recordAttempt(id: id, reasonCode: reasonCode, nextAttemptAt: nextAttemptAt)
        }
    }
    func removeSpooledMessage(id: Int64) async throws -> Bool {
        try await stopwatch.time { try await base.removeSpooledMessage(id: id) }
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
    func entries(matching query: DecisionLogQuery) async throws -> [DecisionLogEntry] {
        try await base.entries(matching: query)
    }
    func entry(id: Int64) async throws -> DecisionLogEntry? { try await base.entry(id: id) }
    func token(secretHash: String) async throws -> AccessToken? { try await base.token(secretHash: secretHash) }
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
    func chargeQuotas(_ charges: [QuotaCharge]) async throws -> QuotaRefusal? {
        try await stopwatch.time { try await base.chargeQuotas(charges) }
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
    func queueDeliveries(limit: Int) async throws -> Int { try await base.queueDeliveries(limit: limit) }
    func dueDeliveries(at now: Date, limit: Int) async throws -> [DueDelivery] {
        try await base.dueDeliveries(at: now, limit: limit)
    }
    func recordDeliveryAttempts(_ attempts: [DeliveryAttempt]) async throws {
        try await base.recordDeliveryAttempts(attempts)
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
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        for worker in pool.workers {
            guard let pid = worker.processID,
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (comm)": state is field 3, utime and stime are fields 14 and 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) {
                total += (user + system) / ticks
            }
        }
        return total
    }

    static func - (lhs: CPUTime, rhs: CPUTime) -> CPUTime {
        CPUTime(process: lhs.process - rhs.process, children: lhs.children - rhs.children)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
