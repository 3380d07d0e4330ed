import Admission
import EventLoopSupport
import Foundation
import Hummingbird
import Ingestion
import LMTP
package import Logging
package import NIOCore
import ServiceLifecycle
import UnixSignals
import WebFetch

/// `gateway serve`: the HTTP API, the LMTP listener, the spool worker, the cluster's jobs and the store watcher, run
/// as one service group that shuts down gracefully on SIGTERM or SIGINT (new connections refused, work in flight
/// finished, up to the drain timeout), over the same ``Ingestor`` the command line uses.
package struct GatewayServer: Sendable {
    package enum Listener: String, Sendable {
        case http, lmtp
    }

    let services: GatewayServices
    let logger: Logger

    package init(services: GatewayServices, logger: Logger) {
        self.services = services
        self.logger = logger
    }

    /// Runs until a shutdown signal or cancellation.
    /// - Parameter onListening: told each listener's bound address once it listens.
    package func run(onListening: @escaping @Sendable (Listener, SocketAddress) -> Void = { _, _ in }) async throws {
        let configuration = services.configuration
        let application = try GatewayApplication.application(services, logger: logger) { address in
            if let address { onListening(.http, address) }
        }
        // Deliveries on their own threads at a lower CPU priority: a busy machine ingests first (DESIGN.md,
        // "Publishing changes"). The threads stop after everything else, however the run ends.
        let delivery = BackgroundEventLoops(
            threads: configuration.webhookThreads, priority: configuration.webhookPriority)
        logger.info(
            "webhook deliveries run on \(delivery.applied.count) thread(s) at priority \(configuration.webhookPriority)",
            metadata: ["applied": "\(delivery.applied.map { $0.idle ? "idle" : "nice \($0.niceness)" })"])
        let outcome: Result<Void, any Error>
        do {
            try await run(application: application, delivery: delivery, onListening: onListening)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await delivery.shutdown()
        try outcome.get()
    }

    /// The services of ``run(onListening:)``, with deliveries on `delivery`'s loops.
    private func run(
        application: some Service, delivery: BackgroundEventLoops,
        onListening: @escaping @Sendable (Listener, SocketAddress) -> Void
    ) async throws {
        let configuration = services.configuration
        let store = services.ingestor.environment.store
        let transport =
            try services.webhookTransport
            ?? PageFetcher(configuration: services.webhookFetchConfiguration(), eventLoopGroup: delivery.group)
        var group: [any Service] = [
            StoreWatcher(
                store: services.ingestor.environment.store, cache: services.readCache, health: services.storeHealth,
                pollInterval: .milliseconds(Int64(configuration.changePollIntervalSeconds * 1000)), logger: logger),
            SpoolWorker(services: services, logger: logger),
            WebhookDispatcher(
                store: store, transport: transport, configuration: services.webhookDispatcherConfiguration,
                node: services.node, now: services.ingestor.environment.now, metrics: services.metrics,
                executors: delivery.executors,
                pacing: DeliveryPacing.forLoops(delivery, share: configuration.webhookBusyShare), logger: logger),
            ClusterJobs(
                jobs: services.clusterJobs, store: services.ingestor.environment.store, node: services.node,
                tick: services.clusterJobTick, now: services.ingestor.environment.now, logger: logger),
            application,
            DrainHold(
                services: services,
                drainTimeout: .milliseconds(Int64(configuration.drainTimeoutSeconds * 1000)),
                shutdownDelay: .milliseconds(Int64(configuration.shutdownDelaySeconds * 1000))),
        ]
        if let listener = configuration.lmtp {
            var lmtp = LMTPServer.Configuration()
            lmtp.host = listener.host
            lmtp.port = listener.port
            lmtp.socketPath = listener.socketPath
            lmtp.socketGroup = configuration.lmtpSocketGroup
            lmtp.hostname = ProcessInfo.processInfo.hostName
            lmtp.maxMessageBytes = services.ingestor.environment.policy.limits.maxMessageBytes
            lmtp.maxRecipients = configuration.lmtpMaxRecipients
            lmtp.maxConnections = configuration.lmtpMaxConnections
            lmtp.drainTimeout = .milliseconds(Int64(configuration.drainTimeoutSeconds * 1000))
            group.append(
                LMTPServer(
                    configuration: lmtp, handler: LMTPDelivery(services: services, logger: logger), logger: logger,
                    onListening: { onListening(.lmtp, $0) }))
        }
        // Shut down in reverse order: first the server is marked draining (/readyz answers 503, new submissions are
        // refused with 503); then LMTP closes its listener and finishes its transactions; then the HTTP API, still
        // listening and answering /readyz with 503, waits for the ingestions in flight (and the shutdown delay);
        // then it finishes its requests and closes; then the spool worker stops (its decisions under way finish), and
        // last the store watcher.
        group.append(DrainMarker(lifecycle: services.lifecycle))
        let serviceGroup = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                // Named by type: without a name, ServiceLifecycle names a service by `"\(service)"`, which reflects
                // all it holds (the application's router and services, their configuration and secrets) into the
                // string its logs carry, at a cost of about 70 ms of CPU at every start (perf).
                services: group.map {
                    ServiceGroupConfiguration.ServiceConfiguration(service: $0, serviceName: "\(type(of: $0))")
                },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await serviceGroup.run()
    }
}

/// Marks the server draining when graceful shutdown begins.
private struct DrainMarker: Service {
    let lifecycle: ServerLifecycle

    func run() async throws {
        try? await gracefulShutdown()
        lifecycle.beginDraining()
    }
}

/// During graceful shutdown, before the HTTP API stops: holds its listener open (so `/readyz` answers 503 rather than
/// refusing connections) until the ingestions in flight have finished (at most the drain timeout) and at least the
/// shutdown delay has passed since the stop began.
private struct DrainHold: Service {
    let services: GatewayServices
    let drainTimeout: Duration
    let shutdownDelay: Duration

    func run() async throws {
        try? await gracefulShutdown()
        let started = ContinuousClock.now
        while ContinuousClock.now - started < drainTimeout {
            let load = services.gate.load
            if load.running == 0 && load.waiting == 0 { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let delayEnds = (services.lifecycle.drainStarted ?? started) + shutdownDelay
        if ContinuousClock.now < delayEnds { try? await Task.sleep(until: delayEnds) }
    }
}
