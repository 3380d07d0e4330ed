import Admission
import Foundation
import Hummingbird
import Ingestion
import Store

extension GatewayApplication {
    /// The developer flags (read: admin or sender; set: admin) and the decision log (admin: everything; a sender:
    /// its own domain and below).
    static func addFlagAndLogRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let flags = services.ingestor.flags

        router.get("/v1/flags") { request, _ in
            let token = try await services.authenticate(request, needs: "a token")
            guard token.role != .owner else { throw APIError.forbidden("an owner token cannot read the flags") }
            return try json(try await services.storeCall { try await flags.statuses() })
        }

        struct FlagChange: JSONRequestBody {
            var enabled: Bool
            /// How long it stays on, in seconds (default: the policy's).
            var durationSeconds: Double?
            enum CodingKeys: String, CodingKey, CaseIterable { case enabled, durationSeconds }
        }
        router.put("/v1/flags/{name}") { request, context in
            let admin = try await services.requireAdmin(request)
            let name = try context.pathParameter("name")
            guard let flag = DeveloperFlag(rawValue: name) else {
                throw APIError(
                    .notFound, code: AdmissionError.Code.unknownFlag.description,
                    message: "unknown flag '\(name.prefix(64))'; the flags are allow-any-domain and allow-unverified-sources",
                    at: "name")
            }
            let change = try await services.decode(FlagChange.self, from: request)
            do {
                _ = try await flags.set(flag, enabled: change.enabled, for: change.durationSeconds, by: services.actor(admin))
            } catch let error as AdmissionError {
                let outOfRange = error.code == .flagDurationOutOfRange
                throw APIError(
                    outOfRange ? .unprocessableContent : .conflict, code: error.code.description, message: error.reason,
                    at: outOfRange ? "durationSeconds" : "enabled")
            } catch {
                throw APIError.unavailable(error)
            }
            let statuses = try await services.storeCall { try await flags.statuses() }
            return try json(statuses.first { $0.name == flag.rawValue })
        }

        struct LogPage: Encodable {
            var entries: [DecisionLogEntry]
            /// Pass as `after` for the next page (also when following new entries).
            var nextAfter: Int64?
        }
        router.get("/v1/log") { request, _ in
            let token = try await services.authenticate(request, needs: "an admin token or a sender token")
            let query = request.uri.queryParameters
            var domain = query["domain"].map { String($0) }
            switch token.role {
            case .admin: break
            case .owner: throw APIError.forbidden("an owner token cannot read the decision log")
            case .sender:
                let own = DomainName(trustedASCII: token.subject)
                if let requested = domain {
                    guard let name = try? DomainName(normalizing: requested), name.isWithin(own) else {
                        throw APIError.forbidden("this sender token reads the log of \(token.subject) only")
                    }
                    domain = name.ascii
                } else {
                    domain = own.ascii
                }
            }
            var since: Date?
            if let text = query["since"] {
                guard let date = try? Date(String(text), strategy: .iso8601) else {
                    throw APIError.invalid("since must be an ISO 8601 time such as 2026-11-21T10:00:00Z", at: "since")
                }
                since = date
            }
            var after: Int64?
            if let text = query["after"] {
                guard let value = Int64(text), value >= 0 else { throw APIError.invalid("after must be an entry id", at: "after") }
                after = value
            }
            var limit = 100
            if let text = query["limit"] {
                guard let value = Int(text), (1...1000).contains(value) else {
                    throw APIError.invalid("limit must be from 1 to 1000", at: "limit")
                }
                limit = value
            }
            let store = services.ingestor.environment.store
            let entries = try await services.storeCall {
                try await store.entries(domain: domain, since: since, afterID: after, limit: limit)
            }
            return try json(LogPage(entries: entries, nextAfter: entries.last?.id ?? after))
        }
    }
}
