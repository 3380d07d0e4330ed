import Foundation
package import Ingestion
import Synchronization

/// Everything the HTTP API and the LMTP listener share: the pipeline, the tokens, the back-pressure gate and the
/// metrics. Built once by `gateway serve` (or a test) and handed to ``GatewayApplication`` and ``LMTPDelivery``.
package struct GatewayServices: Sendable {
    package var ingestor: Ingestor
    package var tokens: TokenAuthority
    package var metrics: GatewayMetrics
    package var gate: IngestionGate
    package var configuration: ServerConfiguration
    /// The sandbox pool's restart count since it started, for `/metrics`.
    package var sandboxRestarts: @Sendable () -> Int
    /// Whether the sandbox can take work, for `/readyz`.
    package var sandboxReady: @Sendable () -> Bool
    /// Who the server says made changes (the registry's and the flags' history): "api:<token id>" is appended.
    package var actorPrefix: String
    /// The periodic jobs the cluster runs once per interval on one node (``ClusterJobs``): each feature that needs
    /// one appends it here before the server starts.
    package var clusterJobs: [ClusterJob] = []
    /// How often this node asks for each cluster job's lease.
    package var clusterJobTick: Duration = .seconds(5)
    /// This node's name in the store's job leases.
    package let node = ClusterJobs.nodeName()
    let lifecycle = ServerLifecycle()
    /// Who may hold the HTTP listener's connections (``GuardedHTTPChannel``).
    package let connectionGuard: ConnectionGuard

    package init(
        ingestor: Ingestor, configuration: ServerConfiguration, metrics: GatewayMetrics = GatewayMetrics(),
        sandboxRestarts: @escaping @Sendable () -> Int = { 0 }, sandboxReady: @escaping @Sendable () -> Bool = { true },
        actorPrefix: String = "api"
    ) {
        self.ingestor = ingestor
        self.tokens = TokenAuthority(
            store: ingestor.environment.store, sessionLifetime: TimeInterval(configuration.consoleSessionMinutes * 60))
        self.metrics = metrics
        self.gate = IngestionGate(
            maxRunning: configuration.maxConcurrentIngestions, maxWaiting: configuration.maxQueuedIngestions)
        self.configuration = configuration
        self.connectionGuard = ConnectionGuard(
            .init(
                maxConnections: configuration.maxConnections, maxPerClient: configuration.maxConnectionsPerClient,
                probeConnections: configuration.probeConnections))
        self.sandboxRestarts = sandboxRestarts
        self.sandboxReady = sandboxReady
        self.actorPrefix = actorPrefix
    }

    /// Runs one ingestion in a gate slot and records it. - Returns: nil when the gate refused (full or closing).
    func ingest(
        channel: String, _ body: () async throws -> IngestionReport
    ) async throws -> IngestionReport? {
        let clock = ContinuousClock()
        let start = clock.now
        let report: IngestionReport?
        do {
            report = try await gate.withSlot(body)
        } catch let error as APIError {
            throw error
        } catch {
            // The pipeline throws only when the store fails: the request may be tried again.
            throw APIError.unavailable(error)
        }
        if let report {
            metrics.recordIngestion(report, channel: channel, duration: clock.now - start)
        } else {
            metrics.recordBusy(channel: channel)
        }
        return report
    }
}

/// Whether the server is draining (graceful shutdown): `/readyz` answers 503 so a load balancer stops sending.
final class ServerLifecycle: Sendable {
    private let drainingSince = Mutex<ContinuousClock.Instant?>(nil)

    var isDraining: Bool { drainingSince.withLock { $0 != nil } }
    /// When the graceful stop began, nil before.
    var drainStarted: ContinuousClock.Instant? { drainingSince.withLock { $0 } }
    func beginDraining() { drainingSince.withLock { $0 = $0 ?? .now } }
}
