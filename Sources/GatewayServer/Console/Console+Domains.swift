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
                        domain: $0.domain, status: $0.status.rawValue,
                        statusClass: $0.status == .approved ? "good" : $0.status == .pending ? "warn" : "bad",
                        href: "/console/domain?domain=" + ($0.domain.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: ".-"))) ?? ""))
                }
            }
            var selected: DomainView?
            if let name = isAdmin ? requested : session.token.subject {
                let domain = try Self.domain(name, for: session)
                if let registration = try await services.storeCall({ try await store.registeredDomain(domain) }) {
                    let changes = try await services.storeCall { try await store.domainChanges(domain: domain, limit: 100) }
                    var tokens: [AccessToken] = []
                    if isAdmin {
                        tokens = try await services.storeCall { try await store.tokens(role: .sender) }
                            .filter { $0.subject == domain && $0.consoleSessionParent == nil }
                    }
                    selected = DomainView(registration, changes: changes, tokens: tokens)
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
                    form.text("domain") ?? "", contact: form.text("contact"), by: services.consoleActor(session))
                var issued: (String, String)?
                if isNew {
                    let token = try await services.tokens.issue(
                        role: .sender, subject: entry.domain, label: "registration", by: services.consoleActor(session))
                    issued = (token.secret, "registration")
                }
                return try await page(
                    session, domain: entry.domain, issued: issued,
                    notice: isNew ? "\(entry.domain) is registered (pending approval)" : "\(entry.domain) was registered already")
            } catch let error as AdmissionError {
                return try await page(
                    session, domain: nil, refusal: CodeView(code: error.code.description, at: "domain", hint: error.reason),
                    status: .unprocessableContent)
            }
        }

        // Admin: approve or revoke (POST /v1/domains/{domain}/approve|revoke).
        console.post("/domain/status") { request, _ in
            let session = try await frame.session(request, roles: [.admin])
            let form = try await frame.form(request, session, limit: 4096)
            let domain = form.text("domain") ?? ""
            guard let status = form.text("status").flatMap(RegisteredDomain.Status.init(rawValue:)), status != .pending
            else { throw ConsoleError(.badRequest, code: "request.invalid", message: "status must be approved or revoked") }
            do {
                let entry = try await registry.setStatus(domain, status, by: services.consoleActor(session))
                return try await page(session, domain: entry.domain, notice: "\(entry.domain) is \(entry.status.rawValue)")
            } catch let error as AdmissionError {
                return try await page(
                    session, domain: nil, refusal: CodeView(code: error.code.description, at: "domain", hint: error.reason),
                    status: error.code == .domainNotRegistered ? .notFound : .unprocessableContent)
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
