import Foundation
import Hummingbird
import Ingestion
import Reservations
import Store

extension GatewayApplication {
    /// The owner page: the owner's reservations still to come, soonest first, each as its card with its status,
    /// then those past; and the calendar subscription address (`/calendars/{owner}.ics`). An owner token sees its
    /// own; an admin names the owner (as `GET /v1/reservations?owner=` does).
    static func addOwnerRoutes(to console: RouterGroup<GatewayRequestContext>, _ frame: ConsoleFrame) {
        let services = frame.services
        let store = services.ingestor.environment.store

        struct Owner {
            struct Entry {
                var id: Int64
                var card: CardView
                var sourceDomain: String
                var version: Int
                var updated: String
                var flags: String?
                /// The owner's consent (issue 16): suggested, accepted or declined, and why.
                var consent: String
                var consentClass: String
                var consentReason: String
                /// Suggested: the page offers Accept and Decline.
                var undecided: Bool
            }
            var isAdmin: Bool
            var owner: String?
            var upcoming: [Entry]
            var past: [Entry]
            var calendarURL: String?
            var webcalURL: String?
            var notice: String?
        }

        @Sendable func page(_ request: Request, _ session: ConsoleSession, requested: String?, notice: String?) async throws
            -> Response
        {
            let owner: OwnerAddress?
            do {
                let asked = try services.owner(for: session.token, requested: requested)
                owner = asked
            } catch let error as APIError {
                throw ConsoleError(error)
            }
            var content = Owner(isAdmin: session.token.role == .admin, owner: owner?.address, upcoming: [], past: [])
            if let owner {
                let records = try await services.storeCall { try await store.list(owner: owner) }
                let now = services.ingestor.environment.now()
                var upcoming: [(Date, Owner.Entry)] = []
                var past: [(Date, Owner.Entry)] = []
                for record in records {
                    guard let payload = StoredPayload(stored: record.payload) else { continue }
                    var card = ReservationCard(payload.reservation, normalized: payload.markup)
                    card.status = record.status.rawValue  // the record's lifecycle state, not the markup's
                    let consent = record.consent
                    let entry = Owner.Entry(
                        id: record.id, card: CardView(card), sourceDomain: record.sourceDomain, version: record.version,
                        updated: ConsoleFormat.time(record.updatedAt),
                        flags: record.flags.isEmpty ? nil : record.flags.joined(separator: ", "),
                        consent: consent.state.rawValue,
                        consentClass: consent.state == .accepted ? "good" : consent.state == .declined ? "bad" : "warn",
                        consentReason: consent.reason.rawValue, undecided: consent.state == .suggested)
                    // An item without an end is current for a day after it starts (a table, a show).
                    let start = payload.reservation.startTime?.instant ?? record.createdAt
                    let end = payload.reservation.endTime?.instant ?? start.addingTimeInterval(86_400)
                    if end >= now { upcoming.append((start, entry)) } else { past.append((start, entry)) }
                }
                content.upcoming = upcoming.sorted { $0.0 < $1.0 }.map(\.1)
                content.past = past.sorted { $0.0 > $1.0 }.map(\.1)
                let host = request.head.authority ?? "127.0.0.1"
                let path = "/calendars/\(owner.address.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(.init(charactersIn: "@/"))) ?? owner.address).ics?token=YOUR-OWNER-TOKEN"
                content.calendarURL = (services.configuration.tls == nil ? "http://" : "https://") + host + path
                content.webcalURL = "webcal://" + host + path
            }
            content.notice = notice
            return frame.page("owner", "Reservations", session, current: "/console/owner", content)
        }

        console.get("/owner") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .owner])
            let requested = request.uri.queryParameters["owner"].map { String($0) }.flatMap { $0.isEmpty ? nil : $0 }
            return try await page(request, session, requested: requested, notice: nil)
        }

        // Accept or decline a suggested reservation (POST /v1/owners/{owner}/reservations/{id}/accept|decline).
        console.post("/owner/consent") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .owner])
            let form = try await frame.form(request, session, limit: 4096)
            guard let decision = form.text("decision").flatMap(ConsentDecision.init(rawValue:)) else {
                throw ConsoleError(.badRequest, code: "request.invalid", message: "decision must be accept or decline")
            }
            guard let id = form.text("id").flatMap({ Int64($0) }) else {
                throw ConsoleError(.badRequest, code: "request.invalid", message: "the reservation id is a number")
            }
            let requested = form.text("owner").flatMap { $0.isEmpty ? nil : $0 }
            let owner: OwnerAddress
            do {
                guard let named = try services.owner(for: session.token, requested: requested) else {
                    throw APIError.invalid("name the owner", at: "owner")
                }
                owner = named
            } catch let error as APIError {
                throw ConsoleError(error)
            }
            guard let change = try await services.storeCall({ try await store.decide(decision, reservation: id, owner: owner) })
            else {
                throw ConsoleError(.notFound, code: "request.not-found", message: "no reservation \(id) for this owner")
            }
            return try await page(
                request, session, requested: owner.address,
                notice: "reservation \(id) is \(change.current.state.rawValue)")
        }
    }
}
