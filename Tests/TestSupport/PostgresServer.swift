internal import Foundation
internal import Glibc
import Synchronization

/// A real PostgreSQL server for tests (PLATFORM.md "Real servers"), from Debian's `postgresql` package: `initdb` into
/// a temporary directory (in memory, `/dev/shm`, when there is room), `pg_ctl start` on 127.0.0.1 and a free port with its Unix socket in that directory and
/// `fsync=off`, run as the unprivileged `postgres` user (`runuser`) when the tests run as root. No mock stands for
/// PostgreSQL anywhere.
///
/// One server per test process: ``shared()`` starts it on first use, and it is stopped (`pg_ctl stop -m fast`) and
/// its directory removed when the process exits. Each test takes a database of its own, made from a template in
/// milliseconds (`CREATE DATABASE ... TEMPLATE`), not a server of its own:
///
/// ```swift
/// let server = try await PostgresServer.shared()
/// try await server.makeTemplate("gateway_v3") { url in /* migrate the schema once */ }
/// try await server.withDatabase(template: "gateway_v3") { url in
///     // postgres://gateway@127.0.0.1:PORT/test_...?sslmode=disable, a fresh copy of the template
/// }
/// ```
package final class PostgresServer: Sendable {
    /// The superuser `initdb` makes (trust authentication on loopback and the socket).
    package static let user = "gateway"
    package let host = "127.0.0.1"
    package let port: Int
    /// Data directory and socket directory inside it.
    package let directory: String

    /// The process id of the server's postmaster (its backends are its children), from `postmaster.pid`.
    package var processIdentifier: Int32? {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8) else {
            return nil
        }
        return text.split(separator: "\n").first.flatMap { Int32($0) }
    }
    let binaries: String
    /// The templates made so far.
    private let templates = Mutex<Set<String>>([])
    private let databaseCounter = Atomic<Int>(0)

    /// The `postgres` options it was started with (`-o`), to start it again the same way.
    private let options: String

    private init(port: Int, directory: String, binaries: String, options: String) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.options = options
    }

    // MARK: - The process's server

    /// Every server this process started and has not stopped: stopped at exit.
    private static let current = Mutex<[PostgresServer]>([])
    private static let starting = Mutex<Task<PostgresServer, any Error>?>(nil)

    /// The server of this test process, started on first use.
    /// - Throws: ``FixtureError`` when PostgreSQL is not installed (`make deps` installs it) or does not start; the
    ///   tests that need it fail, they never skip.
    package static func shared() async throws -> PostgresServer {
        let task = starting.withLock { task in
            if let task { return task }
            let started = Task { try await start() }
            task = started
            return started
        }
        return try await task.value
    }

    /// Server settings added to every start, from `GATEWAY_TEST_POSTGRES_OPTIONS` (`-c name=value ...`): to look
    /// inside a benchmark's server, e.g. `-c shared_preload_libraries=pg_stat_statements`.
    static var extraOptions: [String] {
        ProcessInfo.processInfo.environment["GATEWAY_TEST_POSTGRES_OPTIONS"].map { [$0] } ?? []
    }

    /// Starts a new server (most tests want ``shared()``).
    /// - Parameter durable: a server as production runs one, for benchmarks: its data on disk (the temporary
    ///   directory, not memory) and every commit flushed (`fsync`, `synchronous_commit`, `full_page_writes` on), as
    ///   SQLite's `synchronous=FULL`. Tests run without (in memory, nothing flushed), which is much faster.
    package static func start(durable: Bool = false) async throws -> PostgresServer {
        let binaries = try binaryDirectory()
        let scratch = durable ? FileManager.default.temporaryDirectory.path : scratchDirectory()
        let base = scratch + "/gateway-postgres-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let runAs = getuid() == 0 ? "postgres" : nil
        if let runAs { try changeOwner(of: base, to: runAs) }
        let data = base + "/data"
        let initdb = try await run(
            binaries + "/initdb",
            ["-D", data, "-U", user, "-A", "trust", "-E", "UTF8", "--locale=C"] + (durable ? [] : ["--no-sync"]),
            as: runAs, logIn: base)
        guard initdb.status == 0 else {
            try? FileManager.default.removeItem(atPath: base)
            throw FixtureError("initdb failed (\(initdb.status)): \(initdb.output.suffix(600))")
        }
        for _ in 0..<5 {
            let port = Int(try Loopback.freePort())
            let flushing =
                durable
                ? ["-c fsync=on", "-c synchronous_commit=on", "-c full_page_writes=on", "-c shared_buffers=128MB"]
                : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c shared_buffers=32MB"]
            let options = (
                [
                    "-c listen_addresses=127.0.0.1", "-c port=\(port)", "-c unix_socket_directories=\(base)",
                    "-c max_connections=300",
                ] + flushing + extraOptions
            ).joined(separator: " ")
            let started = try await run(
                binaries + "/pg_ctl", ["-D", data, "-l", base + "/postgres.log", "-o", options, "-w", "-t", "30", "start"],
                as: runAs, logIn: base)
            if started.status == 0 {
                let server = PostgresServer(port: port, directory: base, binaries: binaries, options: options)
                current.withLock { $0.append(server) }
                registerExitHandler()
                return server
            }
        }
        let log = (try? String(contentsOfFile: base + "/postgres.log", encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: base)
        throw FixtureError("PostgreSQL did not start after 5 tries; its log ends: \(log.suffix(600))")
    }

    /// Stops the server and removes its directory.
    package func stop() {
        let runAs = getuid() == 0 ? "postgres" : nil
        _ = try? Self.runBlocking(
            binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "30", "stop"], as: runAs,
            logIn: directory)
        try? FileManager.default.removeItem(atPath: directory)
        Self.current.withLock { servers in servers.removeAll { $0 === self } }
    }

    /// Stops the server as an outage would (`pg_ctl stop -m immediate`: connections cut, no checkpoint), keeping its
    /// data for ``restart()``. Not for the ``shared()`` server: other tests use it.
    package func halt() async throws {
        let runAs = getuid() == 0 ? "postgres" : nil
        let stopped = try await Self.run(
            binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "-t", "30", "stop"], as: runAs,
            logIn: directory)
        guard stopped.status == 0 else { throw FixtureError("pg_ctl stop failed: \(stopped.output.suffix(600))") }
    }

    /// Starts a halted server again, on the same port with the same data.
    package func restart() async throws {
        let runAs = getuid() == 0 ? "postgres" : nil
        let started = try await Self.run(
            binaries + "/pg_ctl",
            ["-D", directory + "/data", "-l", directory + "/postgres.log", "-o", options, "-w", "-t", "30", "start"],
            as: runAs, logIn: directory)
        guard started.status == 0 else {
            let log = (try? String(contentsOfFile: directory + "/postgres.log", encoding: .utf8)) ?? ""
            throw FixtureError("PostgreSQL did not start again (\(started.status)); its log ends: \(log.suffix(600))")
        }
    }

    private static let exitHandlerRegistered = Atomic<Bool>(false)

    private static func registerExitHandler() {
        guard exitHandlerRegistered.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
        else { return }
        atexit {
            let servers = PostgresServer.current.withLock { servers -> [PostgresServer] in
                defer { servers = [] }
                return servers
            }
            for server in servers { server.stop() }
        }
    }

    // MARK: - Databases

    /// `postgres://gateway@127.0.0.1:PORT/DATABASE?sslmode=disable`.
    package func url(database: String) -> String {
        "postgres://\(Self.user)@\(host):\(port)/\(database)?sslmode=disable"
    }

    /// Runs `sql` with psql in `database`; returns what it printed (unaligned, tuples only).
    @discardableResult
    package func psql(_ sql: String, database: String = "postgres") async throws -> String {
        let result = try await Self.run(
            binaries + "/psql",
            ["-h", host, "-p", String(port), "-U", Self.user, "-d", database, "-v", "ON_ERROR_STOP=1", "-X", "-A", "-t",
             "-q", "-c", sql],
            as: nil, logIn: directory)
        guard result.status == 0 else { throw FixtureError("psql failed: \(result.output.suffix(600))") }
        return result.output
    }

    /// `pg_dump` of `database` (data and schema, plain SQL): what a backup of it would hold.
    package func dump(database: String) async throws -> String {
        let result = try await Self.run(
            binaries + "/pg_dump",
            ["-h", host, "-p", String(port), "-U", Self.user, "-d", database, "--no-owner", "--no-privileges"],
            as: nil, logIn: directory)
        guard result.status == 0 else { throw FixtureError("pg_dump failed: \(result.output.suffix(600))") }
        return result.output
    }

    /// Makes template database `name` once per server: creates it, hands its URL to `prepare` (migrate a schema,
    /// load rows), then marks it a template. Later calls return at once.
    package func makeTemplate(_ name: String, prepare: (String) async throws -> Void) async throws {
        guard !templates.withLock({ $0.contains(name) }) else { return }
        try await psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        try await psql("CREATE DATABASE \(name) TEMPLATE template0")
        try await prepare(url(database: name))
        // Every connection of `prepare` must be gone before the template can be copied.
        try await psql("ALTER DATABASE \(name) WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
        try await psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()")
        templates.withLock { _ = $0.insert(name) }
    }

    /// A new database copied from `template`; its name.
    package func createDatabase(template: String = "template0") async throws -> String {
        let name = "test_\(getpid())_\(databaseCounter.wrappingAdd(1, ordering: .relaxed).newValue)"
        try await psql("CREATE DATABASE \(name) TEMPLATE \(template) STRATEGY FILE_COPY")
        return name
    }

    /// Drops `database`, ending its connections.
    package func dropDatabase(_ database: String) async throws {
        try await psql("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
    }

    /// Runs `body` with the URL of a fresh database copied from `template`, dropped after on every path.
    package func withDatabase<T>(template: String = "template0", _ body: (String) async throws -> T) async throws -> T {
        let name = try await createDatabase(template: template)
        do {
            let result = try await body(url(database: name))
            try? await dropDatabase(name)
            return result
        } catch {
            try? await dropDatabase(name)
            throw error
        }
    }

    // MARK: - Running the tools

    /// Where the server's directory goes: memory (`/dev/shm`) when it has room, so that creating a database per test
    /// does not wait for a disk other builds keep busy; else the temporary directory.
    static func scratchDirectory() -> String {
        var stats = statvfs()
        if statvfs("/dev/shm", &stats) == 0, access("/dev/shm", W_OK) == 0,
            UInt64(stats.f_bavail) * UInt64(stats.f_frsize) > 2 << 30
        {
            return "/dev/shm"
        }
        return FileManager.default.temporaryDirectory.path
    }

    /// The newest `/usr/lib/postgresql/N/bin` that has `initdb` and `pg_ctl`.
    static func binaryDirectory() throws(FixtureError) -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let directory = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: directory + "/initdb"),
                FileManager.default.isExecutableFile(atPath: directory + "/pg_ctl")
            {
                return directory
            }
        }
        throw FixtureError(
            "PostgreSQL is not installed (no \(root)/N/bin/initdb); install the Debian package postgresql (make deps): "
                + "the PostgreSQL tests need a real server")
    }

    static func changeOwner(of path: String, to user: String) throws(FixtureError) {
        guard let entry = getpwnam(user) else {
            throw FixtureError("there is no user \(user) to run PostgreSQL as (the postgresql package makes it)")
        }
        guard chown(path, entry.pointee.pw_uid, entry.pointee.pw_gid) == 0 else {
            throw FixtureError("chown \(path) to \(user) failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Runs a tool to completion (as `user` through runuser when given), its output in a file of `logIn`.
    static func run(_ executable: String, _ arguments: [String], as user: String?, logIn directory: String) async throws
        -> (status: Int32, output: String)
    {
        let output = directory + "/tool-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let (path, argv) = user.map { ("/usr/sbin/runuser", ["-u", $0, "--", executable] + arguments) } ?? (executable, arguments)
        let process = try ChildProcess(executable: path, arguments: argv, outputPath: output)
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                process.terminate(grace: .seconds(1))
                throw FixtureError("\(executable) did not finish within 120 s")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let status = process.exitStatus.map { ($0 >> 8) & 0xFF } ?? -1
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// ``run(_:_:as:logIn:)`` without a task, for the exit handler.
    static func runBlocking(_ executable: String, _ arguments: [String], as user: String?, logIn directory: String) throws
        -> Int32
    {
        let (path, argv) = user.map { ("/usr/sbin/runuser", ["-u", $0, "--", executable] + arguments) } ?? (executable, arguments)
        let process = try ChildProcess(executable: path, arguments: argv, outputPath: "/dev/null")
        while process.isRunning { usleep(5_000) }
        return process.exitStatus ?? -1
    }
}
