import Admission
import Foundation
import Ingestion
import Reservations
import Store

// The view models the console's templates render. Each is built from the API's own types (the dry-run report, a
// decision log entry, a registration, a stored reservation's card), so a page shows what the API returns and a new
// field in a record is one view property away from its page section. Every string is escaped by the templates.

/// What every page's frame (templates/layout) shows.
struct ConsolePage<Content> {
    struct User {
        var role: String
        var subject: String
        var expires: String
        var formToken: String
    }
    struct Link {
        var href: String
        var label: String
        var current: Bool
    }

    var title: String
    var user: User?
    var nav: [Link]
    var content: Content

    init(_ title: String, session: ConsoleSession?, current: String, content: Content) {
        self.title = title
        self.content = content
        guard let session else {
            user = nil
            nav = []
            return
        }
        let token = session.token
        user = User(
            role: token.role.rawValue, subject: token.subject.isEmpty ? "every domain and owner" : token.subject,
            expires: ConsoleFormat.time(session.expiresAt), formToken: session.formToken)
        let links: [(String, String)] =
            switch token.role {
            case .admin:
                [("/console/tester", "Tester"), ("/console/domain", "Domains"), ("/console/log", "Log"),
                 ("/console/owner", "Owners")]
            case .sender: [("/console/tester", "Tester"), ("/console/domain", "Domain"), ("/console/log", "Log")]
            case .owner: [("/console/owner", "Reservations")]
            case .app: []  // no session is started for an app token
            }
        nav = links.map { Link(href: $0.0, label: $0.1, current: $0.0 == current) }
    }
}

/// A refusal shown on a page: its code, where, what to do.
struct CodeView {
    var code: String
    var at: String?
    var hint: String?
}

enum ConsoleFormat {
    /// `2026-11-21 10:00:00 UTC`.
    static func time(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(timeSeparator: .colon, timeZone: .gmt).year().month().day().dateSeparator(.dash)
                .time(includingFractionalSeconds: false).dateTimeSeparator(.space)) + " UTC"
    }

    /// `1 hour`, `24 hours`, `30 minutes`, `45 seconds`: a quota's window.
    static func duration(_ seconds: Int64) -> String {
        func plural(_ count: Int64, _ unit: String) -> String { "\(count) \(unit)\(count == 1 ? "" : "s")" }
        if seconds % 86_400 == 0 { return plural(seconds / 86_400, "day") }
        if seconds % 3600 == 0 { return plural(seconds / 3600, "hour") }
        if seconds % 60 == 0 { return plural(seconds / 60, "minute") }
        return plural(seconds, "second")
    }

    /// The verdict's CSS class and the word shown.
    static func verdictClass(_ verdict: DecisionLogEntry.Verdict) -> String {
        switch verdict {
        case .admitted: "good"
        case .partial, .deferred: "warn"
        case .rejected: "bad"
        }
    }
}

// MARK: - The tester

/// A dry-run report, as the tester shows it.
struct ReportView {
    struct Signature {
        var domain: String
        var selector: String
        var algorithm: String
        var keyBits: String
        var result: String
        var passed: Bool
        var code: String?
        var reason: String
        var aligned: Bool
    }
    struct Outcome {
        var flags: String
        var verdict: String
        var verdictClass: String
        var codes: String
        var admissible: Int
        var unchanged: Bool
    }
    struct Requirement {
        var consumer: String
        var meets: Bool
        var handlesKind: Bool
        var missing: String
        var reference: String
    }
    struct Problem {
        var severity: String
        var isError: Bool
        var code: String
        var path: String
        var message: String
    }
    struct Item {
        var summary: String
        var outcome: String
        var admissible: Bool
        var card: CardView?
        var codes: [String]
        var problems: [Problem]
        var requirements: [Requirement]
    }

    var source: String
    var verdict: String
    var verdictClass: String
    var sourceDomain: String?
    var dkim: String?
    var refusals: [CodeView]
    var diagnostics: [String]
    var from: String?
    var organizationalDomain: String?
    var alignedDomain: String?
    var aligned: Bool
    var isEmail: Bool
    var signatures: [Signature]
    var signedRecipients: String?
    var registrationDomain: String?
    var registrationStatus: String?
    var registrationApproved: Bool
    var flagsOn: String?
    var underFlags: [Outcome]
    var items: [Item]

    init(_ report: IngestionReport) {
        source = report.source
        verdict = (report.dryRun ? "would be " : "") + report.verdict.rawValue
        verdictClass = ConsoleFormat.verdictClass(report.verdict)
        sourceDomain = report.sourceDomain
        dkim = report.dkim
        let check = report.check
        refusals =
            check?.refusals.map { CodeView(code: $0.code, at: $0.at, hint: $0.hint) }
            ?? report.codes.map { CodeView(code: $0, at: nil, hint: nil) }
        diagnostics = report.items.isEmpty ? report.diagnostics : []
        let authentication = check?.authentication
        isEmail = authentication != nil
        from = authentication?.from
        organizationalDomain = authentication?.organizationalDomain
        alignedDomain = authentication?.alignedDomain
        aligned = authentication?.alignedDomain != nil
        signatures = (authentication?.signatures ?? []).map { signature in
            Signature(
                domain: signature.domain ?? "?", selector: signature.selector ?? "?",
                algorithm: signature.algorithm ?? "?", keyBits: signature.keyBits.map(String.init) ?? "–",
                result: signature.result, passed: signature.result == "pass", code: signature.code,
                reason: signature.reason, aligned: signature.aligned)
        }
        let recipients = authentication?.signedRecipients ?? []
        signedRecipients = recipients.isEmpty ? nil : recipients.joined(separator: ", ")
        registrationDomain = check?.registration?.domain
        registrationStatus = check?.registration?.status
        registrationApproved = check?.registration?.status == "approved"
        flagsOn = (check?.flagsOn ?? []).isEmpty ? nil : check?.flagsOn.joined(separator: ", ")
        underFlags = (check?.underFlags ?? []).map { outcome in
            Outcome(
                flags: outcome.flags.joined(separator: " + "), verdict: outcome.verdict.rawValue,
                verdictClass: ConsoleFormat.verdictClass(outcome.verdict),
                codes: outcome.codes.isEmpty ? "none" : outcome.codes.joined(separator: ", "),
                admissible: outcome.admissible, unchanged: outcome.unchanged)
        }
        items = report.items.map { item in
            let details = item.details
            return Item(
                summary: item.summary, outcome: item.outcome, admissible: item.outcome == "admissible",
                card: details?.card.map(CardView.init), codes: item.codes,
                problems: (details?.problems ?? []).map {
                    Problem(
                        severity: $0.severity, isError: $0.severity == "error", code: $0.code,
                        path: $0.path.isEmpty ? "the item" : $0.path, message: $0.message)
                },
                requirements: (details?.requirements ?? []).map {
                    Requirement(
                        consumer: $0.consumer, meets: $0.meets, handlesKind: $0.handlesKind,
                        missing: $0.missing.joined(separator: ", "), reference: $0.reference)
                })
        }
    }
}

/// A reservation card (what a calendar would show).
struct CardView {
    struct Time {
        var label: String
        var local: String
        var zone: String?
        var utc: String?
        var original: String
    }
    struct Place {
        var role: String
        var name: String?
        var code: String?
        var address: String?
        var telephone: String?
    }
    struct Person {
        var name: String
        var ticket: String?
        var seat: String?
    }
    struct Action {
        var name: String
        var target: String
        var isHTTPS: Bool
    }

    var title: String
    var kind: String
    var status: String
    var statusClass: String
    var reservationNumber: String?
    var itemReference: String?
    var provider: String?
    var partySize: Int?
    var times: [Time]
    var places: [Place]
    var people: [Person]
    var actions: [Action]
    var cancelsWholeBooking: Bool

    init(_ card: ReservationCard) {
        title = card.title
        kind = card.kind
        status = card.status
        statusClass = card.status == "confirmed" ? "good" : card.status == "cancelled" ? "bad" : "warn"
        reservationNumber = card.reservationNumber
        itemReference = card.itemReference
        provider = card.provider
        partySize = card.partySize
        times = [card.start, card.end].compactMap { $0 }.map {
            Time(label: $0.label, local: $0.local, zone: $0.zone, utc: $0.utc, original: $0.original)
        }
        places = card.places.map {
            Place(role: $0.role, name: $0.name, code: $0.code, address: $0.address, telephone: $0.telephone)
        }
        people = card.people.map { Person(name: $0.name, ticket: $0.ticket, seat: $0.seat) }
        actions = card.actions.map { Action(name: $0.name, target: $0.target, isHTTPS: $0.isHTTPS) }
        cancelsWholeBooking = card.cancelsWholeBooking
    }
}

// MARK: - The log

/// One decision log entry as a row or in full. `owner` names each owner as the reader may see it (an admin: the
/// address; a sender: the pseudonym the API gives it).
struct ConsoleLogEntry {
    struct Outcome {
        var itemReference: String
        var owner: String
        var outcome: String
        var codes: String
    }

    var id: Int64
    var time: String
    var channel: String
    var sourceDomain: String
    var source: String
    var owner: String
    var verdict: String
    var verdictClass: String
    var codes: String
    var codeList: [String]
    var flags: String?
    var contentHash: String
    var reservations: [Outcome]

    /// The entry as the API shows it to the reader (``GatewayServices/readable(_:for:)``).
    init(_ view: LogEntryView) {
        self.init(view.entry, owner: view.owner)
    }

    init(_ entry: DecisionLogEntry, owner name: (OwnerAddress) -> String = { $0.address }) {
        id = entry.id ?? 0
        time = ConsoleFormat.time(entry.time)
        channel = entry.channel.rawValue
        sourceDomain = entry.sourceDomain ?? "–"
        source = entry.source ?? "–"
        owner = entry.owners.isEmpty ? "–" : entry.owners.map(name).joined(separator: ", ")
        verdict = entry.verdict.rawValue
        verdictClass = ConsoleFormat.verdictClass(entry.verdict)
        let all = entry.codes + entry.reservations.flatMap(\.codes)
        var seen = Set<String>()
        codeList = all.filter { seen.insert($0).inserted }
        codes = codeList.isEmpty ? "–" : codeList.joined(separator: ", ")
        flags = entry.flags.isEmpty ? nil : entry.flags.joined(separator: ", ")
        contentHash = entry.contentHash
        reservations = entry.reservations.map { record in
            Outcome(
                itemReference: record.itemReference, owner: record.owner.map(name) ?? "–",
                outcome: record.outcome?.code ?? "refused",
                codes: record.codes.joined(separator: ", "))
        }
    }
}

/// The log page's filters, as the form shows them and the links repeat them.
struct LogFilterView {
    struct Choice {
        var value: String
        var selected: Bool
    }

    var channels: [Choice]
    var verdicts: [Choice]
    var code: String
    var since: String
    var until: String
    /// The filters as a query string (without `before`/`after`), for the paging links and the live updates.
    var query: String

    init(_ query: DecisionLogQuery, since: String, until: String) {
        channels = IngestionChannel.allCases.map { Choice(value: $0.rawValue, selected: $0 == query.channel) }
        verdicts = DecisionLogEntry.Verdict.allCases.map { Choice(value: $0.rawValue, selected: $0 == query.verdict) }
        code = query.code ?? ""
        self.since = since
        self.until = until
        var items: [URLQueryItem] = []
        if let channel = query.channel { items.append(URLQueryItem(name: "channel", value: channel.rawValue)) }
        if let verdict = query.verdict { items.append(URLQueryItem(name: "verdict", value: verdict.rawValue)) }
        if let code = query.code { items.append(URLQueryItem(name: "code", value: code)) }
        if !since.isEmpty { items.append(URLQueryItem(name: "since", value: since)) }
        if !until.isEmpty { items.append(URLQueryItem(name: "until", value: until)) }
        var components = URLComponents()
        components.queryItems = items
        self.query = components.percentEncodedQuery ?? ""
    }
}

// MARK: - Domains and tokens

struct DomainView {
    struct Change {
        var time: String
        var summary: String
        var reason: String?
        var actor: String
    }
    struct Token {
        var id: Int64
        var label: String
        var created: String
        var createdBy: String
        var revoked: String?
    }
    struct Check {
        var time: String
        var result: String
        var resultClass: String
        var nameserver: String
        var code: String?
    }
    struct TestMode {
        var owners: String
        var until: String
        var active: Bool
    }
    struct Quota {
        var metric: String
        var used: Int64
        var limit: Int64
        var window: String
        var windowEnd: String
        var full: Bool
    }

    var domain: String
    var status: String
    var statusClass: String
    /// What the state means for the domain's mail and pages, and what to do next.
    var meaning: String
    var contact: String?
    var created: String
    var updated: String
    var updatedBy: String
    var isApproved: Bool
    var isSuspended: Bool
    /// Whether the domain has proved control (verified or approved): a sender may then check, submit and read its log.
    var isProved: Bool
    /// The TXT record that proves control (`ChallengeRecord`, as `GET /v1/domains/{domain}` gives it).
    var recordName: String?
    var recordValue: String?
    var zoneLine: String?
    var verifiedAt: String?
    var lastCheck: Check?
    /// Checks in a row that found no record; nil when none did.
    var missingChecks: Int?
    var suspension: String?
    var testMode: TestMode?
    var mayEnableTestMode: Bool
    /// The other hosts links may point to; nil when none.
    var hosts: String?
    var quotas: [Quota]
    var changes: [Change]
    var tokens: [Token]
}

extension DomainView {
    /// The badge class of a state.
    static func statusClass(_ status: RegisteredDomain.Status) -> String {
        switch status {
        case .approved: "good"
        case .verified, .pending: "warn"
        case .suspended: "bad"
        }
    }

    init(
        _ registration: RegisteredDomain, changes: [DomainChange], quotas: [QuotaUsage], tokens: [AccessToken],
        mayEnableTestMode: Bool, now: Date
    ) {
        let trust = registration.trust
        domain = registration.domain
        status = registration.status.rawValue
        statusClass = Self.statusClass(registration.status)
        meaning =
            switch registration.status {
            case .pending:
                "control of the domain is not proved yet: publish the record below, then check it. Until it is found, "
                    + "a sender token can only read this page and ask for the check, and production refuses the domain's "
                    + "mail with registry.domain-not-verified"
            case .verified:
                "its record was found: the registrant controls the domain. Awaiting the operator's approval; until then its "
                    + "mail is refused in production (test mode admits it for the listed owners)"
            case .approved: "trusted: its signed mail and HTTPS pages are admitted. Keep the record published: it is checked again periodically"
            case .suspended: "no longer trusted: its mail and pages are refused with registry.domain-suspended"
            }
        contact = registration.contact
        created = ConsoleFormat.time(registration.createdAt)
        updated = ConsoleFormat.time(registration.updatedAt)
        updatedBy = registration.updatedBy
        isApproved = registration.status == .approved
        isSuspended = registration.status == .suspended
        isProved = registration.status == .verified || registration.status == .approved
        let record = ChallengeRecord(registration)
        recordName = record?.name
        recordValue = record?.value
        zoneLine = record?.zoneLine
        verifiedAt = trust.verifiedAt.map(ConsoleFormat.time)
        lastCheck = trust.lastCheck.map {
            Check(
                time: ConsoleFormat.time($0.at), result: $0.result.rawValue,
                resultClass: $0.result == .found ? "good" : $0.result == .missing ? "bad" : "warn",
                nameserver: $0.nameserver, code: $0.code)
        }
        missingChecks = trust.missingChecks == 0 ? nil : trust.missingChecks
        suspension = trust.suspension.map { "\($0.reason) (\($0.cause == .operator ? "by an operator" : "the record is missing"))" }
        testMode = trust.testMode.map {
            TestMode(
                owners: $0.owners.map(\.address).joined(separator: ", "), until: ConsoleFormat.time($0.until),
                active: $0.isActive(at: now))
        }
        self.mayEnableTestMode = mayEnableTestMode
        hosts = trust.hosts.isEmpty ? nil : trust.hosts.joined(separator: ", ")
        self.quotas = quotas.map {
            Quota(
                metric: $0.metric.rawValue, used: $0.used, limit: $0.limit, window: ConsoleFormat.duration($0.windowSeconds),
                windowEnd: ConsoleFormat.time($0.windowEnd), full: $0.used >= $0.limit)
        }
        self.changes = changes.map {
            Change(
                time: ConsoleFormat.time($0.changedAt),
                summary: $0.status.rawValue + ($0.contact.map { " · contact \($0)" } ?? ""), reason: $0.reason,
                actor: $0.changedBy)
        }
        self.tokens = tokens.map {
            Token(
                id: $0.id, label: $0.label.isEmpty ? "–" : $0.label, created: ConsoleFormat.time($0.createdAt),
                createdBy: $0.createdBy, revoked: $0.revokedAt.map(ConsoleFormat.time))
        }
    }
}
