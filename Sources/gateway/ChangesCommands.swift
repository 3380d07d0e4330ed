import Admission
import ArgumentParser
import Foundation
import Ingestion
import Publishing
import Store
import WebFetch

struct ChangesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "Read the change feed: every create, update and cancellation, in commit order.",
        discussion: """
            Each line starts with the change's cursor: pass it to --after to read what came after it. The same feed \
            as GET /v1/changes; --json prints each change as that API does, a CloudEvents 1.0 event per line.
            """
    )
    @Option(help: ArgumentHelp("Start after this cursor (default: the first change).", valueName: "CURSOR"))
    var after: String?
    @Flag(help: "Keep printing changes as they are committed.") var follow = false
    @Flag(help: "Print one CloudEvents JSON object per change.") var json = false
    @Option(help: ArgumentHelp("Only this owner's reservations.", valueName: "ADDRESS")) var owner: String?
    @Option(help: "Only reservations from this domain and below.") var domain: String?
    @OptionGroup var state: StateOptions

    func validate() throws {
        if let after, ChangeCursor(after) == nil {
            throw ValidationError("--after takes a cursor the feed printed (the first word of a line); '\(after)' is not one")
        }
        if owner != nil && domain != nil { throw ValidationError("give --owner or --domain, not both") }
    }

    func run() async throws {
        var cursor = after.flatMap(ChangeCursor.init) ?? .start
        let scope: ChangeScope
        if let owner {
            scope = .owner(try ownerOption(owner))
        } else if let domain {
            scope = .domain(try domainOption(domain))
        } else {
            scope = .all
        }
        try await state.withStore { store in
            var printed = 0
            while true {
                let generation = store.changeSignal.generation
                let page = try await store.changes(after: cursor.position, scope: scope, limit: 1000)
                for event in page {
                    let message = ChangeMessage(event)
                    // With --json, the same bytes as a webhook delivery's body.
                    if json { Terminal.line(String(decoding: try message.encoded(), as: UTF8.self)) } else { Terminal.line(message.line) }
                }
                printed += page.count
                if let last = page.last { cursor = ChangeCursor(position: last.position) }
                if page.count == 1000 { continue }
                guard follow else { break }
                // Other processes commit too: look again every second at least.
                await store.changeSignal.wait(after: generation, timeout: .seconds(1))
            }
            if printed == 0 && !json { Terminal.line("no changes after \(cursor)") }
        }
    }
}

struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Subscribe HTTPS URLs to the change feed: signed CloudEvents, retried for 24 hours.",
        discussion: """
            `gateway serve` delivers (one node of a cluster at a time): each change a subscription covers is POSTed \
            as a CloudEvents 1.0 event, signed the Standard Webhooks way with the subscription's secret.
            """,
        subcommands: [Add.self, List.self, Remove.self, Deliveries.self, Replay.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Subscribe a URL and print its secret, once.")
        @Argument(help: "An https:// URL (the policy's address rules apply, as to page fetching).") var url: String
        @Option(help: ArgumentHelp("Only this owner's reservations.", valueName: "ADDRESS")) var owner: String?
        @Option(help: "Only reservations from this domain and below.") var domain: String?
        @Flag(help: "Every owner's and domain's changes.") var all = false
        @Option(
            parsing: .upToNextOption,
            help: ArgumentHelp(
                "Only these kinds: \(ChangeKind.known.map(\.rawValue).joined(separator: ", ")) (default: all).",
                valueName: "KIND"))
        var types: [String] = []
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func validate() throws {
            guard [owner != nil, domain != nil, all].filter({ $0 }).count == 1 else {
                throw ValidationError("say whose changes: --owner ADDRESS, --domain DOMAIN or --all")
            }
            for name in types.flatMap({ $0.split(separator: ",") }) where ChangeKind(rawValue: String(name)) == nil {
                throw ValidationError(
                    "--types: '\(name)' is not a kind of change; the kinds are "
                        + ChangeKind.known.map(\.rawValue).joined(separator: ", "))
            }
        }

        func run() async throws {
            guard let target = URL(string: url) else { throw CommandFailure(message: "\(url) is not a URL", status: 2) }
            do {
                try state.loadPolicy().fetchConfiguration().checkTarget(target)
            } catch let error as FetchError {
                throw CommandFailure(message: error.description, status: 1)
            }
            let owner = try self.owner.map { try ownerOption($0) }
            let domain = try self.domain.map { try domainOption($0) }
            var kinds: [ChangeKind] = []
            for name in types.flatMap({ $0.split(separator: ",") }) {
                if let kind = ChangeKind(rawValue: String(name)), !kinds.contains(kind) { kinds.append(kind) }
            }
            let secret = WebhookSecret.generate()
            let hook = try await state.withStore { [kinds] store in
                try await store.addWebhook(
                    url: target.absoluteString, owner: owner, domain: domain, types: kinds, secret: secret.description,
                    by: currentActor)
            }
            if json {
                struct Added: Encodable {
                    var webhook: Webhook
                    var secret: String
                }
                return try Terminal.json(Added(webhook: hook, secret: secret.description))
            }
            Terminal.line("webhook #\(hook.id) → \(hook.url) (\(WebhooksCommand.describe(hook))), secret shown this once:")
            Terminal.line(secret.description)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the subscriptions (never their secrets).")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let hooks = try await state.withStore { try await $0.webhooks() }
            if json { return try Terminal.json(hooks) }
            for hook in hooks {
                Terminal.line(
                    "#\(hook.id) \(hook.url) · \(WebhooksCommand.describe(hook)) · added "
                        + "\(hook.createdAt.formatted(.iso8601)) by \(hook.createdBy)")
            }
            if hooks.isEmpty { Terminal.line("no webhooks; add one with gateway webhooks add URL --all") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a subscription and its deliveries.")
        @Argument(help: "The subscription's number (from webhooks list).") var id: Int64
        @OptionGroup var state: StateOptions

        func run() async throws {
            guard try await state.withStore({ try await $0.removeWebhook(id: id) }) else {
                throw CommandFailure(message: "no webhook #\(id)")
            }
            Terminal.line("webhook #\(id) removed")
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the latest deliveries: delivered, pending (with the next attempt) or dead.")
        @Option(help: "Only this subscription's.") var webhook: Int64?
        @Option(help: "Only pending, delivered or dead ones.") var state: String?
        @Option(help: "At most this many (the latest).") var limit = 50
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var options: StateOptions

        func validate() throws {
            if let state, WebhookDelivery.State(rawValue: state) == nil {
                throw ValidationError("--state is pending, delivered or dead")
            }
        }

        func run() async throws {
            let filter = state.flatMap(WebhookDelivery.State.init(rawValue:))
            let deliveries = try await options.withStore {
                try await $0.deliveries(webhookID: webhook, state: filter, limit: limit)
            }
            if json {
                for delivery in deliveries { try Terminal.json(delivery) }
                return
            }
            for delivery in deliveries {
                var line =
                    "#\(delivery.id) webhook \(delivery.webhookID) change-\(delivery.position) reservation "
                    + "\(delivery.reservationID) \(delivery.state.rawValue) after \(delivery.attempts) attempt"
                    + (delivery.attempts == 1 ? "" : "s")
                if let status = delivery.lastStatus { line += " · last answer \(status)" }
                switch delivery.state {
                case .pending: line += " · next \(delivery.nextAttemptAt.formatted(.iso8601))"
                case .delivered: line += " · at \(delivery.updatedAt.formatted(.iso8601))"
                case .dead: line += " · given up \(delivery.updatedAt.formatted(.iso8601))"
                }
                Terminal.line(line)
                if delivery.state != .delivered, let error = delivery.lastError { Terminal.line("    \(error)") }
            }
            if deliveries.isEmpty { Terminal.line("no deliveries") }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue again every change since a time for a subscription (delivered and dead ones too).")
        @Argument(help: "The subscription's number.") var id: Int64
        @Option(
            help: ArgumentHelp(
                "From this time: ISO 8601 with its zone (2026-11-21T08:00:00Z) or a duration ago (30m, 2h, 7d).",
                valueName: "TIME"))
        var since: String
        @OptionGroup var state: StateOptions

        func validate() throws {
            if parseSince(since) == nil {
                throw ValidationError(
                    "--since takes an ISO 8601 time with its zone (2026-11-21T08:00:00Z) or a duration ago (30m, 2h, 7d)")
            }
        }

        func run() async throws {
            let from = parseSince(since) ?? Date()
            guard let queued = try await state.withStore({ try await $0.replayDeliveries(webhookID: id, since: from) })
            else {
                throw CommandFailure(message: "no webhook #\(id)")
            }
            Terminal.line(
                "webhook #\(id): \(queued) change\(queued == 1 ? "" : "s") since \(from.formatted(.iso8601)) queued again")
        }
    }

    /// Whose changes and which kinds a subscription receives.
    static func describe(_ hook: Webhook) -> String {
        let scope = hook.owner.map { "owner \($0)" } ?? hook.domain.map { "domain \($0)" } ?? "all"
        let kinds = hook.types.isEmpty ? "every change" : hook.types.map(\.rawValue).joined(separator: ", ")
        return "\(scope), \(kinds)"
    }
}

/// A domain given on the command line, normalized (IDNA, lower case); an invalid one is a usage error.
func domainOption(_ text: String, option: String = "--domain") throws(CommandFailure) -> String {
    do {
        return try DomainName(normalizing: text).ascii
    } catch {
        throw CommandFailure(message: "\(option) \(text): \(error)", status: 2)
    }
}
