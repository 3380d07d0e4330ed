import Admission
import ArgumentParser
import DNS
import Foundation
import Ingestion
import Sandbox
import Store

/// `--store` and `--policy`: shared by every command that reads or writes the gateway's state.
struct StateOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The store: an SQLite file, created when missing.", valueName: "PATH"))
    var store = "var/gateway.sqlite"

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

    func openStore() throws(CommandFailure) -> SQLiteStore {
        do {
            return try SQLiteStore(path: store)
        } catch {
            throw CommandFailure(message: "--store \(store): \(error)")
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
func withIngestor<T>(
    state: StateOptions, resolver: ResolverOptions, _ body: (Ingestor) async throws -> T
) async throws -> T {
    let policy = try state.loadPolicy()
    let store = try state.openStore()
    return try await withExtractor(policy: policy) { extractor in
        let environment = Ingestor.Environment(
            store: store, policy: policy, resolver: try resolver.makeResolver(), extractor: extractor,
            publicSuffixes: try state.publicSuffixes())
        return try await body(Ingestor(environment: environment))
    }
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
