package import Foundation
package import Logging
internal import NIOCore
internal import NIOPosix
internal import NIOSSL
internal import PostgresNIO
package import Store
import Synchronization

/// The ``ManagedStore`` for several gateway nodes on one PostgreSQL database, on postgres-nio's `PostgresClient`.
///
/// - The same rules as every backend: each write is a transaction that reads what ``ReservationLifecycle`` needs,
///   plans, and executes the plan.
/// - Concurrent writers of one reservation (several processes, several nodes) are serialized by transaction-level
///   advisory locks on what the plan reads: its item reference and its booking number (exclusive), under its
///   (owner, source domain) held shared (``ingestionLocks(_:)``); an owner's decisions, erasure and retention take that
///   one exclusive. They are taken at the start of the transaction, before the reads, and released by the commit.
///   They cover both what a plan reads, the record at the key and the records of its container (a row lock could not
///   lock a record that does not exist yet, and SERIALIZABLE would turn every concurrent write of one owner's booking
///   into a retry), and let writers of different bookings of one owner run side by side. A transaction takes all its
///   locks at once, sorted, so two batches never wait on each other in a cycle; a deadlock or serialization failure
///   reported anyway is retried.
/// - Migrations are versioned (``StoreSchema``) and run under a session advisory lock, so two nodes starting together
///   migrate once.
/// - Times are bigint milliseconds since 1970, like SQLite's, so a copy between backends is exact.
///
/// Queries are served only while ``run()`` runs (the client's pool); ``open(_:configuration:now:logger:)`` itself
/// connects once, to fail early with a clear error and to migrate.
package final class PostgresStore: ManagedStore {
    package struct Configuration: Sendable {
        /// Connections this process keeps to the database at most.
        package var maximumConnections = 8
        /// How long one store call may take, waiting for a connection included, before `store.unavailable`.
        package var operationTimeout: Duration = .seconds(30)
        /// Group-commit transactions of ingestions (and, apart, of spooled messages) under way at once, each on a
        /// connection of its own (see ``GroupCommit``).
        package var writeLanes = 2
        /// How long a lone ingestion's commit waits at most for another on its way (``GroupCommit/linger``).
        package var commitLinger = GroupCommit<IngestionRequest, DecisionLogEntry>.defaultLinger
        /// Run the missing migrations when opening (`gateway store status` and `migrate` open without).
        package var migrateOnOpen = true
        package var limits = StoreLimits()

        package init() {}
    }

    package let settings: PostgresSettings
    let configuration: Configuration
    var limits: StoreLimits { configuration.limits }
    let now: @Sendable () -> Date
    let logger: Logger
    let client: PostgresClient
    let closed = Atomic<Bool>(false)
    /// Share transactions between concurrent `ingest` calls, and between concurrent `spool` calls (each commit waits
    /// for PostgreSQL's WAL flush).
    let groupCommit: GroupCommit<IngestionRequest, DecisionLogEntry>
    let spoolCommit: GroupCommit<SpoolRequest, SpooledMessage>
    /// Wakes this node's change feed readers after commits that recorded changes (other nodes poll).
    package let changeSignal = ChangeSignal()

    private init(
        settings: PostgresSettings, configuration: Configuration, now: @escaping @Sendable () -> Date, logger: Logger,
        client: PostgresClient
    ) {
        self.settings = settings
        self.configuration = configuration
        self.now = now
        self.logger = logger
        self.client = client
        groupCommit = GroupCommit(lanes: configuration.writeLanes, linger: configuration.commitLinger)
        spoolCommit = GroupCommit(lanes: configuration.writeLanes)
    }

    /// Connects to the database `settings` name, checks that it is a gateway store this build can use, runs the
    /// missing migrations (unless `configuration.migrateOnOpen` is false), and returns the store, ready once
    /// ``run()`` runs.
    /// - Throws: ``StoreError`` `store.unavailable` (no answer), `store.open-failed` (refused login, no such
    ///   database, TLS refused), `store.not-a-gateway-database`, `store.schema-too-new`, `store.migration-failed`;
    ///   each names the URL without its password.
    package static func open(
        _ settings: PostgresSettings, configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "gateway.store", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> PostgresStore {
        let connection = try await connect(settings, logger: logger)
        do {
            try await prepareSchema(on: connection, settings: settings, migrate: configuration.migrateOnOpen, logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
        let client = PostgresClient(
            configuration: try clientConfiguration(settings, maximumConnections: configuration.maximumConnections),
            backgroundLogger: logger)
        return PostgresStore(settings: settings, configuration: configuration, now: now, logger: logger, client: client)
    }

    /// Connects once, runs the missing migrations (under the migration lock) and disconnects, without a pool: for
    /// a test's template database, or a deployment step.
    /// - Returns: The identifiers applied now.
    @discardableResult
    package static func migrate(
        _ settings: PostgresSettings,
        logger: Logger = Logger(label: "gateway.store", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> [String] {
        let connection = try await connect(settings, logger: logger)
        do {
            let applied = try await prepareSchema(on: connection, settings: settings, migrate: true, logger: logger)
            try? await connection.close()
            return applied
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Serves queries (the client's connection pool) until cancelled.
    package func run() async throws {
        await client.run()
    }

    /// Marks the store closed: later calls fail with `store.io`. The pool closes when ``run()`` is cancelled.
    package func close() async throws {
        closed.store(true, ordering: .relaxed)
    }

    // MARK: - Connecting

    /// One connection, outside the pool: for opening and migrating.
    static func connect(_ settings: PostgresSettings, logger: Logger) async throws -> PostgresConnection {
        let configuration = try connectionConfiguration(settings)
        do {
            return try await withDeadline(.seconds(Int64(settings.connectTimeout) + 1), settings: settings, operation: "connect") {
                try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            }
        } catch {
            throw storeError(error, operation: "connecting", settings: settings)
        }
    }

    static func tlsConfiguration(_ settings: PostgresSettings) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch settings.sslMode {
        case .disable, .allow, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let roots = settings.sslRootCertificate { tls.trustRoots = .file(roots) }
        return tls
    }

    static func connectionConfiguration(_ settings: PostgresSettings) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch settings.endpoint {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch settings.sslMode {
                case .disable: tls = .disable
                case .allow, .prefer: tls = .prefer(try NIOSSLContext(configuration: tlsConfiguration(settings)))
                case .require, .verifyCA, .verifyFull:
                    tls = .require(try NIOSSLContext(configuration: tlsConfiguration(settings)))
                }
            } catch {
                throw StoreError(
                    code: .openFailed,
                    reason: "\(settings): the TLS settings cannot be used (\(error)); check sslrootcert")
            }
            configuration = PostgresConnection.Configuration(
                host: host, port: port, username: settings.user, password: settings.password,
                database: settings.database, tls: tls)
            if settings.sslMode == .verifyFull { configuration.options.tlsServerName = host }
        case .socket(let directory, let port):
            configuration = PostgresConnection.Configuration(
                unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: settings.user, password: settings.password,
                database: settings.database)
        }
        configuration.options.connectTimeout = .seconds(Int64(settings.connectTimeout))
        configuration.options.additionalStartupParameters = [("application_name", settings.applicationName)]
        return configuration
    }

    static func clientConfiguration(_ settings: PostgresSettings, maximumConnections: Int) throws
        -> PostgresClient.Configuration
    {
        var configuration: PostgresClient.Configuration
        switch settings.endpoint {
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS =
                switch settings.sslMode {
                case .disable: .disable
                case .allow, .prefer: .prefer(tlsConfiguration(settings))
                case .require, .verifyCA, .verifyFull: .require(tlsConfiguration(settings))
                }
            configuration = PostgresClient.Configuration(
                host: host, port: port, username: settings.user, password: settings.password,
                database: settings.database, tls: tls)
            if settings.sslMode == .verifyFull { configuration.options.tlsServerName = host }
        case .socket(let directory, let port):
            configuration = PostgresClient.Configuration(
                unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: settings.user, password: settings.password,
                database: settings.database)
        }
        configuration.options.connectTimeout = .seconds(Int64(settings.connectTimeout))
        configuration.options.maximumConnections = max(1, maximumConnections)
        configuration.options.additionalStartupParameters = [("application_name", settings.applicationName)]
        return configuration
    }
}
