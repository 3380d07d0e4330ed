import Foundation
internal import Glibc
import TestSupport
import Testing

/// `gateway serve` as a child process, on a store in a temporary directory, listening on ports the kernel picked
/// (`--http 127.0.0.1:0 --lmtp 127.0.0.1:0`): the real server as an operator runs it, with its stdout (and stderr)
/// written to a file the test reads the bound ports from.
///
/// Spawned by TestSupport's `ChildProcess` (an empty signal mask and default handlers: threads of the test runner
/// block signals, and a child inherits the mask), so SIGTERM reaches the server's own handler. The child is
/// stopped with SIGKILL when the test forgets to stop it.
final class ServerProcess: Sendable {
    /// What every test's server shares.
    struct Options {
        /// The directory of the store, the output file and the configuration; the server's working directory.
        var directory: URL
        var adminToken = ServerProcess.defaultAdminToken
        /// `development`, `production`, `test` or a policy file's path.
        var policy = "development"
        /// `--keys FILE` or `--nameserver HOST:PORT` (and `--dns-timeout S`).
        var resolver: [String]
        /// The YAML text of `--config`, written next to the store.
        var configuration: String?
        /// More options (`--tls-certificate`, `--lmtp off`, ...).
        var extra: [String] = []
        /// The store file's name in `directory`: `GatewayCLI`'s, so the command line reads the server's store.
        var storeName = "g.sqlite"
        /// `--store` as given (a `postgres://` URL, several nodes on one database); nil: `storeName` in `directory`.
        var storeURL: String? = nil
        /// LMTP on this Unix socket (`--lmtp unix:PATH`) instead of a TCP port.
        var lmtpSocket: String? = nil
    }

    static let defaultAdminToken = "e2e-admin-token-0123456789abcdef"

    let process: ChildProcess
    var processIdentifier: Int32 { process.processIdentifier }
    let options: Options
    let outputPath: String
    /// `http://127.0.0.1:PORT` or `https://...` as the server announced it.
    let baseURL: String
    let httpPort: Int
    /// nil with `--lmtp off`.
    let lmtpPort: Int?

    var store: String { options.storeURL ?? options.directory.appendingPathComponent(options.storeName).path }
    var adminToken: String { options.adminToken }

    private init(process: ChildProcess, options: Options, outputPath: String, baseURL: String, httpPort: Int, lmtpPort: Int?) {
        self.process = process
        self.options = options
        self.outputPath = outputPath
        self.baseURL = baseURL
        self.httpPort = httpPort
        self.lmtpPort = lmtpPort
    }

    deinit {
        process.signal(SIGKILL)  // a test that forgot to stop it; ChildProcess reaps it
    }

    /// Starts the server and returns once every listener announced its port (or throws with what it printed).
    static func start(_ options: Options, expectLMTP: Bool = true, timeout: Duration = .seconds(60)) async throws -> ServerProcess {
        let gateway = try #require(GatewayCLI.executable, "no gateway executable next to the tests: run swift build --build-tests")
        var arguments = [
            "-C", options.directory.path, "GATEWAY_ADMIN_TOKEN=\(options.adminToken)", gateway, "serve",
            "--store", options.storeURL ?? options.directory.appendingPathComponent(options.storeName).path,
            "--policy", options.policy,
            "--http", "127.0.0.1:0",
        ]
        arguments += ["--lmtp", options.lmtpSocket.map { "unix:\($0)" } ?? (expectLMTP ? "127.0.0.1:0" : "off")]
        arguments += options.resolver
        if let configuration = options.configuration {
            let path = options.directory.appendingPathComponent("serve.yaml")
            try Data(configuration.utf8).write(to: path)
            arguments += ["--config", path.path]
        }
        arguments += options.extra
        let outputPath = options.directory.appendingPathComponent("serve-\(UUID().uuidString.prefix(8)).log").path
        let process = try ChildProcess(executable: "/usr/bin/env", arguments: arguments, outputPath: outputPath)

        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let http = announcedHTTP(in: output)
            let lmtp = announcedLMTP(in: output)
            let socketListens = options.lmtpSocket.map { output.contains("gateway: LMTP on unix:\($0) ") } ?? false
            if let http, !expectLMTP || lmtp != nil || socketListens {
                return ServerProcess(
                    process: process, options: options, outputPath: outputPath, baseURL: http.url, httpPort: http.port,
                    lmtpPort: lmtp)
            }
            if let status = process.exitStatus {
                throw FixtureError("gateway serve exited (status \(status)) before listening:\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        process.signal(SIGKILL)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        throw FixtureError("gateway serve did not announce its listeners within \(timeout):\n\(output)")
    }

    /// Starts a server, runs `body` with it, then stops it with SIGTERM and expects a clean exit (status 0); on an
    /// error the server is killed and its output recorded.
    static func run<T>(
        _ options: Options, expectLMTP: Bool = true, _ body: (ServerProcess) async throws -> T
    ) async throws -> T {
        let server = try await start(options, expectLMTP: expectLMTP)
        let result: T
        do {
            result = try await body(server)
        } catch {
            _ = try? await server.crash()
            Issue.record("gateway serve printed:\n\(server.output.suffix(4000))")
            throw error
        }
        let status = try await server.stop()
        #expect(status == 0, "gateway serve did not stop cleanly:\n\(server.output.suffix(4000))")
        return result
    }

    /// Everything the server printed so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The wait status once the process has exited (reaps it), nil while it runs.
    var exitStatus: Int32? { process.exitStatus }

    func signal(_ signal: Int32) { process.signal(signal) }

    /// Waits up to `timeout` for the process to exit. - Returns: its wait status, or nil if it still runs.
    func waitForExit(timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = exitStatus { return status }
            try await Task.sleep(for: .milliseconds(20))
        }
        return exitStatus
    }

    /// SIGTERM, then up to `timeout` for a graceful exit; SIGKILL if it does not come. - Returns: the wait status.
    @discardableResult
    func stop(timeout: Duration = .seconds(20)) async throws -> Int32 {
        signal(SIGTERM)
        if let status = try await waitForExit(timeout: timeout) { return status }
        return try await crash()
    }

    /// SIGKILL: the process dies where it stands, as in a power cut. - Returns: the wait status.
    @discardableResult
    func crash() async throws -> Int32 {
        signal(SIGKILL)
        return try #require(try await waitForExit(timeout: .seconds(10)), "gateway serve survived SIGKILL")
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted now (closed again at once).
    static func acceptsConnections(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }

    // MARK: - What the server prints

    /// `gateway: HTTP API on http://127.0.0.1:PORT (store ..., development policy)`.
    static func announcedHTTP(in output: String) -> (url: String, port: Int)? {
        for line in output.split(separator: "\n") where line.hasPrefix("gateway: HTTP API on ") {
            guard let url = line.dropFirst("gateway: HTTP API on ".count).split(separator: " ").first,
                let port = url.split(separator: ":").last.flatMap({ Int($0) })
            else { continue }
            return (String(url), port)
        }
        return nil
    }

    /// `gateway: LMTP on 127.0.0.1:PORT (each recipient is an owner)`.
    static func announcedLMTP(in output: String) -> Int? {
        for line in output.split(separator: "\n") where line.hasPrefix("gateway: LMTP on ") {
            guard let address = line.dropFirst("gateway: LMTP on ".count).split(separator: " ").first,
                let port = address.split(separator: ":").last.flatMap({ Int($0) })
            else { continue }
            return port
        }
        return nil
    }
}
