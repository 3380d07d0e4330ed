import Admission
import Foundation
import Hummingbird
import Ingestion
import Publishing
import Reservations
import Store

extension GatewayApplication {
    /// App donations (issue 17) and an owner's suggestions.
    static func addDonationRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let ingestor = services.ingestor
        let store = ingestor.environment.store
        let maxBytes = ingestor.environment.policy.limits.maxMessageBytes

        // An app token donates as its app; an admin may donate on an app's behalf (`?app=`), which proves nothing about
        // the app: admitted only under allow-unverified-sources.
        router.post("/v1/donations") { request, _ in
            try services.refuseWhileDraining()
            let token = try await services.authenticate(request, needs: "an app token (or an admin token with ?app=)")
            let query = request.uri.queryParameters
            let app: String
            let verified: Bool
            switch token.role {
            case .app:
                if let named = query["app"].map({ String($0) }), named != token.subject {
                    throw APIError.forbidden(
                        "this app token is \(token.subject)'s; it does not donate for \(named.prefix(100))",
                        hint: "use the token issued for \(named.prefix(100))")
                }
                app = token.subject
                verified = true
            case .admin:
                guard let named = query["app"].map({ String($0) }), !named.isEmpty else {
                    throw APIError.invalid("an admin donating names the app: ?app=APP-ID", at: "app")
                }
                app = named
                verified = false
            case .sender, .owner:
                throw APIError.forbidden("donations need the app's token", hint: "gateway tokens issue app APP-ID")
            }
            let given = query[values: "owner"]
            guard !given.isEmpty else {
                throw APIError.invalid("add ?owner=ADDRESS: a donation is for the owner of the device", at: "owner")
            }
            guard given.count <= 16 else { throw APIError.invalid("at most 16 owner parameters", at: "owner") }
            let owners = try given.map { try GatewayServices.owner(String($0), at: "owner") }
            let bytes = try await services.body(of: request, limit: maxBytes)
            let binding = try await services.storeCall { try await store.registration(ofApp: app) }
            if let binding,
                let refusal = try await services.storeCall({
                    try await services.chargeIntake(
                        domain: binding.domain, owners: owners, bytes: bytes.count, channel: "app")
                })
            {
                throw APIError.overQuota(refusal)
            }
            let report = try await services.ingest(channel: "app") {
                try await ingestor.ingestDonation(bytes, app: app, verified: verified, owners: owners)
            }
            guard let report else { throw APIError.busy(retryAfter: services.configuration.retryAfterSeconds) }
            await services.countWritten(report, domain: binding?.domain)
            let status: HTTPResponse.Status =
                report.codes.contains("app.identifier-mismatch")
                ? .forbidden
                : report.verdict == .rejected ? .unprocessableContent : .ok
            return try json(report, status: status)
        }

        router.get("/v1/owners/{owner}/suggestions") { request, context in
            let token = try await services.authenticate(request, needs: "this owner's token or an admin token")
            let requested = try context.pathParameter("owner")
            guard let owner = OwnerAddress(requested),
                token.role == .admin || (token.role == .owner && token.subject == owner.address)
            else {
                throw APIError.forbidden("this token does not read \(requested.prefix(80))'s suggestions")
            }
            let query = request.uri.queryParameters
            var instant = Date()
            if let at = query["at"].map({ String($0) }) {
                guard let parsed = ReservationAction.instant(at) else {
                    throw APIError.invalid(
                        "at is an ISO 8601 date-time with an offset (2027-03-04T08:00:00Z)", at: "at")
                }
                instant = parsed
            }
            var horizon = Suggestion.defaultHorizon
            if let hours = query["hours"].map({ String($0) }) {
                guard let value = Double(hours), value > 0, value <= 72 else {
                    throw APIError.invalid("hours is a number from 0 to 72", at: "hours")
                }
                horizon = value * 3600
            }
            let records = try await services.storeCall { try await store.list(owner: owner) }
            return try json(Suggestion.suggestions(for: records, at: instant, horizon: horizon))
        }
    }
}
