import Admission
import Foundation
import Hummingbird
import Ingestion
import LMTP
package import Logging
package import NIOCore
import ServiceLifecycle
import UnixSignals

/// `gateway serve`: the HTTP API, the LMTP listener and the spool's retry timer, run as one service group that
/// shuts down gracefully on SIGTERM or SIGINT (new connections refused, work in flight finished, up to the drain
/// timeout), over the same ``Ingestor`` the command line uses.
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
        var group: [any Service] = [
            SpoolRetryService(services: services, logger: logger, startedAt: services.ingestor.environment.now())
        ]
        if let listener = configuration.lmtp {
            var lmtp = LMTPServer.Configuration()
            lmtp.host = listener.host
            lmtp.port = listener.port
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
        group.append(application)
        // Shut down in reverse order: first mark the server draining (/readyz answers 503), then the HTTP API
        // finishes its requests, then LMTP its transactions, then the retry timer stops.
        group.append(DrainMarker(lifecycle: services.lifecycle))
        let serviceGroup = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: group.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
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
