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
            var entries: [LogEntryView]
            /// Pass as `after` for the next page (also when following new entries).
            var nextAfter: Int64?
            /// Pass as `before` for the page of older entries; nil when this page reached the oldest.
            var nextBefore: Int64?
        }
        router.get("/v1/log") { request, _ in
            let token = try await services.authenticate(request, needs: "an admin token or a sender token")
            try await services.requireProof(token)
            let query = try services.logQuery(for: token, request.uri.queryParameters)
            let store = services.ingestor.environment.store
            let found = try await services.storeCall { try await store.entries(matching: query) }
            let readable = try await services.readable(found, for: token)
            // Newest last, as `tail` prints: a page read back (not following) comes newest first from the store.
            // The cursors come from what the query found, also when a sender may read none of it.
            let entries = query.afterID == nil ? readable.reversed() : readable
            let olderExist = query.afterID == nil && found.count == query.limit
            return try json(
                LogPage(
                    entries: entries, nextAfter: (query.afterID == nil ? found.first?.id : found.last?.id) ?? query.afterID,
                    nextBefore: olderExist ? found.last?.id : nil))
        }
    }
}

/// A decision log entry as the API shows it: as stored for an admin; for a sender, each owner address replaced by its
/// pseudonym (``OwnerPseudonym``).
struct LogEntryView: Encodable {
    var entry: DecisionLogEntry
    var owner: @Sendable (OwnerAddress) -> String

    init(_ entry: DecisionLogEntry, owner: @escaping @Sendable (OwnerAddress) -> String = { $0.address }) {
        self.entry = entry
        self.owner = owner
    }

    private enum Keys: String, CodingKey {
        case id, time, channel, sourceDomain, source, owners, contentHash, verdict, codes, flags, reservations
        case itemReference, owner, outcome
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(entry.id, forKey: .id)
        try container.encode(entry.time, forKey: .time)
        try container.encode(entry.channel, forKey: .channel)
        try container.encodeIfPresent(entry.sourceDomain, forKey: .sourceDomain)
        try container.encodeIfPresent(entry.source, forKey: .source)
        try container.encode(entry.owners.map(owner), forKey: .owners)
        try container.encode(entry.contentHash, forKey: .contentHash)
        try container.encode(entry.verdict, forKey: .verdict)
        try container.encode(entry.codes, forKey: .codes)
        try container.encode(entry.flags, forKey: .flags)
        var outcomes = container.nestedUnkeyedContainer(forKey: .reservations)
        for record in entry.reservations {
            var item = outcomes.nestedContainer(keyedBy: Keys.self)
            try item.encode(record.itemReference, forKey: .itemReference)
            try item.encodeIfPresent(record.owner.map(owner), forKey: .owner)
            try item.encodeIfPresent(record.outcome, forKey: .outcome)
            try item.encode(record.codes, forKey: .codes)
        }
    }
}

extension GatewayServices {
    /// The decision log query a request's parameters ask for, within what `token` may read: an admin reads
    /// everything, a sender its own domain and below, an owner nothing. The API's `GET /v1/log` and the console's log
    /// page both read the log through it.
    /// - Parameters: `domain`, `channel`, `verdict`, `code`, `since` and `until` (ISO 8601), `before` and `after`
    ///   (entry ids), `limit` (1 to 1000, default 100).
    /// - Throws: 403 for an owner token or another domain, 400 `request.invalid` naming the parameter.
    func logQuery(for token: AccessToken, _ parameters: Parameters) throws -> DecisionLogQuery {
        var query = DecisionLogQuery()
        query.domain = parameters["domain"].map { String($0) }
        switch token.role {
        case .admin: break
        case .owner: throw APIError.forbidden("an owner token cannot read the decision log")
        case .app: throw APIError.forbidden("an app token donates; the decision log needs its domain's sender token")
        case .sender:
            let own = DomainName(trustedASCII: token.subject)
            if let requested = query.domain {
                guard let name = try? DomainName(normalizing: requested), name.isWithin(own) else {
                    throw APIError.forbidden("this sender token reads the log of \(token.subject) only")
                }
                query.domain = name.ascii
            } else {
                query.domain = own.ascii
            }
        }
        if let text = parameters["channel"] {
            guard let channel = IngestionChannel(rawValue: String(text)) else {
                throw APIError.invalid(
                    "channel must be one of \(IngestionChannel.allCases.map(\.rawValue).joined(separator: ", "))", at: "channel")
            }
            query.channel = channel
        }
        if let text = parameters["verdict"] {
            guard let verdict = DecisionLogEntry.Verdict(rawValue: String(text)) else {
                throw APIError.invalid(
                    "verdict must be one of \(DecisionLogEntry.Verdict.allCases.map(\.rawValue).joined(separator: ", "))",
                    at: "verdict")
            }
            query.verdict = verdict
        }
        if let text = parameters["code"] {
            guard !text.isEmpty, text.utf8.count <= 100 else {
                throw APIError.invalid("code must be a code such as dkim.body-hash-mismatch", at: "code")
            }
            query.code = String(text)
        }
        for name in ["since", "until"] {
            guard let text = parameters[Substring(name)] else { continue }
            guard let date = try? Date(String(text), strategy: .iso8601) else {
                throw APIError.invalid("\(name) must be an ISO 8601 time such as 2026-11-21T10:00:00Z", at: name)
            }
            if name == "since" { query.since = date } else { query.until = date }
        }
        for name in ["after", "before"] {
            guard let text = parameters[Substring(name)] else { continue }
            guard let value = Int64(text), value >= 0 else { throw APIError.invalid("\(name) must be an entry id", at: name) }
            if name == "after" { query.afterID = value } else { query.beforeID = value }
        }
        query.limit = 100
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...1000).contains(value) else {
                throw APIError.invalid("limit must be from 1 to 1000", at: "limit")
            }
            query.limit = value
        }
        return query
    }
}

extension GatewayServices {
    /// What `token` may read of `entries`, in their order: all of them as stored for an admin; for a sender, the
    /// entries its own registration covers — not those of another registration below it — with each owner reduced to
    /// a keyed pseudonym (``OwnerPseudonym``). The API's `GET /v1/log` and the console's log pages show entries
    /// through it.
    func readable(_ entries: [DecisionLogEntry], for token: AccessToken) async throws -> [LogEntryView] {
        guard token.role == .sender else { return entries.map { LogEntryView($0) } }
        let pseudonyms = try await storeCall { try await self.pseudonyms() }
        let registry = ingestor.registry
        var covering: [String: String?] = [:]
        var own: [DecisionLogEntry] = []
        var owners: Set<OwnerAddress> = []
        for entry in entries {
            guard let source = entry.sourceDomain else { continue }
            if covering[source] == nil {
                let registration = try await storeCall {
                    try await registry.entry(covering: DomainName(trustedASCII: source))
                }
                covering[source] = .some(registration?.domain)
            }
            guard case .some(.some(let registered)) = covering[source], registered == token.subject else { continue }
            own.append(entry)
            owners.formUnion(entry.owners)
            owners.formUnion(entry.reservations.compactMap(\.owner))
        }
        // Each owner's pseudonym once per page (a page of one owner's mail names the same owner 50 times).
        let named = Dictionary(
            uniqueKeysWithValues: owners.map { ($0, pseudonyms.pseudonym(of: $0, forDomain: token.subject)) })
        return own.map { LogEntryView($0) { named[$0] ?? pseudonyms.pseudonym(of: $0, forDomain: token.subject) } }
    }
}
