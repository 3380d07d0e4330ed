import Admission
import Foundation
import Hummingbird
import Ingestion
import Publishing
import Store

extension GatewayApplication {
    /// What an owner decides about their reservations and senders, what they may read of everything held about them,
    /// and erasure (issue 16). The owner's own token, or an admin's; another owner's token is refused.
    static func addOwnerRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let store = services.ingestor.environment.store

        struct SenderRequest: JSONRequestBody {
            var decision: SenderDecision
            enum CodingKeys: String, CodingKey, CaseIterable { case decision }
        }

        struct ProfileRequest: JSONRequestBody {
            var names: [String]?
            var suggestedInCalendar: OwnerProfile.SuggestedInCalendar?
            enum CodingKeys: String, CodingKey, CaseIterable { case names, suggestedInCalendar }
        }

        for decision in ConsentDecision.allCases {
            router.post("/v1/owners/{owner}/reservations/{id}/\(decision.rawValue)") { request, context in
                let owner = try await services.ownerPath(request, context)
                guard let id = Int64(try context.parameters.require("id")) else {
                    throw APIError.invalid("the id is a number (as /v1/reservations shows it)", at: "id")
                }
                guard let change = try await services.storeCall({ try await store.decide(decision, reservation: id, owner: owner) }),
                    let record = try await services.storeCall({ try await store.reservation(id: id) })
                else {
                    throw APIError.notFound("no reservation \(id) for this owner")
                }
                return try json(ConsentAnswer(reservation: ReservationView(record), change: change))
            }
        }

        router.get("/v1/owners/{owner}/senders") { request, context in
            let owner = try await services.ownerPath(request, context)
            return try json(try await services.storeCall { try await store.senderPreferences(owner: owner) })
        }

        router.put("/v1/owners/{owner}/senders/{domain}") { request, context in
            let owner = try await services.ownerPath(request, context)
            let name = try context.pathParameter("domain")
            let domain: DomainName
            do {
                domain = try DomainName(normalizing: name)
            } catch {
                throw APIError.invalid("\(error)", at: "domain")
            }
            let input = try await services.decode(SenderRequest.self, from: request)
            let result = try await services.storeCall {
                try await store.setSenderDecision(input.decision, domain: domain.ascii, owner: owner)
            }
            switch result {
            case .set(let preference):
                return try json(preference)
            case .refused(let code, let reason):
                throw APIError(
                    .conflict, code: code, message: reason,
                    hint: "POST /v1/owners/{owner}/reservations/{id}/accept for one of its reservations", at: "decision")
            }
        }

        router.get("/v1/owners/{owner}/profile") { request, context in
            let owner = try await services.ownerPath(request, context)
            let profile = try await services.storeCall { try await store.profile(owner: owner) }
            return try json(profile ?? OwnerProfile(owner: owner))
        }

        router.put("/v1/owners/{owner}/profile") { request, context in
            let owner = try await services.ownerPath(request, context)
            let input = try await services.decode(ProfileRequest.self, from: request)
            if let names = input.names, names.count > 32 || names.contains(where: { $0.utf8.count > 256 }) {
                throw APIError.invalid("names holds at most 32 names of at most 256 bytes each", at: "names")
            }
            let update = OwnerProfileUpdate(names: input.names, suggestedInCalendar: input.suggestedInCalendar)
            return try json(try await services.storeCall { try await store.updateProfile(update, owner: owner) })
        }

        router.get("/v1/owners/{owner}/export") { request, context in
            let owner = try await services.ownerPath(request, context)
            let records = try await services.storeCall { try await store.records(of: owner) }
            var headers: HTTPFields = [:]
            headers[.contentDisposition] = #"attachment; filename="gateway-export.json""#
            headers[.cacheControl] = "no-store"
            return try json(OwnerExport(records, exportedAt: services.ingestor.environment.now()), headers: headers)
        }

        router.delete("/v1/owners/{owner}") { request, context in
            let owner = try await services.ownerPath(request, context)
            let forgotten = try await services.storeCall { try await store.forget(owner) }
            // Its tokens are gone from the store: this node's cached copies go at once (other nodes', at their next
            // look at the tokens' generation).
            services.readCache?.invalidate(.tokens)
            return try json(forgotten)
        }
    }
}

/// What an accept or a decline answers: the reservation as it now is, what it was, and what the gateway learned.
struct ConsentAnswer: Encodable {
    var reservation: ReservationView
    /// The consent before the decision.
    var previous: Consent
    /// False when the reservation was already in that state (nothing changed, nothing published).
    var changed: Bool
    /// The booking's name, when accepting taught the gateway it is one of the owner's.
    var learnedName: String?

    init(reservation: ReservationView, change: ConsentChange) {
        self.reservation = reservation
        previous = change.previous
        changed = change.changed
        learnedName = change.learnedName
    }
}

extension GatewayServices {
    /// The owner a `/v1/owners/{owner}/...` path names, once the token may act for them: their own owner token, or an
    /// admin token.
    func ownerPath(_ request: Request, _ context: GatewayRequestContext) async throws -> OwnerAddress {
        let token = try await authenticate(request, needs: "this owner's token or an admin token")
        let owner = try GatewayServices.owner(try context.pathParameter("owner"), at: "owner")
        switch token.role {
        case .admin:
            return owner
        case .owner where token.subject == owner.address:
            return owner
        case .owner:
            throw APIError.forbidden("an owner token acts for its own owner only")
        case .sender, .app:
            throw APIError.forbidden("a sender or app token submits; an owner's decisions need the owner's token")
        }
    }
}
