import Admission
import Foundation
import Hummingbird
import Ingestion
import Publishing
import Store

extension GatewayApplication {
    /// The change feed (DESIGN.md, "Publishing changes"): every change in commit order after a cursor, long-polling
    /// up to `wait` seconds when there is none yet. An owner token reads its owner's changes, a sender token its
    /// domain's, the admin token every one (or one owner's or domain's, with `owner=` or `domain=`).
    static func addChangeRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let store = services.ingestor.environment.store

        struct ChangePage: Encodable {
            /// CloudEvents 1.0 events, oldest first.
            var changes: [ChangeMessage]
            /// Pass as `after` for the next page: the cursor of the last change, or the one given when there is none.
            var next: String
        }

        router.get("/v1/changes") { request, _ in
            let token = try await services.authenticate(request, needs: "an owner, sender or admin token")
            let query = request.uri.queryParameters
            let scope = try services.changeScope(
                for: token, owner: query["owner"].map { String($0) }, domain: query["domain"].map { String($0) })
            var cursor = ChangeCursor.start
            if let text = query["after"], !text.isEmpty {
                guard let given = ChangeCursor(String(text)) else {
                    throw APIError.invalid(
                        "after must be a cursor the feed handed out", at: "after",
                        hint: "pass the next or a change's cursor back unchanged; leave it out to start at the first change")
                }
                cursor = given
            }
            var limit = 100
            if let text = query["limit"] {
                guard let value = Int(text), (1...1000).contains(value) else {
                    throw APIError.invalid("limit must be from 1 to 1000", at: "limit")
                }
                limit = value
            }
            let maxWait = services.configuration.changesMaxWaitSeconds
            var wait = 0.0
            if let text = query["wait"] {
                guard let value = Double(text), value >= 0, value <= maxWait else {
                    throw APIError.invalid("wait must be a number of seconds from 0 to \(Int(maxWait))", at: "wait")
                }
                wait = value
            }
            let deadline = ContinuousClock.now + .milliseconds(Int64(wait * 1000))
            var changes: [ChangeEvent] = []
            while true {
                // Read the signal's generation before the query, so a commit in between is not slept through.
                let generation = store.changeSignal.generation
                changes = try await services.storeCall {
                    try await store.changes(after: cursor.position, scope: scope, limit: limit)
                }
                let remaining = deadline - .now
                guard changes.isEmpty, remaining > .zero, !services.lifecycle.isDraining, !Task.isCancelled else { break }
                // This node's commits wake the poll at once; other nodes' are seen within a second.
                await store.changeSignal.wait(after: generation, timeout: min(remaining, .seconds(1)))
            }
            let next = changes.last.map { ChangeCursor(position: $0.position) } ?? cursor
            return try json(ChangePage(changes: changes.map(ChangeMessage.init), next: next.description))
        }
    }
}

extension GatewayServices {
    /// Whose changes a token reads: an owner token its own, a sender token its domain's (and below), the admin token
    /// everyone's, or one owner's or domain's when it asks.
    func changeScope(for token: AccessToken, owner: String?, domain: String?) throws -> ChangeScope {
        guard owner == nil || domain == nil else {
            throw APIError.invalid("give owner or domain, not both", at: "domain")
        }
        switch token.role {
        case .admin:
            if let owner { return .owner(try GatewayServices.owner(owner, at: "owner")) }
            if let domain { return .domain(try Self.domain(domain, at: "domain")) }
            return .all
        case .owner:
            guard let own = OwnerAddress(token.subject), domain == nil,
                owner.map({ OwnerAddress($0) == own }) ?? true
            else {
                throw APIError.forbidden("an owner token reads its own owner's changes only")
            }
            return .owner(own)
        case .sender:
            guard owner == nil else { throw APIError.forbidden("a sender token reads its domain's changes only") }
            let own = DomainName(trustedASCII: token.subject)
            if let domain {
                guard let name = try? DomainName(normalizing: domain), name.isWithin(own) else {
                    throw APIError.forbidden("this sender token reads the changes of \(token.subject) and below only")
                }
                return .domain(name.ascii)
            }
            return .domain(own.ascii)
        }
    }

    /// A domain name from a request, normalized (IDNA, lower case), or 400 naming where it was.
    static func domain(_ text: String, at place: String) throws -> String {
        do {
            return try DomainName(normalizing: text).ascii
        } catch {
            throw APIError(.badRequest, code: error.code.description, message: error.reason, at: place)
        }
    }
}
