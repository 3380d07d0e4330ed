import DKIM
import Foundation
import Hummingbird
import Ingestion
import NIOCore
import Publishing
import Store

extension GatewayApplication {
    /// Reading reservations (an owner token: its own only; admin: anyone's) and the per-owner calendar feed.
    ///
    /// A record of another owner answers 404, the same as one that does not exist: no endpoint tells one owner
    /// what another has.
    static func addReservationRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let store = services.ingestor.environment.store

        router.get("/v1/reservations") { request, _ in
            let token = try await services.authenticate(request, needs: "an owner token or an admin token")
            let owner = try services.owner(for: token, requested: request.uri.queryParameters["owner"].map { String($0) })
            let records = try await services.storeCall {
                if let owner { return try await store.list(owner: owner) }
                return try await store.listAll(limit: 10_000)
            }
            return try json(records.map(ReservationView.init))
        }

        router.get("/v1/reservations/lookup") { request, _ in
            let token = try await services.authenticate(request, needs: "an owner token or an admin token")
            let query = request.uri.queryParameters
            guard let reference = query["reference"].map({ String($0) }), !reference.isEmpty else {
                throw APIError.invalid("reference (the reservation number) is required", at: "reference")
            }
            guard let owner = try services.owner(for: token, requested: query["owner"].map { String($0) }) else {
                throw APIError.invalid(
                    "add ?owner=ADDRESS: an admin token reads every owner's reservations, so the lookup must name whose",
                    at: "owner", hint: "GET /v1/reservations/lookup?reference=R&owner=eva@guest.example.net")
            }
            let items = query[values: "item"].map { String($0) }
            let domain = query["domain"].map { String($0).lowercased() }
            let found = try await services.storeCall {
                try await store.lookup(containerReference: reference, itemReferences: items, owner: owner, sourceDomain: domain)
            }
            guard !found.isEmpty else { throw APIError.notFound("no reservation \(reference.prefix(64)) for this owner") }
            return try json(found.map(ReservationView.init))
        }

        router.get("/v1/reservations/{id}") { request, context in
            let token = try await services.authenticate(request, needs: "an owner token or an admin token")
            guard let id = Int64(try context.parameters.require("id")) else {
                throw APIError.invalid("the id is a number", at: "id")
            }
            let record = try await services.storeCall { try await store.reservation(id: id) }
            guard let record, token.role == .admin || (token.role == .owner && token.subject == record.owner.address) else {
                throw APIError.notFound("no reservation \(id) for this token")
            }
            let history = try await services.storeCall { try await store.history(of: id) }
            return try json(ReservationView(record, history: history))
        }

        // Calendar clients cannot always send headers: the token may come as ?token=.
        router.get("/calendars/{owner}.ics") { request, context in
            let token = try await services.authenticate(
                request, needs: "this owner's token (Authorization: Bearer, or ?token=)", allowQuery: true)
            let requested = try context.pathParameter("owner")
            guard let owner = OwnerAddress(requested),
                token.role == .admin || (token.role == .owner && token.subject == owner.address)
            else {
                throw APIError.forbidden("this token does not read \(requested.prefix(80))'s calendar")
            }
            let (records, profile) = try await services.storeCall {
                (try await store.list(owner: owner), try await store.profile(owner: owner))
            }
            let body = Array(
                CalendarFeed.render(
                    records,
                    options: .init(
                        refreshInterval: Double(services.configuration.calendarRefreshSeconds),
                        name: "Reservations of \(owner.address)", suggested: profile?.suggestedInCalendar ?? .tentative)
                ).utf8)
            let etag = "\"\(ContentHash.sha256Hex(body).prefix(32))\""
            var headers: HTTPFields = [
                .eTag: etag, .cacheControl: "private, max-age=\(services.configuration.calendarMaxAgeSeconds)",
            ]
            if let latest = records.map(\.lastChangedAt).max() {
                headers[.lastModified] = httpDate(latest)
            }
            // Weak comparison (RFC 9110 §13.1.2): a proxy that compresses may have weakened the tag.
            if let match = request.headers[.ifNoneMatch],
                match.split(separator: ",").contains(where: {
                    let tag = $0.trimmingCharacters(in: .whitespaces)
                    return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
                })
            {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentType] = "text/calendar; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}

extension GatewayServices {
    /// Whose records a token reads: an owner token, its own (asking for another's is refused); an admin, the one
    /// asked for (nil: everyone).
    func owner(for token: AccessToken, requested: String?) throws -> OwnerAddress? {
        let asked = try requested.map { try GatewayServices.owner($0, at: "owner") }
        switch token.role {
        case .owner:
            guard let own = OwnerAddress(token.subject), asked == nil || asked == own else {
                throw APIError.forbidden("an owner token reads its own reservations only")
            }
            return own
        case .admin:
            return asked
        case .sender:
            throw APIError.forbidden("a sender token submits; reading reservations needs the owner's token")
        }
    }
}

/// An HTTP date (RFC 9110 §5.6.7, IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`.
func httpDate(_ date: Date) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
    return "\(days[((parts.weekday ?? 1) - 1) % 7]), \(two(parts.day)) \(months[((parts.month ?? 1) - 1) % 12]) "
        + "\(parts.year ?? 1970) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
}
