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
        var options = ServerProcess.Options(
            directory: directory, adminToken: Self.adminToken,
            resolver: ["--keys", Integration.packageRoot.appendingPathComponent("examples/keys.zone").path])
        // Generated long polls wait a second at most (a longer wait is a documented 400); the webhooks the run
        // subscribes to made-up hosts give up on each attempt within a second.
        options.configuration = """
            changes-max-wait-seconds: 1
            webhook-response-timeout-seconds: 1
            webhook-timeout-seconds: 1
            """
        let server = try await ServerProcess.start(options, expectLMTP: false)

        // A registered sender and one admitted booking (two passengers: two records).
        let senderToken = try await server.register("skyways.example")
        let email = [UInt8](try Data(contentsOf: Integration.packageRoot.appendingPathComponent("examples/flight-two-passengers.eml")))
        let submitted = try await server.curl("POST", "/v1/messages", token: Self.adminToken, body: email, contentType: "message/rfc822")
        try #require(submitted.status == 200 && submitted.text.contains(#""verdict":"admitted""#), "\(submitted.text)")
        let ownerToken = try await server.ownerToken("eva@guest.example.net").secret

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
        #expect(server.exitStatus == nil, "gateway serve exited during the run:\n\(server.output)")
        _ = try await server.stop()
    }
}
