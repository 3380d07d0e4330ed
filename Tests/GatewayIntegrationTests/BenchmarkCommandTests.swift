import Foundation
internal import Glibc
import TestSupport
import Testing

/// `gateway-bench` as a command: its help runs nothing, an unknown option is an error, and however it is stopped
/// (SIGTERM, as Ctrl-C's SIGINT; SIGKILL, which it cannot catch) the `gateway serve` it started does not outlive it.
@Suite("gateway-bench, the command", .serialized)
struct BenchmarkCommandTests {
    /// `.build/debug/gateway-bench`, next to the gateway the tests run.
    static var bench: String? {
        guard let gateway = GatewayCLI.executable else { return nil }
        let path = (gateway as NSString).deletingLastPathComponent + "/gateway-bench"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    @Test func helpPrintsAndRunsNothing() async throws {
        let bench = try #require(Self.bench, "no gateway-bench next to the tests: run swift build --build-tests")
        let result = try await Integration.run(bench, ["--help"])
        #expect(result.status == 0)
        #expect(result.text.contains("USAGE: gateway-bench"), "\(result.text)")
        #expect(result.text.contains("--crash-after"))
        #expect(!result.text.contains("=="), "a suite ran: \(result.text)")
    }

    @Test(arguments: [["--no-such-option"], ["serve", "--duration"], ["nonsense-suite"], ["--messages", "0"]])
    func unknownOrBadOptionsAreErrors(arguments: [String]) async throws {
        let bench = try #require(Self.bench, "no gateway-bench next to the tests: run swift build --build-tests")
        let result = try await Integration.run(bench, arguments)
        #expect(result.status != 0)
        #expect(!result.error.isEmpty)
        #expect(!result.text.contains("=="), "a suite ran: \(result.text)")
    }

    @Test("stopped with SIGTERM or SIGKILL while its server runs, gateway-bench leaves no gateway serve behind",
          arguments: [SIGTERM, SIGKILL])
    func stoppingTheBenchStopsItsServer(signal: Int32) async throws {
        let bench = try #require(Self.bench, "no gateway-bench next to the tests: run swift build --build-tests")
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("bench.log").path
        let process = try ChildProcess(
            executable: bench,
            arguments: [
                "serve", "--serve-messages", "400", "--crash-after", "100", "--sweep-seconds", "0", "--duration", "600",
                "--http-connections", "1", "--lmtp-sessions", "1",
            ],
            outputPath: output)
        defer {
            process.terminate(grace: .seconds(1))
            // The serve suite's working directory: removed by the bench on SIGTERM; SIGKILL leaves it to us.
            try? FileManager.default.removeItem(
                at: FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-serve-\(process.processIdentifier)"))
        }

        // The line the serve suite prints once its server runs: "server: pid N, ...".
        var server: Int32?
        let deadline = ContinuousClock.now + .seconds(180)
        while server == nil, ContinuousClock.now < deadline, process.isRunning {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            server = text.split(separator: "\n").first { $0.hasPrefix("server: pid ") }
                .flatMap { Int32($0.dropFirst("server: pid ".count).prefix { $0.isNumber }) }
            if server == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let pid = try #require(server, "the bench never started its server: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
        let workers = Self.children(of: pid)
        #expect(!workers.isEmpty)
        #expect(Self.isAlive(pid))

        process.signal(signal)
        let gone = ContinuousClock.now + .seconds(20)
        while (Self.isAlive(pid) || process.isRunning), ContinuousClock.now < gone { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!process.isRunning, "gateway-bench still runs after signal \(signal)")
        #expect(!Self.isAlive(pid), "gateway serve (pid \(pid)) outlived gateway-bench stopped with signal \(signal)")
        let benchDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "gateway-bench-serve-\(process.processIdentifier)")
        if signal == SIGTERM {
            #expect(!FileManager.default.fileExists(atPath: benchDirectory.path), "the bench left \(benchDirectory.path)")
        }
        for worker in workers { #expect(!Self.isAlive(worker), "gateway-worker \(worker) outlived its server") }
    }

    /// Whether `pid` runs (a zombie, dead but not reaped by its parent yet, does not count).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
    }
}
