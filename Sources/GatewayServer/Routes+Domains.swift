import Admission
import Foundation
import Hummingbird
import Ingestion
import Store

extension GatewayApplication {
    /// Registering and managing sending domains (admin), and checking sample emails against one (admin or its sender).
    static func addDomainRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let registry = services.ingestor.registry

        struct Registration: JSONRequestBody {
            var domain: String
            var contact: String?
            /// Sample emails (RFC 5322 text) to check now, as `gateway register --sample` does.
            var samples: [String]?
            enum CodingKeys: String, CodingKey, CaseIterable { case domain, contact, samples }
        }
        struct Registered: Encodable {
            var registration: RegisteredDomain
            /// The new sender token for submissions from this domain, shown once; none when the domain was registered
            /// already (`POST /v1/tokens` issues another).
            var senderToken: IssuedToken?
            var samples: [IngestionReport]
        }

        router.post("/v1/domains") { request, _ in
            let admin = try await services.requireAdmin(request)
            let input = try await services.decode(Registration.self, from: request)
            guard (input.samples?.count ?? 0) <= 10 else { throw APIError.invalid("at most 10 samples", at: "samples") }
            let entry: RegisteredDomain
            let isNew: Bool
            do {
                (entry, isNew) = try await registry.register(input.domain, contact: input.contact, by: services.actor(admin))
            } catch let error as AdmissionError {
                throw APIError(
                    .unprocessableContent, code: error.code.description, message: error.reason, at: "domain")
            } catch {
                throw APIError.unavailable(error)
            }
            // A sender token with the first registration only: registering again is not a way to mint tokens.
            var senderToken: IssuedToken?
            if isNew {
                let issued = try await services.storeCall {
                    try await services.tokens.issue(role: .sender, subject: entry.domain, label: "registration", by: services.actor(admin))
                }
                senderToken = IssuedToken(issued.token, secret: issued.secret)
            }
            var reports: [IngestionReport] = []
            for (index, sample) in (input.samples ?? []).enumerated() {
                reports.append(try await services.check(Array(sample.utf8), source: "sample \(index + 1)"))
            }
            return try json(
                Registered(registration: entry, senderToken: senderToken, samples: reports), status: isNew ? .created : .ok)
        }

        router.get("/v1/domains") { request, _ in
            _ = try await services.requireAdmin(request)
            let status = try request.query("status", as: RegisteredDomain.Status.self, expected: "pending, approved or revoked")
            let domains = try await services.storeCall { try await registry.list(status: status) }
            return try json(domains)
        }

        router.get("/v1/domains/{domain}") { request, context in
            let domain = try await services.authorizeDomain(request, context)
            struct Shown: Encodable {
                var registration: RegisteredDomain
                var changes: [DomainChange]
            }
            let store = services.ingestor.environment.store
            guard let entry = try await services.storeCall({ try await store.registeredDomain(domain.ascii) }) else {
                throw APIError.notFound("\(domain.ascii) is not registered")
            }
            let changes = try await services.storeCall { try await store.domainChanges(domain: domain.ascii, limit: 100) }
            return try json(Shown(registration: entry, changes: changes))
        }

        for (action, status) in [("approve", RegisteredDomain.Status.approved), ("revoke", .revoked)] {
            router.post("/v1/domains/{domain}/\(action)") { request, context in
                let admin = try await services.requireAdmin(request)
                let name = try context.pathParameter("domain")
                do {
                    return try json(try await registry.setStatus(name, status, by: services.actor(admin)))
                } catch let error as AdmissionError {
                    throw APIError(
                        error.code == .domainNotRegistered ? .notFound : .unprocessableContent, code: error.code.description,
                        message: error.reason, at: "domain")
                } catch {
                    throw APIError.unavailable(error)
                }
            }
        }

        router.post("/v1/domains/{domain}/samples") { request, context in
            _ = try await services.authorizeDomain(request, context)
            let bytes = try await services.body(of: request, limit: services.ingestor.environment.policy.limits.maxMessageBytes)
            return try json(try await services.check(bytes, source: "sample"))
        }
    }
}

/// A token as issued: its record and, this once, its secret.
struct IssuedToken: Encodable {
    var id: Int64
    var role: AccessToken.Role
    var subject: String
    var label: String
    var secret: String

    init(_ token: AccessToken, secret: String) {
        id = token.id
        role = token.role
        subject = token.subject
        label = token.label
        self.secret = secret
    }
}

extension GatewayServices {
    /// The `{domain}` path parameter, normalized, for an admin or that domain's own sender token.
    func authorizeDomain(_ request: Request, _ context: GatewayRequestContext) async throws -> DomainName {
        let token = try await authenticate(request, needs: "an admin token or this domain's sender token")
        let name = try context.pathParameter("domain")
        let domain: DomainName
        do {
            domain = try DomainName(normalizing: name)
        } catch {
            throw APIError.invalid(error.description, at: "domain")
        }
        switch token.role {
        case .admin:
            return domain
        case .sender where domain.isWithin(DomainName(trustedASCII: token.subject)):
            return domain
        default:
            throw APIError.forbidden("this token may not act for \(domain.ascii)")
        }
    }

    /// A dry run of one email: what would happen, nothing stored or logged.
    func check(_ bytes: [UInt8], source: String) async throws -> IngestionReport {
        let report = try await ingest(channel: "check") {
            try await ingestor.ingestEmail(bytes, source: source, dryRun: true)
        }
        guard let report else { throw APIError.busy(retryAfter: configuration.retryAfterSeconds) }
        return report
    }
}
