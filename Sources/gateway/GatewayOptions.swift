import Admission
import ArgumentParser
import DNS
import Foundation
import Ingestion
import Sandbox
import Store
import StoreBackends

/// `--store` and `--policy`: shared by every command that reads or writes the gateway's state.
struct StateOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The store: an SQLite file (created when missing), sqlite:PATH, or postgres://USER@HOST:PORT/DATABASE?sslmode=MODE (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE and PGSSLMODE fill in what the URL leaves out). Default: GATEWAY_STORE, else var/gateway.sqlite.",
            valueName: "PATH|URL"))
    var store: String?

    @Option(help: ArgumentHelp("development, production, test, or a path to a policy .yaml file.", valueName: "NAME|PATH"))
    var policy = "development"

    /// Where named policies are looked for: ./policies, the repository's (the one whose `.build`
    /// holds this executable, at `.build/<triple>/<configuration>/gateway`), then /etc/gateway/policies.
    static var policySearchPaths: [String] {
        var paths = ["policies"]
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 where directory.path != "/" {
            if directory.lastPathComponent == ".build" {
                paths.append(directory.deletingLastPathComponent().appendingPathComponent("policies").path)
                break
            }
            directory.deleteLastPathComponent()
        }
        return paths + ["/etc/gateway/policies"]
    }

    func loadPolicy() throws(CommandFailure) -> Policy {
        try Self.loadPolicy(policy)
    }

    /// Loads a policy by name (from `policySearchPaths`) or path; a missing or invalid one is a usage error.
    static func loadPolicy(_ nameOrPath: String) throws(CommandFailure) -> Policy {
        do {
            return try Policy.load(nameOrPath, searchPaths: policySearchPaths).0
        } catch {
            throw CommandFailure(message: "--policy \(nameOrPath): \(error.reason)", status: 2)
        }
    }

    /// Where the store is, parsed once: `--store`, else `GATEWAY_STORE`, else `configured` (the server
    /// configuration's `store` key), else `var/gateway.sqlite`. An unknown scheme or a malformed URL is a usage error.
    func location(configured: StoreLocation? = nil) throws(CommandFailure) -> StoreLocation {
        let environment = ProcessInfo.processInfo.environment
        let (text, origin): (String?, String) =
            if let store { (store, "--store") } else if let value = environment["GATEWAY_STORE"], !value.isEmpty {
                (value, "GATEWAY_STORE")
            } else { (nil, "") }
        guard let text else { return configured ?? .sqlite(path: StoreLocation.defaultSQLitePath) }
        do {
            return try StoreLocation(parsing: text, environment: environment)
        } catch {
            throw CommandFailure(message: "\(origin): \(error)", status: 2)
        }
    }

    /// Opens the store, runs `body` with it, and closes it after, on every path; the store's errors become one clear
    /// line (naming the location, never a password).
    /// - Parameter purpose: `.dryRun` for a command that stores nothing (it creates no file), `.inspect` for an
    ///   operator's look that migrates nothing.
    func withStore<T>(
        purpose: StoreOpeningPurpose = .readWrite, configured: StoreLocation? = nil,
        _ body: (any ManagedStore) async throws -> T
    ) async throws -> T {
        try await Self.withStore(try location(configured: configured), purpose: purpose, body)
    }

    /// ``withStore(purpose:configured:_:)`` for a location given otherwise (`store copy --from/--to`).
    static func withStore<T>(
        _ location: StoreLocation, purpose: StoreOpeningPurpose = .readWrite, _ body: (any ManagedStore) async throws -> T
    ) async throws -> T {
        do {
            return try await location.withStore(purpose: purpose, body)
        } catch let error as StoreError {
            throw CommandFailure(message: error.description)
        }
    }

    func publicSuffixes() throws(CommandFailure) -> PublicSuffixList {
        do {
            return try PublicSuffixList()
        } catch {
            throw CommandFailure(message: error.reason)
        }
    }
}

/// Who made a change, for the registry's and the flags' history.
var currentActor: String {
    let user = ProcessInfo.processInfo.environment["USER"] ?? ProcessInfo.processInfo.userName
    return "\(user)@\(ProcessInfo.processInfo.hostName)"
}

/// Builds the pipeline for one command and tears it down after: the store, the policy, the key
/// resolver and the extraction sandbox (worker processes, stopped on every path).
/// - Parameter purpose: `.dryRun` for `gateway check`, which stores nothing and creates no store file.
func withIngestor<T>(
    state: StateOptions, resolver: ResolverOptions, purpose: StoreOpeningPurpose = .readWrite,
    _ body: (Ingestor) async throws -> T
) async throws -> T {
    let policy = try state.loadPolicy()
    return try await state.withStore(purpose: purpose) { store in
        try await withExtractor(policy: policy) { extractor in
            let environment = Ingestor.Environment(
                store: store, policy: policy, resolver: try resolver.makeResolver(), extractor: extractor,
                publicSuffixes: try state.publicSuffixes())
            return try await body(Ingestor(environment: environment))
        }
    }
}

/// The owner an option names, or a usage error naming the option.
func ownerOption(_ text: String, option: String = "--owner") throws(CommandFailure) -> OwnerAddress {
    guard let owner = OwnerAddress(text) else {
        throw CommandFailure(message: "\(option) \(text): not an email address an owner can have", status: 2)
    }
    return owner
}

/// Runs `body` with the extractor `policy` asks for, and stops it after, on every path: a pool of
/// confined `gateway-worker` processes (next to this executable) when `sandbox.enabled`, else the
/// same handler in this process (the policy's explicit debugging mode).
///
/// - Parameter workerCount: workers to start; one per active core by default. A command that
///   extracts a single document needs one.
func withExtractor<T>(
    policy: Policy, workerCount: Int? = nil, _ body: (any Extractor) async throws -> T
) async throws -> T {
    try await withSandbox(policy: policy, workerCount: workerCount) { extractor, _ in try await body(extractor) }
}

/// ``withExtractor(policy:workerCount:_:)``, also handing `body` the pool (nil when the sandbox is off), for a
/// server that reports on its workers.
func withSandbox<T>(
    policy: Policy, workerCount: Int? = nil, _ body: (any Extractor, WorkerPool?) async throws -> T
) async throws -> T {
    guard policy.sandbox.enabled else {
        // The unsafe mode, for debugging a parser under a debugger: the policy says so explicitly.
        return try await body(InProcessExtractor(unconfined: DocumentExtraction()), nil)
    }
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("gateway-worker").path
    var configuration = WorkerPool.Configuration(workerExecutable: executable)
    if let workerCount { configuration.workerCount = workerCount }
    configuration.maxDocumentBytes = max(policy.limits.maxMessageBytes, policy.limits.maxPageBytes)
    configuration.confinement.addressSpaceBytes = UInt64(policy.sandbox.workerMemoryBytes)
    let pool: WorkerPool
    do {
        pool = try await WorkerPool(configuration: configuration)
    } catch {
        throw CommandFailure(message: "cannot start the extraction sandbox (\(executable)): \(error)")
    }
    do {
        let result = try await body(SandboxedExtractor(pool: pool), pool)
        await pool.shutdown()
        return result
    } catch {
        await pool.shutdown()
        throw error
    }
}
