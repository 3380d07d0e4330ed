import CDispatch  // timespec: with the server targets linked in, its fields resolve to CDispatch (MemberImportVisibility)
import Foundation
import Glibc
import MailMessage
import Markup
import Reservations
import Sandbox

/// Extraction throughput (`gateway-bench extract`): MB/s of HTML and reservations/s on a generated
/// corpus of booking pages and confirmation emails from 5 to 500 KB with mixed markup, measured
/// in-process (`DocumentExtraction` + `ReservationResolver`, one core), through the sandbox
/// (`WorkerPool` with the `gateway-worker` next to this binary: one worker, then one per core), and
/// beside extruct (Debian's `python3-extruct`, timing only its `extract` call) on the same files in
/// the same run, each the best of five passes. Targets: at least 5× extruct; the sandbox costs at
/// most 15% over in-process. It also reports how much of the corpus the fast paths (the JSON-LD scan,
/// the index scan) read without libxml2's parse (every graph checked against libxml2's reading) and,
/// in the same run, in-process CPU time without them.
///
///   gateway-bench extract [--documents N]
struct ExtractionBenchmark {
    var documentCount: Int
    var passes = 5
    /// Passes of the in-process and sandboxed runs, taken in turn: the sandbox's cost is a difference of two CPU
    /// times that this shared machine's load moves by several percent, so each is the best of more passes.
    var comparisonPasses = 9

    func run() async throws {
        report("== Extraction: HTML and email → reservations ==")
        let started = ContinuousClock.now
        var generator = SplitMix64(seed: 20_261_122)
        let corpus = (0..<documentCount).map { ExtractionCorpus.document(index: $0, using: &generator) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "gateway-bench-extract-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        ChildProcesses.removeOnSignal(directory.path)
        defer { try? FileManager.default.removeItem(at: directory) }
        var manifest: [[String: String]] = []
        for document in corpus {
            let url = directory.appendingPathComponent(document.name)
            try Data(document.bytes).write(to: url)
            manifest.append(["path": url.path, "kind": document.kind == .email ? "email" : "html"])
        }
        let manifestURL = directory.appendingPathComponent("manifest.json")
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifestURL)

        let htmlBytes = corpus.reduce(0) { $0 + $1.htmlBytes }
        let inputBytes = corpus.reduce(0) { $0 + $1.bytes.count }
        let expectedItems = corpus.reduce(0) { $0 + $1.expectedItems }
        let emails = corpus.count { $0.kind == .email }
        let sizes = corpus.map(\.bytes.count).sorted()
        report(
            String(
                format: "corpus: %d documents (%d emails, %d pages), %.1f MB of HTML, %.1f MB as files, "
                    + "%d to %d KB (median %d KB), %d reservations; generated in %.1f s",
                corpus.count, emails, corpus.count - emails, Double(htmlBytes) / 1e6, Double(inputBytes) / 1e6,
                sizes[0] / 1000, sizes[sizes.count - 1] / 1000, sizes[sizes.count / 2] / 1000, expectedItems,
                Self.seconds(ContinuousClock.now - started)))
        report("load average before measuring: \(Self.loadAverage())")

        // In-process (the worker's handler and the resolver, one document after another, one core)
        // and through one sandboxed worker (the same handler confined, graphs back over a pipe),
        // pass for pass in turn, so that the load of this shared machine weighs on both alike.
        let inProcess = InProcessRunner()
        let worker = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("gateway-worker").path
        var pool: WorkerPool?
        if FileManager.default.isExecutableFile(atPath: worker) {
            pool = await Self.startPool(worker: worker, workers: 1)
        } else {
            report("sandbox: no worker at \(worker); build it with swift build -c release --product gateway-worker")
        }
        guard inProcess.pass(corpus) == expectedItems else {
            await pool?.shutdown()
            throw BenchFailure(
                "in-process extraction did not find the corpus's \(expectedItems) admissible reservations")
        }
        if let running = pool, await Self.sandboxPass(corpus, pool: running, inFlight: 1) != expectedItems {
            report("sandbox: the warm-up pass did not find the corpus's \(expectedItems) reservations")
            await running.shutdown()
            pool = nil
        }
        // The same with the slot's thread and worker left to the scheduler (`colocatesWorkers` off), for the
        // placement's share of the sandbox's cost; only where there is more than one CPU to place them on.
        var unplaced: WorkerPool?
        if pool?.cpu(ofSlot: 0) != nil, let started = await Self.startPool(worker: worker, workers: 1, colocated: false)
        {
            unplaced = started
            if await Self.sandboxPass(corpus, pool: started, inFlight: 1) != expectedItems {
                await started.shutdown()
                unplaced = nil
            }
        }
        let fastPath = try Self.fastPathShare(corpus)
        report(
            String(
                format: "without libxml2's parse: %d of %d documents, %.1f of %.1f MB of HTML (JSON-LD scan %d, "
                    + "%.1f MB; index scan %d, %.1f MB; the scan declined %d); every graph equal to libxml2's reading",
                fastPath.any.documents, corpus.count, Double(fastPath.any.htmlBytes) / 1e6, Double(htmlBytes) / 1e6,
                fastPath.jsonLD.documents, Double(fastPath.jsonLD.htmlBytes) / 1e6,
                fastPath.any.documents - fastPath.jsonLD.documents,
                Double(fastPath.any.htmlBytes - fastPath.jsonLD.htmlBytes) / 1e6, corpus.count - fastPath.any.documents)
        )
        let parsingEverything = InProcessRunner.parsingEverything
        var parsingEverythingCPU = Double.infinity
        var bestInProcess = Double.infinity
        var bestSandboxed = Double.infinity
        // CPU time too, which the machine's load disturbs far less than wall time: this process's
        // for a pass in-process; this process's and the worker's for a pass through the sandbox.
        var inProcessCPU = Double.infinity
        var sandboxCPU = Double.infinity
        var sandboxCPUParts = (gateway: 0.0, worker: 0.0, slots: 0.0)
        // The same worker with 8 documents in flight, as a server has them: the queued ones go to it in batches.
        var queuedCPU = Double.infinity
        var queuedSeconds = Double.infinity
        var queuedWorkerCPU = Double.infinity
        // The in-process pass's extraction alone (the same loop without resolution): the figure the worker's own
        // CPU time compares with. Resolution interleaved with extraction costs more than the resolution-only loop
        // below, whose graphs and code stay hot, so the pass less that loop overstates extraction.
        var extractionCPU = Double.infinity
        // The worker's page faults and context switches over the 1-in-flight passes, and the documents they served.
        var workerEvents = WorkerEvents()
        var workerEventDocuments = 0
        var unplacedCPU = Double.infinity
        // The in-process passes run on the CPU the sandboxed ones do (the pool's slot 0 and its worker share one:
        // `WorkerPool.Configuration.colocatesWorkers`), so that a difference between this machine's CPUs (a virtual
        // one sharing its core with another guest) does not count as the sandbox's cost or saving.
        let measuringCPU = pool?.cpu(ofSlot: 0)
        let allowedCPUs = CPUPlacement.allowedCPUs()
        for _ in 0..<comparisonPasses {
            if let measuringCPU { CPUPlacement.bind(0, to: measuringCPU) }
            var start = ContinuousClock.now
            var cpu = Self.processCPUSeconds()
            _ = inProcess.pass(corpus)
            bestInProcess = min(bestInProcess, Self.seconds(ContinuousClock.now - start))
            inProcessCPU = min(inProcessCPU, Self.processCPUSeconds() - cpu)
            cpu = Self.processCPUSeconds()
            inProcess.extractAll(corpus)
            extractionCPU = min(extractionCPU, Self.processCPUSeconds() - cpu)
            cpu = Self.processCPUSeconds()
            _ = parsingEverything.pass(corpus)
            parsingEverythingCPU = min(parsingEverythingCPU, Self.processCPUSeconds() - cpu)
            if measuringCPU != nil, !allowedCPUs.isEmpty { CPUPlacement.bind(0, toAnyOf: allowedCPUs) }
            if let pool {
                let workerID = pool.workers.first?.processID
                let workerCPU = workerID.flatMap(Self.cpuSeconds(ofProcess:))
                let eventsBefore = workerID.flatMap(WorkerEvents.init(ofProcess:))
                let slotCPU = Self.slotThreadsCPUSeconds()
                start = ContinuousClock.now
                cpu = Self.processCPUSeconds()
                _ = await Self.sandboxPass(corpus, pool: pool, inFlight: 1)
                bestSandboxed = min(bestSandboxed, Self.seconds(ContinuousClock.now - start))
                let ownCPU = Self.processCPUSeconds() - cpu
                // A worker replaced during the pass leaves its CPU time unknown: that pass is not counted.
                if let workerID, pool.workers.first?.processID == workerID, let workerCPU,
                    let after = Self.cpuSeconds(ofProcess: workerID)
                {
                    if ownCPU + after - workerCPU < sandboxCPU {
                        sandboxCPU = ownCPU + after - workerCPU
                        sandboxCPUParts = (ownCPU, after - workerCPU, Self.slotThreadsCPUSeconds() - slotCPU)
                    }
                    if let eventsBefore, let eventsAfter = WorkerEvents(ofProcess: workerID) {
                        workerEvents = workerEvents + eventsAfter - eventsBefore
                        workerEventDocuments += corpus.count
                    }
                }
                if let unplaced, let pass = await Self.timedPass(corpus, pool: unplaced, inFlight: 1),
                    let worker = pass.workerCPU
                {
                    unplacedCPU = min(unplacedCPU, pass.ownCPU + worker)
                }
                if let pass = await Self.timedPass(corpus, pool: pool, inFlight: Self.queuedInFlight) {
                    queuedSeconds = min(queuedSeconds, pass.seconds)
                    if let worker = pass.workerCPU {
                        if pass.ownCPU + worker < queuedCPU { queuedWorkerCPU = worker }
                        queuedCPU = min(queuedCPU, pass.ownCPU + worker)
                    }
                }
            }
        }
        await pool?.shutdown()
        await unplaced?.shutdown()
        let ours = Figure(seconds: bestInProcess, htmlBytes: htmlBytes, items: expectedItems)
        report("gateway in-process (1 core):       \(ours)")
        report(
            String(
                format:
                    "in-process with libxml2 for every document (no fast paths): CPU %.3f s per pass against %.3f s; "
                    + "the fast paths save %.1f%%",
                parsingEverythingCPU, inProcessCPU, (1 - inProcessCPU / parsingEverythingCPU) * 100))
        let sandboxed = pool.map { _ in Figure(seconds: bestSandboxed, htmlBytes: htmlBytes, items: expectedItems) }
        if let sandboxed { report("gateway sandboxed (1 worker):      \(sandboxed)") }
        if sandboxed != nil, sandboxCPU.isFinite {
            // Resolution runs in this process either way: its share of the gateway's side is not the sandbox's.
            let graphs = corpus.map {
                inProcess.extraction.extract(ExtractionRequest(id: 0, kind: $0.kind, document: $0.bytes))
            }
            var resolveCPU = Double.infinity
            for _ in 0..<comparisonPasses {
                let cpu = Self.processCPUSeconds()
                for graph in graphs { _ = inProcess.resolver.resolve(graph) }
                resolveCPU = min(resolveCPU, Self.processCPUSeconds() - cpu)
            }
            report(
                String(
                    format: "CPU time per pass: in-process %.3f s (extraction alone %.3f s), sandboxed %.3f s "
                        + "(gateway %.3f s + worker %.3f s); resolution alone %.3f s; of the gateway's, the pool's "
                        + "slot thread %.3f s (with the steps of the pass's task it resumed: decoding, resolving)",
                    inProcessCPU, extractionCPU, sandboxCPU, sandboxCPUParts.gateway, sandboxCPUParts.worker,
                    resolveCPU, sandboxCPUParts.slots))
            if workerEventDocuments > 0 {
                let documents = Double(workerEventDocuments)
                report(
                    String(
                        format: "the worker, 1 document in flight: %+.1f%% CPU over in-process extraction alone; per "
                            + "document %.2f page faults, %.2f voluntary and %.2f involuntary context switches",
                        (sandboxCPUParts.worker / extractionCPU - 1) * 100,
                        Double(workerEvents.minorFaults) / documents,
                        Double(workerEvents.voluntarySwitches) / documents,
                        Double(workerEvents.involuntarySwitches) / documents))
            }
            if unplacedCPU.isFinite {
                report(
                    String(
                        format: "the slot's thread and its worker bound to CPU %d together; left to the scheduler "
                            + "instead: CPU %.3f s per pass, %+.1f%% over in-process (bound: %+.1f%%)",
                        pool?.cpu(ofSlot: 0) ?? -1, unplacedCPU, (unplacedCPU / inProcessCPU - 1) * 100,
                        (sandboxCPU / inProcessCPU - 1) * 100))
            }
            if queuedCPU.isFinite {
                report(
                    String(
                        format:
                            "sandboxed, 1 worker, %d documents in flight (the queued ones written to it in batches, "
                            + "largest %d): %.3f s per pass, CPU %.3f s (worker %.3f s, %+.1f%% over extraction alone), "
                            + "%+.1f%% over in-process",
                        Self.queuedInFlight, pool?.workers.first?.largestBatch ?? 0, queuedSeconds, queuedCPU,
                        queuedWorkerCPU, (queuedWorkerCPU / extractionCPU - 1) * 100,
                        (queuedCPU / inProcessCPU - 1) * 100))
            }
        }

        // Every core: one worker per core, as many documents in flight.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        if sandboxed != nil, cores > 1, let parallel = await Self.startPool(worker: worker, workers: cores) {
            var best = Double.infinity
            var complete = await Self.sandboxPass(corpus, pool: parallel, inFlight: cores) == expectedItems
            for _ in 0..<passes where complete {
                let start = ContinuousClock.now
                complete = await Self.sandboxPass(corpus, pool: parallel, inFlight: cores) == expectedItems
                best = min(best, Self.seconds(ContinuousClock.now - start))
            }
            await parallel.shutdown()
            if complete {
                report(
                    "gateway sandboxed (\(cores) workers):     \(Figure(seconds: best, htmlBytes: htmlBytes, items: expectedItems))"
                )
            }
        }

        // extruct on the same files, in the same run: only its extract() call is timed.
        guard let extruct = Self.runExtruct(manifest: manifestURL, passes: passes, htmlBytes: htmlBytes) else { return }
        report("extruct \(extruct.version) (1 core, extract() only): \(extruct.figure)")
        var ratios = String(
            format: "ours / extruct: in-process %.1f×", ours.megabytesPerSecond / extruct.figure.megabytesPerSecond)
        if let sandboxed {
            ratios += String(
                format: ", sandboxed %.1f×", sandboxed.megabytesPerSecond / extruct.figure.megabytesPerSecond)
        }
        if let theirs = extruct.cpuSeconds, inProcessCPU.isFinite {
            ratios += String(format: "; by CPU time: in-process %.1f×", theirs / inProcessCPU)
            if sandboxCPU.isFinite { ratios += String(format: ", sandboxed %.1f×", theirs / sandboxCPU) }
        }
        report(ratios + " (target ≥ 5×)")
        if let sandboxed {
            var cost = String(format: "sandbox cost: %+.1f%% wall time", (sandboxed.seconds / ours.seconds - 1) * 100)
            if sandboxCPU.isFinite {
                cost += String(format: ", %+.1f%% CPU time", (sandboxCPU / inProcessCPU - 1) * 100)
            }
            report(cost + " over in-process (target ≤ 15%)")
        }
        report("load average after measuring: \(Self.loadAverage())")
    }

    /// Documents in flight for the sandboxed pass that has a queue.
    static let queuedInFlight = 8

    /// The handler and the resolver in this process.
    struct InProcessRunner {
        var extraction = DocumentExtraction()
        let resolver = ReservationResolver()

        /// Every document through libxml2, as before the fast paths (the JSON-LD scan, the index scan): the
        /// baseline of their gain.
        static var parsingEverything: InProcessRunner {
            var configuration = DocumentExtraction.Configuration()
            configuration.markup.scansJSONLDOnlyDocuments = false
            configuration.markup.scansRegularDocuments = false
            var runner = InProcessRunner()
            runner.extraction = DocumentExtraction(configuration: configuration)
            return runner
        }

        /// The pass's extraction without resolution.
        func extractAll(_ corpus: [ExtractionCorpus.Document]) {
            for document in corpus {
                _ = extraction.extract(ExtractionRequest(id: 0, kind: document.kind, document: document.bytes))
            }
        }

        /// One pass over the corpus: the admissible reservations found.
        func pass(_ corpus: [ExtractionCorpus.Document]) -> Int {
            var found = 0
            for document in corpus {
                let graph = extraction.extract(ExtractionRequest(id: 0, kind: document.kind, document: document.bytes))
                found += resolver.resolve(graph).count { $0.admissible }
            }
            return found
        }
    }

    /// The documents (and their bytes of HTML) whose HTML parts the fast paths read without libxml2: the JSON-LD
    /// scan alone (`MarkupExtractor.Configuration.scansJSONLDOnlyDocuments`), and the JSON-LD or the index scan
    /// (`scansRegularDocuments`); throws when a graph differs from libxml2's.
    static func fastPathShare(_ corpus: [ExtractionCorpus.Document]) throws -> (
        jsonLD: (documents: Int, htmlBytes: Int), any: (documents: Int, htmlBytes: Int)
    ) {
        var withoutScan = DocumentExtraction.Configuration()
        withoutScan.markup.scansJSONLDOnlyDocuments = false
        withoutScan.markup.scansRegularDocuments = false
        let parsed = DocumentExtraction(configuration: withoutScan)
        let scanned = DocumentExtraction()
        let extractor = MarkupExtractor()
        var jsonLD = (documents: 0, htmlBytes: 0)
        var any = (documents: 0, htmlBytes: 0)
        for document in corpus {
            let request = ExtractionRequest(id: 0, kind: document.kind, document: document.bytes)
            guard scanned.extract(request) == parsed.extract(request) else {
                throw BenchFailure("the fast paths read \(document.name) otherwise than libxml2")
            }
            let parts: [[UInt8]]
            if document.kind == .email {
                let message = try RawMessage(bytes: document.bytes)
                parts = message.markupParts().parts.filter { $0.kind == .html }.map { Array($0.text.utf8) }
            } else {
                parts = [document.bytes]
            }
            let encoding = document.kind == .email ? "UTF-8" : nil
            guard !parts.isEmpty else { continue }
            if parts.allSatisfy({ extractor.scansWithoutParsing(html: $0, encoding: encoding) }) {
                jsonLD.documents += 1
                jsonLD.htmlBytes += document.htmlBytes
            }
            if parts.allSatisfy({ extractor.readsWithoutLibxml2(html: $0, encoding: encoding) }) {
                any.documents += 1
                any.htmlBytes += document.htmlBytes
            }
        }
        return (jsonLD, any)
    }

    /// A pool of `workers` release workers, or nil (with a message) when it cannot start.
    private static func startPool(worker: String, workers: Int, colocated: Bool = true) async -> WorkerPool? {
        var configuration = WorkerPool.Configuration(
            workerExecutable: worker, workerCount: workers, colocatesWorkers: colocated)
        configuration.maxDocumentsPerWorker = 100_000
        do {
            return try await WorkerPool(configuration: configuration)
        } catch {
            report("sandbox: the pool did not start: \(error)")
            return nil
        }
    }

    /// One pass over the corpus through `pool`, `inFlight` documents at a time, each graph resolved
    /// here: the admissible reservations found, nil when a document failed. One at a time, this task awaits each
    /// document in turn, as the in-process pass calls the handler: a child task per document would add its
    /// creation, its completion and this task's wake-up to the sandbox's cost. The pass prefers the pool's
    /// executor (`WorkerPool.executor`), as a caller that extracts many documents should: the step after each
    /// answer runs on the slot thread that read it, not on a cooperative thread woken for it.
    private static func sandboxPass(
        _ corpus: [ExtractionCorpus.Document], pool: WorkerPool, inFlight: Int
    ) async -> Int? {
        await withTaskExecutorPreference(pool.executor) {
            await sandboxPass(corpus, pool: pool, inFlight: inFlight, resolver: ReservationResolver())
        }
    }

    private static func sandboxPass(
        _ corpus: [ExtractionCorpus.Document], pool: WorkerPool, inFlight: Int, resolver: ReservationResolver
    ) async -> Int? {
        if inFlight == 1 {
            var total = 0
            for document in corpus {
                switch await pool.extract(document.bytes, kind: document.kind, deadline: .seconds(30)) {
                case .success(let graph):
                    total += resolver.resolve(graph).count { $0.admissible }
                case .failure(let failure):
                    report("sandbox: \(document.name): \(failure)")
                    return nil
                }
            }
            return total
        }
        return await withTaskGroup(of: Int?.self) { group in
            var total: Int? = 0
            for (index, document) in corpus.enumerated() {
                if index >= inFlight, let result = await group.next() {
                    total = total.flatMap { sum in result.map { sum + $0 } }
                }
                group.addTask {
                    switch await pool.extract(document.bytes, kind: document.kind, deadline: .seconds(30)) {
                    case .success(let graph):
                        return resolver.resolve(graph).count { $0.admissible }
                    case .failure(let failure):
                        report("sandbox: \(document.name): \(failure)")
                        return nil
                    }
                }
            }
            for await result in group { total = total.flatMap { sum in result.map { sum + $0 } } }
            return total
        }
    }

    /// One ``sandboxPass(_:pool:inFlight:)`` timed: its wall seconds, this process's CPU seconds, and those of the
    /// pool's first worker (nil when that worker was replaced during the pass, which leaves its CPU time unknown);
    /// nil when the pool has no worker to measure.
    private static func timedPass(
        _ corpus: [ExtractionCorpus.Document], pool: WorkerPool, inFlight: Int
    ) async -> (seconds: Double, ownCPU: Double, workerCPU: Double?)? {
        guard let workerID = pool.workers.first?.processID, let before = cpuSeconds(ofProcess: workerID) else {
            return nil
        }
        let cpu = processCPUSeconds()
        let start = ContinuousClock.now
        _ = await sandboxPass(corpus, pool: pool, inFlight: inFlight)
        let elapsed = seconds(ContinuousClock.now - start)
        let ownCPU = processCPUSeconds() - cpu
        guard pool.workers.first?.processID == workerID, let after = cpuSeconds(ofProcess: workerID) else {
            return (elapsed, ownCPU, nil)
        }
        return (elapsed, ownCPU, after - before)
    }

    /// Throughput of one pass over the corpus.
    struct Figure: CustomStringConvertible {
        var seconds: Double
        var htmlBytes: Int
        var items: Int
        var megabytesPerSecond: Double { Double(htmlBytes) / seconds / 1e6 }
        var itemsPerSecond: Double { Double(items) / seconds }
        var description: String {
            String(
                format: "%6.1f MB/s of HTML, %7.0f items/s (%d items, %.3f s per pass)",
                megabytesPerSecond, itemsPerSecond, items, seconds)
        }
    }

    /// Reads each manifest file (an email's text/html parts decoded by Python's email package,
    /// untimed), then times `extruct.extract` over all of them, JSON-LD and Microdata, best of `passes`.
    private static let extructScript = #"""
        import email, email.policy, json, logging, sys, time, warnings
        warnings.filterwarnings("ignore")
        logging.disable(logging.CRITICAL)
        import extruct
        try:
            from importlib.metadata import version
            extruct_version = version("extruct")
        except Exception:
            extruct_version = "?"
        manifest = json.load(open(sys.argv[1]))
        passes = int(sys.argv[2])
        documents = []
        for entry in manifest:
            data = open(entry["path"], "rb").read()
            if entry["kind"] == "email":
                message = email.message_from_bytes(data, policy=email.policy.default)
                documents.append([part.get_payload(decode=True) for part in message.walk()
                                  if part.get_content_type() == "text/html" and not part.is_attachment()])
            else:
                documents.append([data])
        best = None
        best_cpu = None
        items = 0
        for _ in range(passes + 1):
            elapsed = 0.0
            cpu = 0.0
            items = 0
            for parts in documents:
                for html in parts:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    result = extruct.extract(html, syntaxes=["json-ld", "microdata"], errors="ignore")
                    elapsed += time.perf_counter() - start
                    cpu += time.process_time() - start_cpu
                    items += len(result.get("json-ld", [])) + len(result.get("microdata", []))
            best = elapsed if best is None else min(best, elapsed)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        print(json.dumps({"seconds": best, "cpuSeconds": best_cpu, "items": items,
                          "htmlBytes": sum(len(h) for d in documents for h in d), "version": extruct_version}))
        """#

    /// Runs extruct under Debian's python (`python3` on PATH may not see python3-extruct).
    private static func runExtruct(
        manifest: URL, passes: Int, htmlBytes: Int
    ) -> (figure: Figure, cpuSeconds: Double?, version: String)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", extructScript, manifest.path, String(passes)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            report("extruct: cannot run /usr/bin/python3 (\(error)); install python3-extruct (make deps)")
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let seconds = object["seconds"] as? Double, let items = object["items"] as? Int
        else {
            report("extruct: no result (exit status \(process.terminationStatus)); is python3-extruct installed?")
            return nil
        }
        if let theirs = object["htmlBytes"] as? Int, abs(theirs - htmlBytes) > htmlBytes / 100 {
            report("extruct: read \(theirs) bytes of HTML where the corpus has \(htmlBytes)")
        }
        return (
            Figure(seconds: seconds, htmlBytes: htmlBytes, items: items), object["cpuSeconds"] as? Double,
            object["version"] as? String ?? "?"
        )
    }

    /// CPU time this process has used, all threads.
    static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// CPU time another process has used (its main thread, the only one a worker has), from the
    /// scheduler's nanosecond count in `/proc/PID/schedstat`.
    static func cpuSeconds(ofProcess processID: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(processID)/schedstat", encoding: .utf8),
            let nanoseconds = text.split(separator: " ").first.flatMap({ Double($0) })
        else { return nil }
        return nanoseconds / 1e9
    }

    /// A worker's page faults (minor; a worker reads no file) and context switches so far, from `/proc/PID/stat`
    /// and `/proc/PID/status`.
    struct WorkerEvents {
        var minorFaults = 0
        var voluntarySwitches = 0
        var involuntarySwitches = 0

        init() {}

        init?(ofProcess processID: Int32) {
            guard let fields = CPUTime.statFields(String(processID)),
                let status = try? String(contentsOfFile: "/proc/\(processID)/status", encoding: .utf8)
            else { return nil }
            // After "pid (comm)": state ppid pgrp session tty_nr tpgid flags minflt ...
            guard fields.count > 7, let faults = Int(fields[7]) else { return nil }
            minorFaults = faults
            for line in status.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
                if parts[0] == "voluntary_ctxt_switches" { voluntarySwitches = value }
                if parts[0] == "nonvoluntary_ctxt_switches" { involuntarySwitches = value }
            }
        }

        static func + (left: WorkerEvents, right: WorkerEvents) -> WorkerEvents {
            var sum = left
            sum.minorFaults += right.minorFaults
            sum.voluntarySwitches += right.voluntarySwitches
            sum.involuntarySwitches += right.involuntarySwitches
            return sum
        }

        static func - (left: WorkerEvents, right: WorkerEvents) -> WorkerEvents {
            var difference = left
            difference.minorFaults -= right.minorFaults
            difference.voluntarySwitches -= right.voluntarySwitches
            difference.involuntarySwitches -= right.involuntarySwitches
            return difference
        }
    }

    /// CPU time of this process's threads that drive sandbox workers (named `sandbox-N` by the pool): the
    /// gateway's side of the pipes (writing documents, reading graphs) and, since the sandboxed passes prefer the
    /// pool's executor, the steps of their tasks that the slot threads resumed (decoding and resolving graphs,
    /// submitting the next document).
    static func slotThreadsCPUSeconds() -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var total = 0.0
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                name.hasPrefix("sandbox-"),
                let text = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
                let nanoseconds = text.split(separator: " ").first.flatMap({ Double($0) })
            else { continue }
            total += nanoseconds / 1e9
        }
        return total
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
    }
}
