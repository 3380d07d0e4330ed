import Admission
import Foundation
import Hummingbird
import Ingestion
import Store

extension GatewayApplication {
    /// Issuing, listing and revoking tokens (admin).
    static func addTokenRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        struct TokenRequest: JSONRequestBody {
            var role: AccessToken.Role
            /// A registered domain for a sender token, an address for an owner token, empty for admin.
            var subject: String?
            var label: String?
            enum CodingKeys: String, CodingKey, CaseIterable { case role, subject, label }
        }

        router.post("/v1/tokens") { request, _ in
            let admin = try await services.requireAdmin(request)
            let input = try await services.decode(TokenRequest.self, from: request)
            let subject = try await services.tokenSubject(role: input.role, subject: input.subject ?? "")
            let label = String((input.label ?? "").prefix(200))
            let issued = try await services.storeCall {
                try await services.tokens.issue(role: input.role, subject: subject, label: label, by: services.actor(admin))
            }
            return try json(IssuedToken(issued.token, secret: issued.secret), status: .created)
        }

        router.get("/v1/tokens") { request, _ in
            _ = try await services.requireAdmin(request)
            let role = try request.query("role", as: AccessToken.Role.self, expected: "admin, sender or owner")
            let store = services.tokens.store
            return try json(try await services.storeCall { try await store.tokens(role: role) })
        }

        router.delete("/v1/tokens/{id}") { request, context in
            let admin = try await services.requireAdmin(request)
            guard let id = Int64(try context.parameters.require("id")) else {
                throw APIError.invalid("the id is a number", at: "id")
            }
            if id == admin.id, try await services.storeCall({ try await services.tokens.store.tokens(role: .admin) })
                .filter({ $0.revokedAt == nil && $0.consoleSessionParent == nil }).count <= 1
            {
                throw APIError(
                    .conflict, code: "auth.last-admin-token", message: "this is the last admin token",
                    hint: "issue another admin token first")
            }
            let store = services.tokens.store
            guard try await services.storeCall({ try await store.revokeToken(id: id) }) else {
                throw APIError.notFound("no unrevoked token \(id)")
            }
            return Response(status: .noContent)
        }
    }
}

extension GatewayServices {
    /// The normalized subject a new token of `role` speaks for.
    func tokenSubject(role: AccessToken.Role, subject: String) async throws -> String {
        do {
            return try await tokens.subject(for: role, subject)
        } catch let error as TokenError {
            let unregistered = error.code == AdmissionError.Code.domainNotRegistered.description
            throw APIError(
                unregistered ? .unprocessableContent : .badRequest, code: error.code, message: error.reason,
                hint: unregistered ? "POST /v1/domains first" : nil, at: "subject")
        } catch {
            throw APIError.unavailable(error)
        }
    }
}
