import Admission
import Foundation
import Hummingbird
import Ingestion
import Store

extension GatewayApplication {
    /// The decision log: the sender's entries (an admin's: everyone's) newest first, filtered as `GET /v1/log`
    /// filters (the same query and scope, ``GatewayServices/logQuery(for:_:)``), paged back by entry id; each entry
    /// opens in full; `console.js` adds new entries while the first page is open.
    static func addLogRoutes(to console: RouterGroup<GatewayRequestContext>, _ frame: ConsoleFrame) {
        let services = frame.services
        let store = services.ingestor.environment.store
        let pageSize = 50

        struct Log {
            var filters: LogFilterView
            var entries: [ConsoleLogEntry]
            /// The newest id shown, for the live updates (nil when paging back: older pages stay as they are).
            var liveAfter: Int64?
            var olderHref: String?
            var newestHref: String?
            var refusal: CodeView?
        }

        /// The query of the page's filters. `since`/`until` come from `datetime-local` fields (read as UTC) or as ISO
        /// 8601.
        @Sendable func logQuery(_ request: Request, _ session: ConsoleSession) throws -> (DecisionLogQuery, since: String, until: String) {
            var parameters = Parameters()
            var since = ""
            var until = ""
            for (key, value) in request.uri.queryParameters where !value.isEmpty {
                switch key {
                case "since", "until":
                    let text = String(value)
                    if key == "since" { since = text } else { until = text }
                    parameters[key] = Substring(Self.isoTime(text))
                case "channel", "verdict", "code", "before", "after":
                    parameters[key] = value
                default: continue
                }
            }
            parameters["limit"] = Substring(String(pageSize))
            return (try services.logQuery(for: session.token, parameters), since, until)
        }

        console.get("/log") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .sender], proved: true)
            let (query, since, until): (DecisionLogQuery, String, String)
            do {
                (query, since, until) = try logQuery(request, session)
            } catch let error as APIError {
                let empty = Log(
                    filters: LogFilterView(DecisionLogQuery(), since: "", until: ""), entries: [],
                    refusal: CodeView(code: error.code, at: error.at, hint: error.message))
                return frame.page("log", "Decision log", session, current: "/console/log", empty, status: error.status)
            }
            let found = try await services.storeCall { try await store.entries(matching: query) }
            let entries = try await services.readable(found, for: session.token)
            let filters = LogFilterView(query, since: since, until: until)
            let separator = filters.query.isEmpty ? "" : "&"
            // The cursors come from what the query found, also when a sender may read none of it.
            let log = Log(
                filters: filters, entries: entries.map(ConsoleLogEntry.init),
                liveAfter: query.beforeID == nil ? (found.first?.id ?? 0) : nil,
                olderHref: found.count == pageSize
                    ? "/console/log?\(filters.query)\(separator)before=\(found.last?.id ?? 0)" : nil,
                newestHref: query.beforeID == nil ? nil : "/console/log?\(filters.query)")
            return frame.page("log", "Decision log", session, current: "/console/log", log)
        }

        // New entries after `after`, newest first, as table rows: what console.js inserts above the first row.
        console.get("/log/updates") { request, _ in
            let session = try await frame.session(request, roles: [.admin, .sender], proved: true)
            let (query, _, _) = try logQuery(request, session)
            guard query.afterID != nil else { throw APIError.invalid("after is required", at: "after") }
            let found = try await services.storeCall { try await store.entries(matching: query) }
            let entries = try await services.readable(found, for: session.token)
            struct Rows { var entries: [ConsoleLogEntry] }
            return frame.templates.page("log-rows", Rows(entries: entries.reversed().map(ConsoleLogEntry.init)))
        }

        console.get("/log/{id}") { request, context in
            let session = try await frame.session(request, roles: [.admin, .sender], proved: true)
            guard let id = Int64(try context.parameters.require("id")) else {
                throw ConsoleError(.badRequest, code: "request.invalid", message: "the entry id is a number")
            }
            let entry = try await services.storeCall { try await store.entry(id: id) }
            // A sender reads its own registration's entries only; another's is "not found", as the API answers.
            guard let entry, let readable = try await services.readable([entry], for: session.token).first else {
                throw ConsoleError(.notFound, code: "request.not-found", message: "no decision log entry \(id) for this token")
            }
            return frame.page("log-entry", "Decision #\(id)", session, current: "/console/log", ConsoleLogEntry(readable))
        }
    }

    /// A `datetime-local` value (`2026-11-21T10:00`) as ISO 8601 in UTC; anything else as given.
    static func isoTime(_ text: String) -> String {
        let isLocal = text.count == 16 && text.dropFirst(10).first == "T" && !text.hasSuffix("Z")
        return isLocal ? text + ":00Z" : text
    }
}
