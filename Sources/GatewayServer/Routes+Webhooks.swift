import Foundation
import Hummingbird
import Ingestion
import Publishing
import Store
import WebFetch

extension GatewayApplication {
    /// Webhook subscriptions: the changes a token may read (its owner's, its domain's, or any for the admin token)
    /// delivered to an HTTPS URL as signed CloudEvents (``WebhookDispatcher``). Each token sees and manages the
    /// subscriptions within its own reach; another's answers 404.
    static func addWebhookRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let store = services.ingestor.environment.store

        struct NewWebhook: JSONRequestBody {
            var url: String
            var owner: String?
            var domain: String?
            var types: [String]?
            enum CodingKeys: String, CodingKey, CaseIterable { case url, owner, domain, types }
        }

        struct Subscribed: Encodable {
            var webhook: WebhookView
            /// The Standard Webhooks secret the deliveries are signed with: shown this once.
            var secret: String
        }

        router.post("/v1/webhooks") { request, _ in
            let token = try await services.authenticate(request, needs: "an owner, sender or admin token")
            let input = try await services.decode(NewWebhook.self, from: request)
            let url = try services.webhookURL(input.url)
            let scope = try services.changeScope(for: token, owner: input.owner, domain: input.domain)
            var types: [ChangeKind] = []
            for (index, name) in (input.types ?? []).enumerated() {
                guard let kind = ChangeKind(rawValue: name) else {
                    throw APIError.invalid(
                        "types[\(index)] is not a kind of change", at: "types[\(index)]",
                        hint: "the kinds are \(ChangeKind.known.map(\.rawValue).joined(separator: ", "))")
                }
                if !types.contains(kind) { types.append(kind) }
            }
            let secret = WebhookSecret.generate()
            var owner: OwnerAddress? = nil
            var domain: String? = nil
            switch scope {
            case .all: break
            case .owner(let scoped): owner = scoped
            case .domain(let scoped): domain = scoped
            }
            let hook = try await services.storeCall { [owner, domain, types] in
                try await store.addWebhook(
                    url: url.absoluteString, owner: owner, domain: domain, types: types, secret: secret.description,
                    by: services.actor(token))
            }
            return try json(Subscribed(webhook: WebhookView(hook), secret: secret.description), status: .created)
        }

        router.get("/v1/webhooks") { request, _ in
            let token = try await services.authenticate(request, needs: "an owner, sender or admin token")
            let hooks = try await services.storeCall { try await store.webhooks() }
            return try json(hooks.filter { services.reaches(token, $0) }.map(WebhookView.init))
        }

        router.delete("/v1/webhooks/{id}") { request, context in
            let token = try await services.authenticate(request, needs: "an owner, sender or admin token")
            let hook = try await services.webhook(try context.parameters.require("id"), for: token)
            guard try await services.storeCall({ try await store.removeWebhook(id: hook.id) }) else {
                throw APIError.notFound("no webhook \(hook.id)")
            }
            return Response(status: .noContent)
        }

        router.get("/v1/webhooks/{id}/deliveries") { request, context in
            let token = try await services.authenticate(request, needs: "an owner, sender or admin token")
            let hook = try await services.webhook(try context.parameters.require("id"), for: token)
            let state = try request.query("state", as: WebhookDelivery.State.self, expected: "pending, delivered or dead")
            var limit = 100
            if let text = request.uri.queryParameters["limit"] {
                guard let value = Int(text), (1...1000).contains(value) else {
                    throw APIError.invalid("limit must be from 1 to 1000", at: "limit")
                }
                limit = value
            }
            let deliveries = try await services.storeCall {
                try await store.deliveries(webhookID: hook.id, state: state, limit: limit)
            }
            return try json(deliveries.map(DeliveryView.init))
        }

        struct Replay: JSONRequestBody {
            /// Every change recorded at or after this time is queued again.
            var since: Date
            enum CodingKeys: String, CodingKey, CaseIterable { case since }
        }
        struct Replayed: Encodable { var queued: Int }

        router.post("/v1/webhooks/{id}/replay") { request, context in
            let token = try await services.authenticate(request, needs: "an owner, sender or admin token")
            let hook = try await services.webhook(try context.parameters.require("id"), for: token)
            let input = try await services.decode(Replay.self, from: request)
            let queued = try await services.storeCall {
                try await store.replayDeliveries(webhookID: hook.id, since: input.since)
            }
            guard let queued else { throw APIError.notFound("no webhook \(hook.id)") }
            return try json(Replayed(queued: queued), status: .accepted)
        }
    }
}

/// A subscription as the API shows it: never its secret.
struct WebhookView: Encodable {
    var id: Int64
    var url: String
    var owner: String?
    var domain: String?
    /// Empty: every kind.
    var types: [String]
    var createdAt: Date
    var createdBy: String

    init(_ hook: Webhook) {
        id = hook.id
        url = hook.url
        owner = hook.owner?.address
        domain = hook.domain
        types = hook.types.map(\.rawValue)
        createdAt = hook.createdAt
        createdBy = hook.createdBy
    }
}

/// A delivery as the API shows it.
struct DeliveryView: Encodable {
    var id: Int64
    var webhook: Int64
    /// The change's id in its CloudEvent (`webhook-id`), and its cursor in the feed.
    var change: String
    var cursor: String
    var reservation: Int64
    var state: String
    var attempts: Int
    var nextAttemptAt: Date?
    var createdAt: Date
    var updatedAt: Date
    var lastStatus: Int?
    var lastError: String?
    var firstAttemptAt: Date?

    init(_ delivery: WebhookDelivery) {
        id = delivery.id
        webhook = delivery.webhookID
        change = "change-\(delivery.position)"
        cursor = ChangeCursor(position: delivery.position).description
        reservation = delivery.reservationID
        state = delivery.state.rawValue
        attempts = delivery.attempts
        nextAttemptAt = delivery.state == .pending ? delivery.nextAttemptAt : nil
        createdAt = delivery.createdAt
        updatedAt = delivery.updatedAt
        lastStatus = delivery.lastStatus
        lastError = delivery.lastError
        firstAttemptAt = delivery.firstAttemptAt
    }
}

extension GatewayServices {
    /// A webhook URL checked as deliveries will be: HTTPS, no user information, and an address the policy allows
    /// where it is known without DNS; 422 with the fetcher's code otherwise.
    func webhookURL(_ text: String) throws -> URL {
        guard text.utf8.count <= 2048, let url = URL(string: text) else {
            throw APIError(
                .unprocessableContent, code: FetchError.Code.invalidURL.description,
                message: "url is not a URL of at most 2048 bytes", hint: "give an https:// URL", at: "url")
        }
        do {
            try webhookFetchConfiguration().checkTarget(url)
        } catch {
            throw APIError(.unprocessableContent, code: error.code.description, message: error.reason, at: "url")
        }
        return url
    }

    /// Whether `token` may see and manage `hook`: the admin token every one, an owner token its owner's, a sender
    /// token those of its domain and below.
    func reaches(_ token: AccessToken, _ hook: Webhook) -> Bool {
        switch token.role {
        case .admin: return true
        case .owner: return hook.owner.map { $0.address == token.subject } ?? false
        case .sender:
            guard let domain = hook.domain else { return false }
            return domain == token.subject || domain.hasSuffix("." + token.subject)
        }
    }

    /// Subscription `id` when `token` reaches it; 404 otherwise, as if it did not exist.
    func webhook(_ id: String, for token: AccessToken) async throws -> Webhook {
        guard let number = Int64(id) else { throw APIError.invalid("the id is a number", at: "id") }
        let store = ingestor.environment.store
        let hooks = try await storeCall { try await store.webhooks() }
        guard let hook = hooks.first(where: { $0.id == number }), reaches(token, hook) else {
            throw APIError.notFound("no webhook \(number) for this token")
        }
        return hook
    }
}
