import EventLoopSupport
import Foundation
import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// What webhooks cost ingestion, and how soon a change reaches a receiver: the release `gateway serve` on a temporary
/// SQLite store, loaded as the serve suite loads it (keep-alive HTTP and LMTP clients in this process), in phases
/// without subscriptions and with three (every change, to an HTTPS receiver in this process on the development CA's
/// test certificate), alternating, so both run on the same machine in the same state. Reports each phase's emails/s,
/// the ratio of the two (target: at least 90%), and, from the change's `time` to its arrival at the receiver, the
/// delivery latency p50/p99. Then a paced phase: HTTP submissions offered at a share of the rate without subscriptions
/// (a load the machine carries, as a gateway is run), with the subscriptions, for the delivery latency there.
///
///   gateway-bench publish [--publish-seconds S (8)] [--publish-connections N (8)] [--publish-rounds N (2)]
///                         [--publish-webhook-priority idle|N] [--publish-webhook-busy-share F]
///                         [--publish-receiver-priority idle|N (idle)]
///                         [--publish-paced-share F (0.6)]
///
/// The receiver stands in for subscribers on other machines, so by default its thread runs at `SCHED_IDLE`: on these
/// two cores it takes only the CPU the gateway and the load leave (about 0.1 ms per email otherwise, some 7% of what
/// the gateway is measured on). `--publish-receiver-priority 0` runs it as the load's clients run, for comparison.
struct PublishBenchmark {
    var seconds: Double
    var connections: Int
    var rounds: Int
    /// The server's `webhook-priority`; nil leaves its default.
    var webhookPriority: String?
    /// The server's `webhook-busy-share`; nil leaves its default.
    var webhookBusyShare: Double?
    /// The receiver's thread's priority in this process.
    var receiverPriority: BackgroundEventLoops.Priority
    /// The paced phase's offered rate, as a share of the rate without subscriptions; 0 skips the phase.
    var pacedShare: Double
    static let subscriptions = 3
    static let targetRatio = 0.90

    typealias Failure = BenchFailure

    func run() async throws {
        report(
            "== Publishing: ingest with 0 and with \(Self.subscriptions) webhook subscriptions, delivery latency "
                + "(webhook-priority \(webhookPriority ?? "default"), webhook-busy-share \(webhookBusyShare.map { "\($0)" } ?? "default"), "
                + "receiver at \(receiverPriority)) ==")
        let directoryOfBench = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let gateway = directoryOfBench.appendingPathComponent("gateway").path
        // .build/release/gateway-bench: the repository is two levels up (its certs/ hold the test site's).
        var repository = directoryOfBench
        while repository.path != "/" && !FileManager.default.fileExists(atPath: repository.appendingPathComponent("certs/dev-ca.pem").path) {
            repository.deleteLastPathComponent()
        }
        let certs = repository.appendingPathComponent("certs")
        guard FileManager.default.isExecutableFile(atPath: gateway), FileManager.default.fileExists(atPath: certs.path) else {
            throw BenchFailure("publish: no \(gateway) or no certs/ above it; run make bench from the repository")
        }

        let phases = rounds * 2
        let count = Int(Double(phases + 1) * seconds * 1300) + 4000
        let (messages, zone) = try IngestBenchmark.reportedCorpus(count: count, detail: ", each its own reservation")
        let corpus = LoadCorpus(messages)
        corpus.makeAvailable(upTo: messages.count)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-publish-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let zonePath = directory.appendingPathComponent("keys.zone").path
        try zone.write(toFile: zonePath, atomically: true, encoding: .utf8)
        // The development policy, plus the test site's name on 127.0.0.1 and the development CA: the receiver below.
        let policyPath = directory.appendingPathComponent("bench-policy.yaml").path
        try """
            name: bench-publish
            registration:
              approveOnRegister: true
            web:
              trustBundles: [\(certs.appendingPathComponent("dev-ca.pem").path)]
              hosts:
                booking.example.test: 127.0.0.1
              allowLoopback: true
            """.write(toFile: policyPath, atomically: true, encoding: .utf8)
        let storePath = directory.appendingPathComponent("gateway.sqlite").path
        var configuration: [String] = []
        let settings =
            (webhookPriority.map { "webhook-priority: \($0)\n" } ?? "")
            + (webhookBusyShare.map { "webhook-busy-share: \($0)\n" } ?? "")
        if !settings.isEmpty {
            let path = directory.appendingPathComponent("serve.yaml").path
            try settings.write(toFile: path, atomically: true, encoding: .utf8)
            configuration = ["--config", path]
        }
        let adminToken = (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined()

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The receiver on its own thread (a receiver is another system): its TLS never delays the load's clients, and
        // at the default idle priority it takes no CPU the gateway or the load want.
        let receiverLoops = BackgroundEventLoops(threads: 1, priority: receiverPriority)
        let receiver = try await WebhookSink.start(
            group: receiverLoops.group, certificate: certs.appendingPathComponent("booking.example.test.pem").path,
            key: certs.appendingPathComponent("booking.example.test.key").path)
        let server = try await ServerProcess.start(
            executable: gateway,
            arguments: [
                "serve", "--store", storePath, "--policy", policyPath, "--keys", zonePath, "--http", "127.0.0.1:0",
                "--lmtp", "127.0.0.1:0", "--log-level", "warning",
            ] + configuration,
            environment: ["GATEWAY_ADMIN_TOKEN": adminToken],
            logPath: directory.appendingPathComponent("server.log").path)
        do {
            let control = ControlClient(group: group, port: server.httpPort)
            let register = try await control.request(
                .POST, "/v1/domains", token: adminToken, json: ["domain": "bench.example", "contact": "markup@bench.example"])
            guard register.status == 201,
                let object = try JSONSerialization.jsonObject(with: Data(register.body)) as? [String: Any],
                let senderToken = (object["senderToken"] as? [String: Any])?["secret"] as? String
            else { throw Failure("POST /v1/domains answered \(register.status)") }
            let driver = LoadDriver(group: group, httpPort: server.httpPort, lmtpPort: server.lmtpPort)
            _ = await driver.run(corpus: corpus, token: senderToken, httpConnections: 2, lmtpSessions: 2, duration: .seconds(1.5))

            /// Adds the subscriptions; returns their ids.
            @Sendable func subscribe() async throws -> [Int] {
                var hooks: [Int] = []
                for index in 0..<Self.subscriptions {
                    let added = try await control.request(
                        .POST, "/v1/webhooks", token: adminToken,
                        json: ["url": "https://booking.example.test:\(receiver.port)/hook/\(index)"])
                    guard added.status == 201,
                        let hook = (try JSONSerialization.jsonObject(with: Data(added.body)) as? [String: Any])?["webhook"]
                            as? [String: Any], let id = hook["id"] as? Int
                    else { throw Failure("POST /v1/webhooks answered \(added.status): \(added.text)") }
                    hooks.append(id)
                }
                return hooks
            }

            var rates: [Bool: [Double]] = [false: [], true: []]
            var latencies: [Int64] = []
            var deliveredDuringPhases = 0
            var changesInPhases = 0
            var cpuPerEmail: [Bool: [Double]] = [false: [], true: []]
            for round in 0..<rounds {
                for subscribed in [false, true] {
                    let hooks = subscribed ? try await subscribe() : []
                    receiver.reset()
                    let cpuBefore = server.cpuSeconds
                    let benchBefore = CPUTime.now().process
                    let started = Date()
                    let load = await driver.run(
                        corpus: corpus, token: senderToken, httpConnections: connections, lmtpSessions: connections,
                        duration: .seconds(seconds))
                    let ended = Date()
                    let acknowledged = (load.http.sent + load.lmtp.sent).filter(\.outcome.isAcknowledged).count
                    let rate = Double(acknowledged) / load.elapsed.seconds
                    rates[subscribed, default: []].append(rate)
                    var line = String(
                        format: "round %d, %d subscriptions: %.0f emails/s (%d in %.1f s)", round + 1,
                        subscribed ? Self.subscriptions : 0, rate, acknowledged, load.elapsed.seconds)
                    if subscribed {
                        // Every change of the phase reaches each subscription: wait for the backlog, then read the delays.
                        let expected = acknowledged * Self.subscriptions
                        let during = receiver.count(before: ended)
                        let drained = await receiver.waitFor(atLeast: expected, timeout: .seconds(120))
                        // Delivering the phase's changes is part of what they cost, also what is sent after it.
                        try? await Task.sleep(for: .milliseconds(200))
                        let phase = receiver.delays(from: started)
                        latencies += phase
                        deliveredDuringPhases += during
                        changesInPhases += expected
                        let sorted = Latencies(phase)
                        line += String(
                            format: "; %d deliveries (%d during the phase%@), latency p50 %.0f ms, p99 %.0f ms",
                            phase.count, during, drained ? "" : ", NOT all drained", sorted.percentile(0.5) * 1e3,
                            sorted.percentile(0.99) * 1e3)
                        for id in hooks { _ = try await control.request(.DELETE, "/v1/webhooks/\(id)", token: adminToken) }
                    }
                    let cpuAfter = server.cpuSeconds
                    let cpu = (cpuAfter.server - cpuBefore.server) + (cpuAfter.workers - cpuBefore.workers)
                    cpuPerEmail[subscribed, default: []].append(cpu / Double(max(acknowledged, 1)))
                    line += String(
                        format: "; server CPU %.2f ms per email (gateway %.2f + workers %.2f s in all); this process "
                            + "(load and receiver) %.2f ms",
                        cpu / Double(max(acknowledged, 1)) * 1e3, cpuAfter.server - cpuBefore.server,
                        cpuAfter.workers - cpuBefore.workers,
                        (CPUTime.now().process - benchBefore) / Double(max(acknowledged, 1)) * 1e3)
                    report(line)
                }
            }
            let without = rates[false, default: []].reduce(0, +) / Double(max(1, rounds))
            let with = rates[true, default: []].reduce(0, +) / Double(max(1, rounds))
            let ratio = with / max(without, 1)
            let all = Latencies(latencies)
            let cpuWithout = cpuPerEmail[false, default: []].reduce(0, +) / Double(max(1, rounds))
            let cpuWith = cpuPerEmail[true, default: []].reduce(0, +) / Double(max(1, rounds))
            report(
                String(
                    format: "publish: %.0f emails/s with %d subscriptions vs %.0f without: %.1f%% (target >= %.0f%%: %@)",
                    with, Self.subscriptions, without, ratio * 100, Self.targetRatio * 100,
                    ratio >= Self.targetRatio ? "met" : "NOT met"))
            report(
                String(
                    format: "  server CPU per email (gateway + workers; with subscriptions until every delivery arrived): %.2f ms with, %.2f ms without: +%.0f%%",
                    cpuWith * 1e3, cpuWithout * 1e3, (cpuWith / max(cpuWithout, 1e-9) - 1) * 100))
            report(
                String(
                    format: "  delivery from the change's time to the receiver: p50 %.0f ms, p99 %.0f ms, max %.0f ms over %d deliveries (%d of %d during the load)",
                    all.percentile(0.5) * 1e3, all.percentile(0.99) * 1e3, all.maximum * 1e3, latencies.count,
                    deliveredDuringPhases, changesInPhases))
            if pacedShare > 0 {
                // A load the machine carries: the gateway's CPU is not all taken, so the deliveries' threads get their
                // turn as soon as a change is committed; what a subscriber sees when the gateway is run as it should be.
                let offered = without * pacedShare
                let hooks = try await subscribe()
                receiver.reset()
                let cpuBefore = server.cpuSeconds
                let started = Date()
                let load = await driver.run(
                    corpus: corpus, token: senderToken, httpConnections: 2 * connections, lmtpSessions: 0,
                    duration: .seconds(seconds), pacer: Pacer(perSecond: offered))
                let ended = Date()
                let acknowledged = load.http.sent.filter(\.outcome.isAcknowledged).count
                let during = receiver.count(before: ended)
                let drained = await receiver.waitFor(atLeast: acknowledged * Self.subscriptions, timeout: .seconds(120))
                try? await Task.sleep(for: .milliseconds(200))
                let cpuAfter = server.cpuSeconds
                let busy = ((cpuAfter.server - cpuBefore.server) + (cpuAfter.workers - cpuBefore.workers))
                    / max(Date().timeIntervalSince(started), 1e-9)
                let delays = receiver.delays(from: started)
                let paced = Latencies(delays)
                let http = Latencies(load.http.latencies)
                report(
                    String(
                        format: "paced, %d subscriptions: offered %.0f emails/s (%.0f%% of the rate without), took %.0f/s; "
                            + "HTTP p50 %.1f ms, p99 %.1f ms; %d deliveries (%d during the phase%@), latency p50 %.0f ms, "
                            + "p99 %.0f ms; server busy %.2f of %d cores",
                        Self.subscriptions, offered, pacedShare * 100, Double(acknowledged) / load.elapsed.seconds,
                        http.percentile(0.5) * 1e3, http.percentile(0.99) * 1e3, delays.count, during,
                        drained ? "" : ", NOT all drained", paced.percentile(0.5) * 1e3, paced.percentile(0.99) * 1e3,
                        busy, ProcessInfo.processInfo.activeProcessorCount))
                for id in hooks { _ = try await control.request(.DELETE, "/v1/webhooks/\(id)", token: adminToken) }
            }
            let status = await server.stop()
            report("  stopped with SIGTERM: exit status \(status)")
        } catch {
            await server.killHard()
            try? await receiver.close()
            try? await group.shutdownGracefully()
            await receiverLoops.shutdown()
            throw BenchFailure("publish: \(error); server log: \(server.logPath)")
        }
        try? await receiver.close()
        try? await group.shutdownGracefully()
        await receiverLoops.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The receiving end: an HTTPS/1.1 server on 127.0.0.1 that answers every POST 204 and notes, per `webhook-id`, when
/// it arrived and the change's `time` from the CloudEvent body. It shares this process's event loop with the load
/// driver and the machine's cores with the gateway, so it does as little as it can per delivery: it takes the `time`
/// out of the body's bytes (the event's last key but one, the gateway's JSON has sorted keys and no spaces) and reads
/// it as a date only when the figures are made.
final class WebhookSink: Sendable {
    struct Arrival: Sendable {
        var arrived: Date
        /// The event's `time`, as sent (RFC 3339).
        var changed: String
    }

    let channel: any Channel
    let port: Int
    private let arrivals = Mutex<[Arrival]>([])

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    static func start(group: any EventLoopGroup, certificate: String, key: String) async throws -> WebhookSink {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        let context = try NIOSSLContext(configuration: configuration)
        let sink = Mutex<WebhookSink?>(nil)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(record: { sink.withLock { $0 }?.note($0) }))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let made = WebhookSink(channel: channel, port: channel.localAddress?.port ?? 0)
        sink.withLock { $0 = made }
        return made
    }

    func note(_ arrival: Arrival) { arrivals.withLock { $0.append(arrival) } }
    func reset() { arrivals.withLock { $0.removeAll() } }
    func count(before: Date) -> Int { arrivals.withLock { $0.filter { $0.arrived <= before }.count } }

    /// Nanoseconds from each change's time to its arrival, for changes made at or after `start`.
    func delays(from start: Date) -> [Int64] {
        let list = arrivals.withLock { $0 }
        var times: [String: Date] = [:]
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return list.compactMap { arrival in
            guard let changed = times[arrival.changed] ?? (try? Date(arrival.changed, strategy: style)) else { return nil }
            times[arrival.changed] = changed
            guard changed >= start.addingTimeInterval(-0.001) else { return nil }
            return Int64(arrival.arrived.timeIntervalSince(changed) * 1e9)
        }
    }

    func waitFor(atLeast count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if arrivals.withLock({ $0.count }) >= count { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    func close() async throws { try await channel.close() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let record: @Sendable (Arrival) -> Void
        var body = ByteBuffer()

        init(record: @escaping @Sendable (Arrival) -> Void) { self.record = record }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: body.clear()
            case .body(var part): body.writeBuffer(&part)
            case .end:
                let arrived = Date()
                if let time = Self.lastTime(in: body.readableBytesView) {
                    record(Arrival(arrived: arrived, changed: time))
                }
                // 204 has no body and no Content-Length (RFC 9110 §8.6); the connection stays open for the next
                // delivery unless the request asked to close it, as any HTTP/1.1 server does.
                let head = HTTPResponseHead(version: .http1_1, status: .noContent)
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        static let timeKey = Array(#""time":""#.utf8)

        /// The value of the last `"time":"…"` in `bytes`: the event's own (the data's keys come before it).
        static func lastTime(in bytes: ByteBufferView) -> String? {
            let body = Array(bytes)
            guard body.count > timeKey.count else { return nil }
            var index = body.count - timeKey.count
            while index >= 0 {
                if body[index] == UInt8(ascii: "\""), body[index..<(index + timeKey.count)].elementsEqual(timeKey) {
                    let start = index + timeKey.count
                    guard let end = body[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                    return String(decoding: body[start..<end], as: UTF8.self)
                }
                index -= 1
            }
            return nil
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
