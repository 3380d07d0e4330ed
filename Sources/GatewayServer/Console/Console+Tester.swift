import Admission
import Foundation
import Hummingbird
import Ingestion
import Store

extension GatewayApplication {
    /// The markup tester: an email's source pasted or uploaded (`.eml`), or an HTTPS URL, checked as
    /// `POST /v1/check/messages` and `/v1/check/pages` check them (a dry run: nothing stored or logged), with the
    /// same authorization (a sender token checks its own domain's documents).
    static func addTesterRoutes(to console: RouterGroup<GatewayRequestContext>, _ frame: ConsoleFrame) {
        let services = frame.services
        let ingestor = services.ingestor
        let maxMessageBytes = ingestor.environment.policy.limits.maxMessageBytes

        struct Tester {
            var source: String
            var url: String
            var report: ReportView?
            var refusal: CodeView?
        }

        console.get("/tester") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .sender], proved: true)
            return frame.page("tester", "Markup tester", session, current: "/console/tester", Tester(source: "", url: ""))
        }

        console.post("/tester") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .sender], proved: true)
            // The pasted source and an uploaded file may both come, each up to the policy's message size.
            let form = try await frame.form(request, session, limit: 2 * maxMessageBytes + 65_536)
            let token = session.token
            let source = form["source"] ?? ""
            let url = form.text("url") ?? ""
            var tester = Tester(source: String(source.prefix(maxMessageBytes)), url: url)
            do {
                let report: IngestionReport
                if let file = form.file("eml") {
                    try services.authorizeSubmission(token, message: file.bytes)
                    report = try await services.check(file.bytes, source: file.filename.isEmpty ? "upload" : file.filename)
                } else if !source.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    let bytes = Array(source.utf8)
                    try services.authorizeSubmission(token, message: bytes)
                    report = try await services.check(bytes, source: "pasted source")
                } else if !url.isEmpty {
                    guard let parsed = URL(string: url), parsed.scheme != nil, let host = parsed.host, !host.isEmpty else {
                        throw APIError.invalid("the URL must be absolute, such as https://example.com/booking", at: "url")
                    }
                    try services.authorizeSubmission(token, host: host)
                    let checked = try await services.ingest(channel: "check") {
                        try await ingestor.ingestPage(parsed, owners: [], dryRun: true)
                    }
                    guard let checked else { throw APIError.busy(retryAfter: services.configuration.retryAfterSeconds) }
                    report = checked
                } else {
                    throw APIError.invalid(
                        "nothing to check", at: "source", hint: "paste an email's source, choose an .eml file, or give a URL")
                }
                tester.report = ReportView(report)
            } catch let error as APIError {
                // A refusal of the request itself (another domain's mail, a busy gateway) is shown on the form.
                tester.refusal = CodeView(code: error.code, at: error.at, hint: error.message + (error.hint.map { "; \($0)" } ?? ""))
                return frame.page(
                    "tester", "Markup tester", session, current: "/console/tester", tester, status: error.status)
            }
            return frame.page("tester", "Markup tester", session, current: "/console/tester", tester)
        }
    }
}
