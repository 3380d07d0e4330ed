import NIOCore
import NIOHTTP1
import NIOPosix

/// Drives a load phase: `httpConnections` keep-alive HTTP connections and `lmtpSessions` LMTP sessions, all
/// sending at once until `deadline`, each reconnecting if the server closes it early (unless `reconnect` is off,
/// as when the server is about to be killed).
struct LoadDriver: Sendable {
    var group: any EventLoopGroup
    var host = "127.0.0.1"
    var httpPort: Int
    var lmtpPort: Int
    /// LMTP over this Unix domain socket instead of `host` and `lmtpPort`.
    var lmtpSocket: String? = nil

    /// What the phase's clients did, by channel.
    struct Outcome: Sendable {
        var http = ClientRecord()
        var lmtp = ClientRecord()
        /// From the first connection attempt to the last client's end.
        var elapsed: Duration = .zero
    }

    func run(
        corpus: LoadCorpus?, token: String, httpConnections: Int, lmtpSessions: Int, duration: Duration,
        reconnect: Bool = true, trigger: CrashTrigger? = nil, pacer: Pacer? = nil
    ) async -> Outcome {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = NIODeadline.now() + .nanoseconds(Int64(duration.seconds * 1e9))
        var outcome = Outcome()
        await withTaskGroup(of: (Bool, ClientRecord).self) { group in
            for _ in 0..<httpConnections {
                let work: HTTPLoadHandler.Work = corpus.map { .submissions($0, token: token) } ?? .healthz
                group.addTask {
                    (true, await slot(deadline: deadline, reconnect: reconnect) {
                        try await http(work, deadline: deadline, trigger: trigger, pacer: pacer)
                    })
                }
            }
            if let corpus {
                for _ in 0..<lmtpSessions {
                    group.addTask {
                        (false, await slot(deadline: deadline, reconnect: reconnect) {
                            try await lmtp(corpus, deadline: deadline, trigger: trigger)
                        })
                    }
                }
            }
            for await (isHTTP, record) in group {
                if isHTTP { outcome.http.merge(record) } else { outcome.lmtp.merge(record) }
            }
        }
        outcome.elapsed = clock.now - start
        return outcome
    }

    /// One client slot: a connection, and new ones while the deadline has not passed and the corpus lasts.
    private func slot(
        deadline: NIODeadline, reconnect: Bool, connect: () async throws -> EventLoopFuture<ClientRecord>
    ) async -> ClientRecord {
        var total = ClientRecord()
        repeat {
            do {
                let record = try await connect().get()
                total.merge(record)
                // A connection that got nowhere (refused, closed at once): the server is gone, do not spin.
                if record.sent.isEmpty && record.latencies.isEmpty && record.healthFailures == 0 { break }
            } catch {
                total.note("connect: \(error)")
                break
            }
        } while reconnect && !total.exhausted && NIODeadline.now() < deadline
        return total
    }

    private func http(
        _ work: HTTPLoadHandler.Work, deadline: NIODeadline, trigger: CrashTrigger?, pacer: Pacer?
    ) async throws -> EventLoopFuture<ClientRecord> {
        let promise = group.next().makePromise(of: ClientRecord.self)
        let hostHeader = "\(host):\(httpPort)"
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        HTTPLoadHandler(
                            work: work, host: hostHeader, deadline: deadline, promise: promise, trigger: trigger,
                            pacer: pacer))
                }
            }
        do {
            _ = try await bootstrap.connect(host: host, port: httpPort).get()
        } catch {
            promise.fail(error)
        }
        return promise.futureResult
    }

    private func lmtp(
        _ corpus: LoadCorpus, deadline: NIODeadline, trigger: CrashTrigger?
    ) async throws -> EventLoopFuture<ClientRecord> {
        let promise = group.next().makePromise(of: ClientRecord.self)
        var bootstrap = ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        LMTPLoadHandler(corpus: corpus, deadline: deadline, promise: promise, trigger: trigger))
                }
            }
        do {
            if let lmtpSocket {
                _ = try await bootstrap.connect(unixDomainSocketPath: lmtpSocket).get()
            } else {
                bootstrap = bootstrap.channelOption(.socketOption(.tcp_nodelay), value: 1)
                _ = try await bootstrap.connect(host: host, port: lmtpPort).get()
            }
        } catch {
            promise.fail(error)
        }
        return promise.futureResult
    }
}
