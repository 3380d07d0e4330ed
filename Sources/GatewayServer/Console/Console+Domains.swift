import Admission
import Foundation
import Hummingbird
import Ingestion
import Store

extension GatewayApplication {
    /// The domain page: a sender sees its registration (state, history) and checks samples; an admin sees every
    /// domain, registers, approves and revokes them, and issues and revokes their sender tokens — what
    /// `/v1/domains` and `/v1/tokens` let each role do, through the same registry and token authority.
    static func addDomainConsoleRoutes(to console: RouterGroup<GatewayRequestContext>, _ frame: ConsoleFrame) {
        let services = frame.services
        let registry = services.ingestor.registry
        let store = services.ingestor.environment.store

        struct Domains {
            struct Listed {
                var domain: String
                var status: String
                var statusClass: String
                var href: String
            }
            var isAdmin: Bool
            var domains: [Listed]
            var selected: DomainView?
            /// A token just issued: its secret, shown this once.
            var issued: String?
            var issuedLabel: String?
            var notice: String?
            var refusal: CodeView?
        }

        /// The page for `domain` (nil: the sender's own, or for an admin only the list).
        @Sendable func page(
            _ session: ConsoleSession, domain requested: String?, issued: (secret: String, label: String)? = nil,
            notice: String? = nil, refusal: CodeView? = nil, status: HTTPResponse.Status = .ok
        ) async throws -> Response {
            let isAdmin = session.token.role == .admin
            var listed: [Domains.Listed] = []
            if isAdmin {
                listed = try await services.storeCall { try await registry.list(status: nil) }.map {
                    Domains.Listed(
                        domain: $0.domain, status: $0.status.rawValue, statusClass: DomainView.statusClass($0.status),
                        href: "/console/domain?domain=" + ($0.domain.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: ".-"))) ?? ""))
                }
            }
            var selected: DomainView?
            if let name = isAdmin ? requested : session.token.subject {
                let domain = try Self.domain(name, for: session)
                if let registration = try await services.storeCall({ try await store.registeredDomain(domain) }) {
                    let changes = try await services.storeCall { try await store.domainChanges(domain: domain, limit: 100) }
                    let quotas = try await services.storeCall { try await services.quotaUsage(ofDomain: domain) }
                    var tokens: [AccessToken] = []
                    if isAdmin {
                        tokens = try await services.storeCall { try await store.tokens(role: .sender) }
                            .filter { $0.subject == domain && $0.consoleSessionParent == nil }
                    }
                    selected = DomainView(
                        registration, changes: changes, quotas: quotas, tokens: tokens,
                        mayEnableTestMode: services.ingestor.environment.policy.testMode.mayEnable,
                        now: services.ingestor.environment.now())
                } else if !isAdmin {
                    throw ConsoleError(.notFound, code: "request.not-found", message: "\(domain) is not registered")
                }
            }
            let content = Domains(
                isAdmin: isAdmin, domains: listed, selected: selected, issued: issued?.secret, issuedLabel: issued?.label,
                notice: notice, refusal: refusal)
            return frame.page(
                "domain", isAdmin ? "Domains" : "Domain", session, current: "/console/domain", content, status: status)
        }

        console.get("/domain") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .sender])
            return try await page(session, domain: request.uri.queryParameters["domain"].map { String($0) })
        }

        // Admin: register a domain (POST /v1/domains without samples).
        console.post("/domain/register") { request, _ in
            let session = try await frame.session(request, roles: [.admin])
            let form = try await frame.form(request, session, limit: 8192)
            do {
                let (entry, isNew) = try await registry.register(
                    form.text("domain") ?? "", contact: form.text("contact").flatMap { $0.isEmpty ? nil : $0 },
                    by: services.consoleActor(session))
                var issued: (String, String)?
                if isNew {
                    let token = try await services.tokens.issue(
                        role: .sender, subject: entry.domain, label: "registration", by: services.consoleActor(session))
                    issued = (token.secret, "registration")
                }
                return try await page(
                    session, domain: entry.domain, issued: issued,
                    notice: isNew
                        ? "\(entry.domain) is registered (\(entry.status.rawValue)): its registrant publishes the record below"
                        : "\(entry.domain) was registered already")
            } catch let error as AdmissionError {
                return try await page(
                    session, domain: nil, refusal: CodeView(code: error.code.description, at: "domain", hint: error.reason),
                    status: .unprocessableContent)
            }
        }

        /// A registry change from the page: its refusal (with its code) shown on the domain's page.
        @Sendable func change(
            _ session: ConsoleSession, _ domain: String, notice: (RegisteredDomain) -> String,
            _ body: () async throws -> RegisteredDomain
        ) async throws -> Response {
            do {
                let entry = try await GatewayApplication.registryCall(body)
                return try await page(session, domain: entry.domain, notice: notice(entry))
            } catch let error as APIError {
                let shown = session.token.role == .admin && error.status == .notFound ? nil : domain
                return try await page(
                    session, domain: shown, refusal: CodeView(code: error.code, at: error.at, hint: error.message),
                    status: error.status)
            }
        }

        // Admin: approve or revoke (POST /v1/domains/{domain}/approve|revoke).
        console.post("/domain/status") { request, _ in
            let session = try await frame.session(request, roles: [.admin])
            let form = try await frame.form(request, session, limit: 4096)
            let domain = try Self.domain(form.text("domain") ?? "", for: session)
            let actor = services.consoleActor(session)
            switch form.text("status") {
            case "approved":
                return try await change(session, domain, notice: { "\($0.domain) is \($0.status.rawValue)" }) {
                    try await registry.approve(domain, by: actor)
                }
            case "suspended":
                return try await change(session, domain, notice: { "\($0.domain) is \($0.status.rawValue)" }) {
                    try await registry.revoke(domain, by: actor)
                }
            default:
                throw ConsoleError(.badRequest, code: "request.invalid", message: "status must be approved or suspended")
            }
        }

        // The registrant or an admin: look up the challenge record now (POST /v1/domains/{domain}/verify): the one
        // thing a sender may do before its proof passes.
        console.post("/domain/verify") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .sender])
            let form = try await frame.form(request, session, limit: 4096)
            let domain = try Self.domain(form.text("domain") ?? "", for: session)
            do {
                try GatewayApplication.requireOwnRegistration(session.token, DomainName(trustedASCII: domain))
            } catch let error as APIError {
                throw ConsoleError(error)
            }
            let resolver = services.ingestor.environment.resolver
            let actor = services.consoleActor(session)
            return try await change(
                session, domain,
                notice: { entry in
                    let check = entry.trust.lastCheck
                    return "checked \(DomainLifecycle.recordName(of: entry.domain)): "
                        + (check.map { "\($0.result.rawValue) (\($0.nameserver)\($0.code.map { ", \($0)" } ?? ""))" } ?? "no answer")
                        + "; \(entry.domain) is \(entry.status.rawValue)"
                }
            ) {
                try await registry.verify(domain, resolver: resolver, by: actor).domain
            }
        }

        // The proved registrant or an admin: test mode on for a few owners, or off (PUT /v1/domains/{domain}/test-mode).
        console.post("/domain/test-mode") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .sender], proved: true)
            let form = try await frame.form(request, session, limit: 8192)
            let domain = try Self.domain(form.text("domain") ?? "", for: session)
            do {
                try GatewayApplication.requireOwnRegistration(session.token, DomainName(trustedASCII: domain))
            } catch let error as APIError {
                throw ConsoleError(error)
            }
            let enable = form.text("enabled") == "true"
            var owners: [OwnerAddress]?
            var duration: Double?
            do {
                if enable {
                    let given = (form.text("owners") ?? "").split(whereSeparator: { $0 == "," || $0.isWhitespace })
                    guard !given.isEmpty else { throw APIError.invalid("list the owner addresses to turn test mode on", at: "owners") }
                    owners = try given.map { try GatewayServices.owner(String($0), at: "owners") }
                    if let hours = form.text("hours"), !hours.isEmpty {
                        guard let value = Double(hours), value > 0 else {
                            throw APIError.invalid("hours is a positive number", at: "hours")
                        }
                        duration = value * 3600
                    }
                }
            } catch let error as APIError {
                return try await page(
                    session, domain: domain, refusal: CodeView(code: error.code, at: error.at, hint: error.message),
                    status: error.status)
            }
            let actor = services.consoleActor(session)
            let now = services.ingestor.environment.now()
            return try await change(
                session, domain,
                notice: { entry in
                    entry.trust.testMode.map { "test mode is on until \(ConsoleFormat.time($0.until))" } ?? "test mode is off"
                }
            ) {
                try await registry.setTestMode(domain, owners: owners, for: duration, by: actor, now: now)
            }
        }

        // Admin: the hosts links in the domain's markup may point to (PUT /v1/domains/{domain}/hosts).
        console.post("/domain/hosts") { request, _ in
            let session = try await frame.session(request, roles: [.admin])
            let form = try await frame.form(request, session, limit: 8192)
            let domain = try Self.domain(form.text("domain") ?? "", for: session)
            let hosts = (form.text("hosts") ?? "").split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
            guard hosts.count <= 100 else {
                throw ConsoleError(.badRequest, code: "request.invalid", message: "at most 100 hosts")
            }
            let actor = services.consoleActor(session)
            return try await change(
                session, domain,
                notice: { $0.trust.hosts.isEmpty ? "links may point to \($0.domain) only" : "link hosts: \($0.trust.hosts.joined(separator: ", "))" }
            ) {
                try await registry.setHosts(domain, hosts: hosts, by: actor)
            }
        }

        // Admin: a new sender token for the domain (POST /v1/tokens), its secret shown once.
        console.post("/domain/tokens") { request, _ in
            let session = try await frame.session(request, roles: [.admin])
            let form = try await frame.form(request, session, limit: 4096)
            let subject = try await services.tokenSubject(role: .sender, subject: form.text("domain") ?? "")
            let label = String((form.text("label") ?? "console").prefix(200))
            let issued = try await services.storeCall {
                try await services.tokens.issue(role: .sender, subject: subject, label: label, by: services.consoleActor(session))
            }
            return try await page(session, domain: subject, issued: (issued.secret, label))
        }

        // Admin: revoke a token (DELETE /v1/tokens/{id}).
        console.post("/domain/tokens/revoke") { request, _ in
            let session = try await frame.session(request, roles: [.admin])
            let form = try await frame.form(request, session, limit: 4096)
            guard let id = form.text("id").flatMap({ Int64($0) }) else {
                throw ConsoleError(.badRequest, code: "request.invalid", message: "the token id is a number")
            }
            // The page lists sender tokens; admin tokens are revoked through the API, which keeps the last one.
            guard let token = try await services.storeCall({ try await store.token(id: id) }), token.role == .sender else {
                throw ConsoleError(.notFound, code: "request.not-found", message: "no sender token \(id)")
            }
            let revoked = try await services.storeCall { try await store.revokeToken(id: token.id) }
            return try await page(
                session, domain: form.text("domain"), notice: revoked ? "token \(id) is revoked" : "token \(id) was revoked already")
        }
    }

    /// `name` normalized, within what the session may act for (an admin: any; a sender: its own domain and below).
    static func domain(_ name: String, for session: ConsoleSession) throws -> String {
        let domain: DomainName
        do {
            domain = try DomainName(normalizing: name)
        } catch {
            throw ConsoleError(.badRequest, code: error.code.description, message: error.description)
        }
        guard session.token.role == .admin || domain.isWithin(DomainName(trustedASCII: session.token.subject)) else {
            throw ConsoleError.forbidden("this token may not act for \(domain.ascii)")
        }
        return domain.ascii
    }
}
