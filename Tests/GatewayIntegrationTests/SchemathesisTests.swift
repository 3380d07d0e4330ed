import Foundation
import TestSupport
import Testing

/// The OpenAPI document against the real server: `gateway serve` on a temporary store, with the example senders'
/// keys, one registered domain and one admitted booking (so the list, lookup, log and calendar answers carry real
/// records), checked by schemathesis (Scripts/schemathesis.sh): generated requests for every operation, and every
/// answer must be no 5xx and have a documented status, content type, headers and body.
@Suite("OpenAPI document against gateway serve (schemathesis)")
struct SchemathesisTests {
    static let adminToken = "schemathesis-admin-token-0123456789"
    static let script = Integration.scripts.appendingPathComponent("schemathesis.sh").path
    static let venv = Integration.packageRoot.appendingPathComponent(".build/venv")

    @Test(.timeLimit(.minutes(5)))
    func theServerAnswersAsItsDocumentSays() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.venv.appendingPathComponent("bin/schemathesis").path),
            "schemathesis is not installed in .build/venv: run `make python-tools` (make test does)")
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await SchemathesisServer.start(in: directory, adminToken: Self.adminToken)
        defer { server.process.terminate() }

        // A registered sender and one admitted booking (two passengers: two records).
        let registered = try await server.request(
            "POST", "/v1/domains", body: Array(#"{"domain":"skyways.example","contact":"markup@skyways.example"}"#.utf8),
            contentType: "application/json")
        try #require(registered.status == 201, "registering skyways.example: \(registered.status) \(registered.body)")
        let senderToken = try #require(
            Self.secret(in: registered.body, at: "senderToken"), "no sender token in \(registered.body)")
        let email = [UInt8](try Data(contentsOf: Integration.packageRoot.appendingPathComponent("examples/flight-two-passengers.eml")))
        let submitted = try await server.request("POST", "/v1/messages", body: email, contentType: "message/rfc822")
        try #require(submitted.status == 200 && submitted.body.contains(#""verdict":"admitted""#), "\(submitted.body)")

        let issued = try await server.request(
            "POST", "/v1/tokens", body: Array(#"{"role":"owner","subject":"eva@guest.example.net"}"#.utf8), contentType: "application/json")
        let ownerToken = try #require(Self.secret(in: issued.body, at: nil), "no owner token in \(issued.body)")

        let run = try await Integration.run(
            "/bin/bash", [Self.script, server.baseURL],
            environment: ProcessInfo.processInfo.environment.merging([
                "GATEWAY_ADMIN_TOKEN": Self.adminToken, "GATEWAY_ROLE_TOKENS": "\(senderToken) \(ownerToken)",
            ]) { _, new in new })
        let report = run.text + run.error
        #expect(run.status == 0, "schemathesis found the server and its document disagree:\n\(report)")
        // Not vacuous: the main run tested every operation but DELETE /v1/tokens/{id}, which the second tests alone.
        let selected = report.split(separator: "\n").filter { $0.contains("Selected: ") }.map { $0.split(separator: " ").last ?? "" }
        let tested = report.split(separator: "\n").filter { $0.contains("Tested: ") }.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        let total = try #require(selected.first?.split(separator: "/").last.flatMap { Int($0) }, "no summary in:\n\(report)")
        // (admin, sender, owner, then the revocations).
        #expect(total >= 24 && tested == [total - 1, total, total, 1], "operations tested: \(tested) of \(total)\n\(report)")
        #expect(server.process.isRunning, "gateway serve exited during the run:\n\(server.output)")
    }
}

extension SchemathesisTests {
    /// The `secret` of a JSON object (or of its member `member`).
    static func secret(in json: String, at member: String?) -> String? {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else { return nil }
        if let member {
            guard let inner = object[member] as? [String: Any] else { return nil }
            object = inner
        }
        return object["secret"] as? String
    }
}

/// `gateway serve` as a child process on `--http 127.0.0.1:0` (the kernel picks the port; the server prints it),
/// without LMTP, keys from examples/keys.zone.
private struct SchemathesisServer {
    let process: ChildProcess
    let outputPath: String
    let baseURL: String
    let adminToken: String

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    static func start(in directory: URL, adminToken: String) async throws -> SchemathesisServer {
        let gateway = try #require(GatewayCLI.executable, "no gateway executable next to the tests: run swift build --build-tests")
        let outputPath = directory.appendingPathComponent("serve.log").path
        // env: the token reaches the server through its environment, as an operator passes it.
        let process = try ChildProcess(
            executable: "/usr/bin/env",
            arguments: [
                "-C", directory.path, "GATEWAY_ADMIN_TOKEN=\(adminToken)", gateway, "serve",
                "--store", directory.appendingPathComponent("gateway.sqlite").path, "--policy", "development",
                "--http", "127.0.0.1:0", "--lmtp", "off",
                "--keys", Integration.packageRoot.appendingPathComponent("examples/keys.zone").path,
            ],
            outputPath: outputPath)
        let prefix = "gateway: HTTP API on "
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            if let line = output.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
                let url = line.dropFirst(prefix.count).split(separator: " ").first
            {
                return SchemathesisServer(process: process, outputPath: outputPath, baseURL: String(url), adminToken: adminToken)
            }
            try #require(process.isRunning, "gateway serve exited before listening:\n\(output)")
            try await Task.sleep(for: .milliseconds(25))
        }
        process.terminate()
        throw FixtureError("gateway serve did not print its HTTP address within 60 s:\n\((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")")
    }

    /// One request with the admin token (by Debian's python3, which `make deps` installs): the status and the body.
    func request(_ method: String, _ path: String, body: [UInt8], contentType: String) async throws -> (status: Int, body: String) {
        let script = """
            import sys, urllib.request, urllib.error
            request = urllib.request.Request(sys.argv[2], data=sys.stdin.buffer.read(), method=sys.argv[1])
            request.add_header("Authorization", "Bearer " + sys.argv[3])
            request.add_header("Content-Type", sys.argv[4])
            try:
                response = urllib.request.urlopen(request, timeout=60)
            except urllib.error.HTTPError as error:
                response = error
            sys.stdout.write(str(response.status) + "\\n" + response.read().decode("utf-8", "replace"))
            """
        let result = try await Integration.run(
            Integration.python, ["-c", script, method, baseURL + path, adminToken, contentType], input: body)
        try #require(result.status == 0, "\(method) \(path): \(result.error)")
        let text = result.text
        let split = try #require(text.firstIndex(of: "\n"))
        return (Int(text[..<split]) ?? 0, String(text[text.index(after: split)...]))
    }
}
