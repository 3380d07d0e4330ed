import Admission
import Foundation
import Hummingbird
import Ingestion
import MailMessage
import Store

extension GatewayApplication {
    /// Submitting emails and pages for ingestion, and dry-run checks of either (admin, or a sender token for the
    /// domain the document comes from).
    static func addSubmissionRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let ingestor = services.ingestor
        let maxMessageBytes = ingestor.environment.policy.limits.maxMessageBytes

        struct PageSubmission: JSONRequestBody {
            var url: String
            /// Whose reservations they are (required: a page has no recipient).
            var owner: String
            enum CodingKeys: String, CodingKey, CaseIterable { case url, owner }
        }

        for dryRun in [false, true] {
            let prefix = dryRun ? "/v1/check" : "/v1"
            let channel = dryRun ? "check" : "http"

            router.post("\(prefix)/messages") { request, context in
                try services.refuseWhileDraining()
                let token = try await services.authenticate(request, needs: "a sender token or an admin token")
                try await services.requireProof(token)
                let bytes = try await services.body(of: request, limit: maxMessageBytes)
                try services.authorizeSubmission(token, message: bytes)
                let given = request.uri.queryParameters[values: "owner"]
                guard given.count <= 16 else { throw APIError.invalid("at most 16 owner parameters", at: "owner") }
                let owners = try given.map { try GatewayServices.owner(String($0), at: "owner") }
                let source = "http:\(context.remoteAddress?.ipAddress ?? "unknown")"
                // Quotas count submissions, not dry runs.
                let quotaDomain = dryRun ? nil : try await services.storeCall { try await services.quotaDomain(ofMessage: bytes) }
                if !dryRun, let refusal = try await services.storeCall({
                    try await services.chargeIntake(domain: quotaDomain, owners: owners, bytes: bytes.count, channel: channel)
                }) {
                    throw APIError.overQuota(refusal)
                }
                let report = try await services.ingest(channel: channel) {
                    try await ingestor.ingestEmail(bytes, source: source, owners: owners, channel: .http, dryRun: dryRun)
                }
                guard let report else { throw APIError.busy(retryAfter: services.configuration.retryAfterSeconds) }
                if !dryRun { services.metrics.recordPrefilter(channel: channel, hasMarkup: !report.isWithoutMarkup) }
                await services.countWritten(report, domain: quotaDomain)
                return try json(report, status: report.verdict == .deferred ? .accepted : .ok)
            }

            router.post("\(prefix)/pages") { request, _ in
                try services.refuseWhileDraining()
                let token = try await services.authenticate(request, needs: "a sender token or an admin token")
                try await services.requireProof(token)
                let input = try await services.decode(PageSubmission.self, from: request)
                guard let url = URL(string: input.url), url.scheme != nil, let host = url.host, !host.isEmpty else {
                    throw APIError.invalid("url must be an absolute URL", at: "url")
                }
                let owner = try GatewayServices.owner(input.owner, at: "owner")
                try services.authorizeSubmission(token, host: host)
                let quotaDomain = dryRun ? nil : try await services.storeCall { try await services.quotaDomain(ofHost: host) }
                if !dryRun, let refusal = try await services.storeCall({
                    try await services.chargeIntake(domain: quotaDomain, owners: [owner], bytes: 0, channel: "web")
                }) {
                    throw APIError.overQuota(refusal)
                }
                let report = try await services.ingest(channel: dryRun ? "check" : "web") {
                    try await ingestor.ingestPage(url, owners: [owner], dryRun: dryRun)
                }
                guard let report else { throw APIError.busy(retryAfter: services.configuration.retryAfterSeconds) }
                await services.countWritten(report, domain: quotaDomain)
                return try json(report, status: report.verdict == .deferred ? .accepted : .ok)
            }
        }
    }
}

extension GatewayServices {
    /// During a graceful stop a submission that arrives is refused with 503 and Retry-After (one that arrived before
    /// it finishes): the client or its load balancer sends it to another node, or again later.
    func refuseWhileDraining() throws {
        if lifecycle.isDraining { throw APIError.shuttingDown }
    }

    /// An admin may submit anything; a sender token only documents from its domain or below (the From domain of
    /// an email; a page's host). Admission still decides on DKIM or HTTPS: the token says who calls, not what is
    /// trusted.
    func authorizeSubmission(_ token: AccessToken, message: [UInt8]) throws {
        switch token.role {
        case .admin: return
        case .owner: throw APIError.forbidden("an owner token reads reservations; submissions need a sender token")
        case .sender:
            // The header block only (the From field is all this needs): the pipeline parses the whole message.
            guard let parsed = try? RawMessage(headerSectionOf: message) else { return }  // refused later, with its code
            let from = parsed.from
            guard from.count == 1, let domain = try? DomainName(normalizing: from[0].domain) else {
                throw APIError.forbidden(
                    "a sender token submits mail with one From address in \(token.subject)", hint: "check the From header")
            }
            guard domain.isWithin(DomainName(trustedASCII: token.subject)) else {
                throw APIError.forbidden(
                    "this sender token is for \(token.subject); the message is from \(domain.ascii)",
                    hint: "use the token issued for \(domain.ascii)'s registration")
            }
        }
    }

    func authorizeSubmission(_ token: AccessToken, host: String) throws {
        switch token.role {
        case .admin: return
        case .owner: throw APIError.forbidden("an owner token reads reservations; submissions need a sender token")
        case .sender:
            guard let domain = try? DomainName(normalizing: host), domain.isWithin(DomainName(trustedASCII: token.subject))
            else {
                throw APIError.forbidden("this sender token is for \(token.subject); the page is on \(host)")
            }
        }
    }

    /// The owner `text` names, or 400 at `parameter`.
    static func owner(_ text: String, at parameter: String) throws -> OwnerAddress {
        guard let owner = OwnerAddress(text) else {
            throw APIError.invalid("'\(text.prefix(80))' is not an email address", at: parameter)
        }
        return owner
    }
}
