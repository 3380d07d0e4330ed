import Foundation
package import Ingestion
import Publishing
package import Store
import Synchronization
package import WebFetch

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
    /// This node's name in the store's job leases and spool claims.
    package let node = ClusterJobs.nodeName()
    /// Whether the store answers, as this node last saw it (``StoreWatcher``).
    package let storeHealth = StoreHealth()
    /// This node's copies of the registry, flags and tokens (nil with `read-cache: false`), kept current by
    /// ``StoreWatcher``; the ingestor and the token authority read through it.
    package let readCache: StoreReadCache?
    /// The spooled messages this node has claimed and is still deciding: ``SpoolWorker`` renews their claims.
    package let spoolClaims = SpoolClaims()
    /// Sends webhook deliveries; nil: WebFetch's POST under the policy (``webhookFetchConfiguration()``), made when
    /// the server starts.
    package var webhookTransport: (any WebhookTransport)? = nil
    let lifecycle = ServerLifecycle()
    /// The owner pseudonyms' key once read from the store (``pseudonyms()``).
    let pseudonymKey = KeyCache()
    /// Who may hold the HTTP listener's connections (``GuardedHTTPChannel``).
    package let connectionGuard: ConnectionGuard

    package init(
        ingestor: Ingestor, configuration: ServerConfiguration, metrics: GatewayMetrics = GatewayMetrics(),
        sandboxRestarts: @escaping @Sendable () -> Int = { 0 }, sandboxReady: @escaping @Sendable () -> Bool = { true },
        actorPrefix: String = "api"
    ) {
        var environment = ingestor.environment
        let cache = configuration.readCache ? environment.readCache ?? StoreReadCache() : nil
        environment.readCache = cache
        self.readCache = cache
        self.ingestor = Ingestor(environment: environment)
        self.tokens = TokenAuthority(
            store: environment.sharedState, sessionLifetime: TimeInterval(configuration.consoleSessionMinutes * 60))
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
        clusterJobs.append(Self.domainRecheckJob(ingestor: self.ingestor, metrics: metrics, actor: "\(actorPrefix):recheck"))
    }

    /// What a webhook delivery may reach and trusts: page fetching's configuration under the policy, without any
    /// developer flag (HTTPS always, the policy's address rules, trust bundles and host map), with the webhook limits.
    package func webhookFetchConfiguration() throws(FetchError) -> PageFetcher.Configuration {
        var fetch = try ingestor.environment.policy.fetchConfiguration()
        fetch.limits = PageFetcher.Limits(
            maximumBodyBytes: configuration.webhookMaxResponseBytes,
            timeToFirstByte: .milliseconds(Int64(configuration.webhookResponseTimeoutSeconds * 1000)),
            total: .milliseconds(Int64(configuration.webhookTimeoutSeconds * 1000)), maximumRedirects: 0)
        fetch.isHostAllowed = { _ in false }
        fetch.userAgent = "gateway-webhooks/1.0"
        // As many kept connections per receiver as deliveries can be under way at once.
        fetch.keepAlive.maximumIdlePerOrigin = configuration.webhookConcurrency
        return fetch
    }

    /// The webhook dispatcher's settings, from the server configuration.
    package var webhookDispatcherConfiguration: WebhookDispatcher.Configuration {
        var dispatcher = WebhookDispatcher.Configuration()
        dispatcher.schedule = RetrySchedule(
            initialInterval: configuration.webhookRetryInitialSeconds,
            maximumInterval: configuration.webhookRetryMaxIntervalSeconds,
            retryFor: configuration.webhookRetryForSeconds)
        dispatcher.concurrency = configuration.webhookConcurrency
        dispatcher.lease = configuration.webhookDispatcherLeaseSeconds
        return dispatcher
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
            storeHealth.record(error)
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

extension GatewayServices {
    /// This node's claim on spooled messages: its name, for `spool-lease-seconds` from each renewal.
    package var spoolLease: SpoolLease {
        SpoolLease(holder: node, duration: configuration.spoolLeaseSeconds)
    }
}

/// A value read once and kept for the process's life (a store secret).
final class KeyCache: Sendable {
    private let value = Mutex<Data?>(nil)

    func withLock<T>(_ body: (inout Data?) -> T) -> T { value.withLock { body(&$0) } }
}

/// Whether the server is draining (graceful shutdown): `/readyz` answers 503 so a load balancer stops sending.
final class ServerLifecycle: Sendable {
    private let drainingSince = Mutex<ContinuousClock.Instant?>(nil)

    var isDraining: Bool { drainingSince.withLock { $0 != nil } }
    /// When the graceful stop began, nil before.
    var drainStarted: ContinuousClock.Instant? { drainingSince.withLock { $0 } }
    func beginDraining() { drainingSince.withLock { $0 = $0 ?? .now } }
}
