import Admission
import Foundation
import Hummingbird
import Ingestion
import Store

extension GatewayApplication {
    /// Registering and managing sending domains (admin), and checking sample emails against one (admin or its sender).
    static func addDomainRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let registry = services.ingestor.registry
        let policy = services.ingestor.environment.policy

        struct Registration: JSONRequestBody {
            var domain: String
            var contact: String?
            /// Sample emails (RFC 5322 text) to check now, as `gateway register --sample` does.
            var samples: [String]?
            enum CodingKeys: String, CodingKey, CaseIterable { case domain, contact, samples }
        }
        struct Registered: Encodable {
            var registration: RegisteredDomain
            /// The TXT record to publish to prove control of the domain.
            var challenge: ChallengeRecord?
            /// The new sender token for submissions from this domain, shown once; none when the domain was registered
            /// already (`POST /v1/tokens` issues another).
            var senderToken: IssuedToken?
            var samples: [IngestionReport]
        }

        router.post("/v1/domains") { request, _ in
            // An admin token, or none at all when the policy opens registration to anyone (self-service).
            let admin: AccessToken?
            if request.headers[.authorization] != nil || !policy.registration.open {
                admin = try await services.requireAdmin(request)
            } else {
                admin = nil
            }
            let input = try await services.decode(Registration.self, from: request)
            guard (input.samples?.count ?? 0) <= 10 else { throw APIError.invalid("at most 10 samples", at: "samples") }
            if admin == nil, input.samples?.isEmpty == false {
                throw APIError.forbidden(
                    "samples are checked for an admin or a sender token",
                    hint: "register first, prove control, then POST /v1/domains/{domain}/samples with the sender token")
            }
            let actor = admin.map(services.actor) ?? "\(services.actorPrefix):self-service"
            let entry: RegisteredDomain
            let isNew: Bool
            do {
                (entry, isNew) = try await registry.register(
                    input.domain, contact: input.contact, by: actor, selfService: admin == nil)
            } catch let error as AdmissionError {
                throw APIError(
                    error.code == .domainTaken ? .conflict : .unprocessableContent, code: error.code.description,
                    message: error.reason, at: "domain")
            } catch {
                throw APIError.unavailable(error)
            }
            // A sender token with the first registration only: registering again is not a way to mint tokens. A
            // self-service one can do nothing but prove control until the proof passes.
            var senderToken: IssuedToken?
            if isNew {
                let issued = try await services.storeCall {
                    try await services.tokens.issue(
                        role: .sender, subject: entry.domain, label: admin == nil ? "self-service" : "registration", by: actor)
                }
                senderToken = IssuedToken(issued.token, secret: issued.secret)
            }
            var reports: [IngestionReport] = []
            for (index, sample) in (input.samples ?? []).enumerated() {
                reports.append(try await services.check(Array(sample.utf8), source: "sample \(index + 1)"))
            }
            return try json(
                Registered(
                    registration: entry, challenge: ChallengeRecord(entry), senderToken: senderToken, samples: reports),
                status: isNew ? .created : .ok)
        }

        router.get("/v1/domains") { request, _ in
            _ = try await services.requireAdmin(request)
            let status = try request.query(
                "status", as: RegisteredDomain.Status.self, expected: "pending, verified, approved or suspended")
            let domains = try await services.storeCall { try await registry.list(status: status) }
            return try json(domains)
        }

        router.get("/v1/domains/{domain}") { request, context in
            let domain = try await services.authorizeDomain(request, context, needsProof: false).domain
            struct Shown: Encodable {
                var registration: RegisteredDomain
                var challenge: ChallengeRecord?
                var changes: [DomainChange]
                /// What the domain has used of each quota the policy sets, in the current window.
                var quotas: [QuotaUsage]
            }
            let store = services.store
            guard let entry = try await services.storeCall({ try await store.registeredDomain(domain.ascii) }) else {
                throw APIError.notFound("\(domain.ascii) is not registered")
            }
            let changes = try await services.storeCall { try await store.domainChanges(domain: domain.ascii, limit: 100) }
            let quotas = try await services.storeCall { try await services.quotaUsage(ofDomain: entry.domain) }
            return try json(Shown(registration: entry, challenge: ChallengeRecord(entry), changes: changes, quotas: quotas))
        }

        router.post("/v1/domains/{domain}/approve") { request, context in
            let admin = try await services.requireAdmin(request)
            let name = try context.pathParameter("domain")
            return try json(try await registryCall { try await registry.approve(name, by: services.actor(admin)) })
        }

        router.post("/v1/domains/{domain}/revoke") { request, context in
            let admin = try await services.requireAdmin(request)
            let name = try context.pathParameter("domain")
            return try json(try await registryCall { try await registry.revoke(name, by: services.actor(admin)) })
        }

        struct Verification: Encodable {
            var registration: RegisteredDomain
            /// The lookup just made: when, what it found, who answered.
            var check: RegisteredDomain.DomainCheck
            var challenge: ChallengeRecord?
        }
        router.post("/v1/domains/{domain}/verify") { request, context in
            // The one thing a sender token may do before its domain's proof passes.
            let (domain, token) = try await services.authorizeDomain(request, context, needsProof: false)
            try requireOwnRegistration(token, domain)
            let resolver = services.ingestor.environment.resolver
            let (entry, check) = try await registryCall {
                try await registry.verify(domain.ascii, resolver: resolver, by: services.actor(token))
            }
            return try json(Verification(registration: entry, check: check, challenge: ChallengeRecord(entry)))
        }

        struct TestModeChange: JSONRequestBody {
            var enabled: Bool
            /// The owner addresses (the sender's own test inboxes) its markup is admitted for; required to turn it on.
            var owners: [String]?
            /// How long it stays on, in seconds (default: the policy's).
            var durationSeconds: Double?
            enum CodingKeys: String, CodingKey, CaseIterable { case enabled, owners, durationSeconds }
        }
        router.put("/v1/domains/{domain}/test-mode") { request, context in
            let (domain, token) = try await services.authorizeDomain(request, context, needsProof: true)
            try requireOwnRegistration(token, domain)
            let change = try await services.decode(TestModeChange.self, from: request)
            var owners: [OwnerAddress]? = nil
            if change.enabled {
                guard let given = change.owners, !given.isEmpty else {
                    throw APIError.invalid("owners is required to turn test mode on", at: "owners")
                }
                owners = try given.enumerated().map { index, text in try GatewayServices.owner(text, at: "owners[\(index)]") }
            }
            let now = services.ingestor.environment.now()
            return try json(
                try await registryCall {
                    try await registry.setTestMode(
                        domain.ascii, owners: owners, for: change.durationSeconds, by: services.actor(token), now: now)
                })
        }

        struct HostsChange: JSONRequestBody {
            /// Hosts (each covering its subdomains) that links in the domain's markup may point to, besides the domain.
            var hosts: [String]
            enum CodingKeys: String, CodingKey, CaseIterable { case hosts }
        }
        router.put("/v1/domains/{domain}/hosts") { request, context in
            let admin = try await services.requireAdmin(request)
            let name = try context.pathParameter("domain")
            let change = try await services.decode(HostsChange.self, from: request)
            guard change.hosts.count <= 100 else { throw APIError.invalid("at most 100 hosts", at: "hosts") }
            return try json(
                try await registryCall { try await registry.setHosts(name, hosts: change.hosts, by: services.actor(admin)) })
        }

        struct AppBinding: JSONRequestBody {
            /// The app's bundle identifier (`com.airline.app`).
            var app: String
            enum CodingKeys: String, CodingKey, CaseIterable { case app }
        }
        // Admin only, as `gateway apps register`: an identifier names one app everywhere, and a sender binding
        // another's would keep its owner out.
        router.post("/v1/domains/{domain}/apps") { request, context in
            let admin = try await services.requireAdmin(request)
            let name = try context.pathParameter("domain")
            let binding = try await services.decode(AppBinding.self, from: request)
            return try json(
                try await registryCall { try await registry.registerApp(binding.app, domain: name, by: services.actor(admin)) })
        }

        router.post("/v1/domains/{domain}/samples") { request, context in
            _ = try await services.authorizeDomain(request, context, needsProof: true)
            let bytes = try await services.body(of: request, limit: services.ingestor.environment.policy.limits.maxMessageBytes)
            return try json(try await services.check(bytes, source: "sample"))
        }
    }

    /// A sender token changes its own registration only, not another registered below it.
    static func requireOwnRegistration(_ token: AccessToken, _ domain: DomainName) throws {
        guard token.role == .sender, domain.ascii != token.subject else { return }
        throw APIError.forbidden(
            "this sender token acts for the registration of \(token.subject), not \(domain.ascii)",
            hint: "use \(token.subject) in the path, or the token issued for \(domain.ascii)")
    }

    /// A registry change from a route: its refusals become 404 (not registered), 409 (the domain's state does not
    /// allow it) or 422 (the input cannot be used); a store failure 503.
    static func registryCall<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as AdmissionError {
            let status: HTTPResponse.Status =
                switch error.code {
                case .domainNotRegistered: .notFound
                case .domainNotVerified, .domainSuspended, .testModeLocked, .appBoundElsewhere: .conflict
                default: .unprocessableContent
                }
            let at: String? =
                switch error.code {
                case .testModeDurationOutOfRange: "durationSeconds"
                case .testModeOwnersInvalid: "owners"
                case .hostInvalid: "hosts"
                default: "domain"
                }
            throw APIError(status, code: error.code.description, message: error.reason, at: at)
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.unavailable(error)
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
    /// The `{domain}` path parameter, normalized, for an admin or that domain's own sender token (one that proved
    /// control of its domain, when `needsProof`).
    func authorizeDomain(_ request: Request, _ context: GatewayRequestContext, needsProof: Bool) async throws
        -> (domain: DomainName, token: AccessToken)
    {
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
            return (domain, token)
        case .sender where domain.isWithin(DomainName(trustedASCII: token.subject)):
            if needsProof { try await requireProof(token) }
            return (domain, token)
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
