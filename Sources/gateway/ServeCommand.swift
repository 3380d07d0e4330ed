import Admission
import ArgumentParser
import Foundation
import GatewayServer
import Ingestion
import Logging
import NIOCore
import Sandbox
import Store

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the gateway as a service: the HTTP API, the LMTP listener, calendar feeds and metrics.",
        discussion: """
            Stops gracefully on SIGTERM or SIGINT: LMTP stops taking connections at once; the HTTP API answers \
            /readyz with 503 and refuses new submissions while work in flight finishes, then closes. \
            The first admin token comes from GATEWAY_ADMIN_TOKEN, or is generated at first start and printed once. \
            The API is described at /openapi.yaml.
            """
    )

    @Option(help: ArgumentHelp("A YAML configuration file (see examples/serve.yaml).", valueName: "FILE"))
    var config: String?

    @Option(help: ArgumentHelp("Where the HTTP API listens (default 127.0.0.1:8080; port 0 picks one).", valueName: "HOST:PORT"))
    var http: String?

    @Option(
        help: ArgumentHelp(
            "Where the LMTP listener listens (default 127.0.0.1:2424): HOST:PORT, a Unix domain socket (unix:PATH, for an MTA on the same machine), or off.",
            valueName: "HOST:PORT|unix:PATH|off"))
    var lmtp: String?

    @Option(help: ArgumentHelp("Serve the API over TLS with this certificate chain (PEM).", valueName: "FILE"))
    var tlsCertificate: String?

    @Option(help: ArgumentHelp("The TLS private key (PEM).", valueName: "FILE"))
    var tlsKey: String?

    @Option(help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "LEVEL"))
    var logLevel = "info"

    @OptionGroup var state: StateOptions
    @OptionGroup var resolver: ResolverOptions

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) { throw ValidationError("--tls-certificate and --tls-key go together") }
        if Logger.Level(rawValue: logLevel) == nil { throw ValidationError("--log-level: unknown level '\(logLevel)'") }
    }

    func run() async throws {
        let configuration = try loadConfiguration()
        var logger = Logger(label: "gateway")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let policy = try state.loadPolicy()
        let location = try state.location(configured: configuration.store)
        let keyResolver = try resolver.makeResolver()
        let publicSuffixes = try state.publicSuffixes()
        // The store runs around the server: opened first, closed after the server has drained.
        try await StateOptions.withStore(location) { store in
        try await withSandbox(policy: policy) { extractor, pool in
            var environment = Ingestor.Environment(
                store: store, policy: policy, resolver: keyResolver, extractor: extractor, publicSuffixes: publicSuffixes)
            environment.retryDelay = configuration.retryDelaySeconds
            var services = GatewayServices(
                ingestor: Ingestor(environment: environment), configuration: configuration,
                sandboxRestarts: { pool?.workers.reduce(0) { $0 + $1.restarts } ?? 0 },
                sandboxReady: { pool.map { $0.workers.contains { $0.processID != nil } } ?? true }, actorPrefix: "api")
            services.clusterJobs.append(
                RetentionJob.clusterJob(store: store, retention: policy.retention, now: environment.now, logger: logger))

            let preset = ProcessInfo.processInfo.environment["GATEWAY_ADMIN_TOKEN"]
            let generated: String?
            do {
                generated = try await services.tokens.bootstrapAdmin(preset: preset, by: currentActor)
            } catch {
                throw CommandFailure(message: "cannot set up the admin token: \(error)")
            }

            let scheme = configuration.tls == nil ? "http" : "https"
            let server = GatewayServer(services: services, logger: logger)
            try await server.run { listener, address in
                let shown =
                    address.pathname.map { "unix:\($0)" } ?? "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
                switch listener {
                case .http:
                    Terminal.line("gateway: HTTP API on \(scheme)://\(shown) (store \(location), \(policy.name) policy)")
                    if let generated {
                        Terminal.line("gateway: admin token, shown this once (keep it; GATEWAY_ADMIN_TOKEN sets your own):")
                        Terminal.line("    \(generated)")
                    }
                    Terminal.line("gateway: try  curl -s \(scheme)://\(shown)/healthz   and   curl -s \(scheme)://\(shown)/openapi.yaml")
                    Terminal.line("gateway: console on \(scheme)://\(shown)/console (sign in with a token)")
                case .lmtp:
                    Terminal.line("gateway: LMTP on \(shown) (each recipient is an owner)")
                }
            }
            Terminal.line("gateway: stopped")
        }
        }
    }

    private func loadConfiguration() throws(CommandFailure) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        do {
            if let config { configuration = try ServerConfiguration.load(path: config) }
            if let http { configuration.http = try ServerConfiguration.Listener(parsing: http, allowsSocket: false) }
            if let lmtp {
                configuration.lmtp =
                    lmtp == "off" ? nil : try ServerConfiguration.Listener(parsing: lmtp, allowsSocket: true)
            }
        } catch {
            throw CommandFailure(message: error.description, status: 2)
        }
        if let tlsCertificate, let tlsKey {
            configuration.tls = ServerConfiguration.TLS(certificateChainPath: tlsCertificate, privateKeyPath: tlsKey)
        }
        return configuration
    }
}
