import ArgumentParser
import Foundation
import Ingestion
import Markup
import Publishing
import Reservations
import Store

struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "The decision log: every ingestion attempt, what was decided and why.",
        discussion: "What a sender reads to find out why an email was ignored."
    )

    @Option(help: "Only attempts from this domain and its subdomains.") var domain: String?
    @Option(
        help: ArgumentHelp(
            "Only attempts since TIME: an ISO 8601 time with its zone (2026-11-21T08:00:00Z, 2026-11-21T09:00:00+01:00) or a duration ago, a number with s, m, h or d (90s, 30m, 2h, 7d).",
            valueName: "TIME"))
    var since: String?
    @Option(help: "At most this many entries (the latest).") var limit = 100
    @Flag(help: "Keep printing new entries as they come.") var follow = false
    @Flag(help: "Print one JSON object per entry.") var json = false
    @OptionGroup var state: StateOptions

    func validate() throws {
        if let since, parseSince(since) == nil {
            throw ValidationError(
                "--since takes an ISO 8601 time with its zone (2026-11-21T08:00:00Z) or a duration ago: a number with s, m, h or d (30m, 2h, 7d); '\(since)' is neither")
        }
    }

    func run() async throws {
        let start = since.flatMap(parseSince)
        let domainFilter = domain?.lowercased()
        try await state.withStore { store in
            var entries = try await store.entries(domain: domainFilter, since: start, afterID: nil, limit: limit)
            var lastID = entries.last?.id ?? 0
            print(entries)
            while follow {
                try await Task.sleep(for: .seconds(1))
                entries = try await store.entries(domain: domainFilter, since: start, afterID: lastID, limit: 1000)
                lastID = entries.last?.id ?? lastID
                print(entries)
            }
        }
    }

    private func print(_ entries: [DecisionLogEntry]) {
        for entry in entries {
            if json {
                try? Terminal.json(entry)
                continue
            }
            var line = "#\(entry.id ?? 0) \(entry.time.formatted(.iso8601)) \(entry.channel.rawValue) \(entry.verdict.rawValue)"
            if let domain = entry.sourceDomain { line += " \(domain)" }
            if let source = entry.source { line += " \(source)" }
            if !entry.codes.isEmpty { line += " [\(entry.codes.joined(separator: ", "))]" }
            if !entry.flags.isEmpty { line += " under \(entry.flags.joined(separator: ", "))" }
            if !entry.owners.isEmpty { line += " for \(entry.owners.map(\.address).joined(separator: ", "))" }
            Terminal.line(line)
            // One line per item and owner it was stored for; an item refused before any owner, once.
            for item in entry.reservations {
                let outcome = item.outcome.map { outcome -> String in
                    if case .updated(let version) = outcome { return "updated v\(version)" }
                    return outcome.code
                } ?? (entry.verdict == .deferred ? "deferred" : "rejected")
                let owner = item.owner.map { " → \($0.address)" } ?? ""
                Terminal.line("    \(item.itemReference)\(owner): \(outcome)\(item.codes.isEmpty ? "" : " [\(item.codes.joined(separator: ", "))]")")
            }
        }
    }
}

struct ReservationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reservations",
        abstract: "Read the shared reservation store: list, show, and export as a calendar.",
        subcommands: [List.self, Show.self, Export.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an owner's reservations (or everyone's).")
        @Option(help: ArgumentHelp("Whose reservations.", valueName: "ADDRESS")) var owner: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let owner = try self.owner.map { try ownerOption($0) }
            let reservations = try await state.withStore { store in
                if let owner { return try await store.list(owner: owner) }
                return try await store.listAll(limit: 10_000)
            }
            if json { return try Terminal.json(reservations.map(ReservationView.init)) }
            for reservation in reservations {
                Terminal.line(ReservationView(reservation).line)
            }
            if reservations.isEmpty { Terminal.line("no reservations") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a reservation by its reservation number (container) and optional item references.",
            discussion: "What a calendar's \"show reservation\" hands back: the container reference, and item references to narrow it."
        )
        @Argument(help: "The reservation number (container reference).") var reference: String
        @Argument(help: "Item references within it.") var items: [String] = []
        @Option(help: ArgumentHelp("Whose reservation.", valueName: "ADDRESS")) var owner: String?
        @Option(help: "Only from this source domain.") var domain: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let owner = try self.owner.map { try ownerOption($0) }
            let found = try await state.withStore { store in
                let owners: [OwnerAddress]
                if let owner {
                    owners = [owner]
                } else {
                    owners = Array(Swift.Set(try await store.listAll(limit: 100_000).map(\.owner))).sorted()
                }
                var found: [(StoredReservation, [ReservationHistoryEntry])] = []
                for owner in owners {
                    for reservation in try await store.lookup(
                        containerReference: reference, itemReferences: items, owner: owner, sourceDomain: domain?.lowercased())
                    {
                        found.append((reservation, try await store.history(of: reservation.id)))
                    }
                }
                return found
            }
            guard !found.isEmpty else { throw CommandFailure(message: "no reservation \(reference)\(items.isEmpty ? "" : " with items \(items.joined(separator: ", "))")") }
            for (reservation, history) in found {
                let shown = ReservationView(reservation, history: history)
                if json {
                    try Terminal.json(shown)
                    continue
                }
                Terminal.line(shown.line)
                Terminal.line(
                    "    consent: \(shown.consent.state.rawValue) (\(shown.consent.reason.rawValue)) since "
                        + shown.consent.changedAt.formatted(.iso8601)
                        + (shown.underName.map { " · booked under \($0)" } ?? ""))
                for version in shown.versions ?? [] {
                    Terminal.line("    v\(version.version) \(version.status) at \(version.recordedAt.formatted(.iso8601))")
                    for source in version.provenance { Terminal.line("        " + ReservationView.describe(source)) }
                }
                if let markup = ReservationView(reservation).markup {
                    Terminal.line("    " + String(decoding: (try? JSONEncoder.pretty.encode(markup)) ?? Data(), as: UTF8.self).replacingOccurrences(of: "\n", with: "\n    "))
                }
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Export an owner's calendar as iCalendar (RFC 5545).")
        @Option(help: ArgumentHelp("Whose calendar.", valueName: "ADDRESS")) var owner: String
        @Flag(help: "iCalendar output (the only format).") var ics = false
        @OptionGroup var state: StateOptions

        func validate() throws {
            guard ics else { throw ValidationError("say --ics: iCalendar is the export format") }
        }

        func run() async throws {
            let owner = try ownerOption(self.owner)
            let (records, profile) = try await state.withStore { store in
                (try await store.list(owner: owner), try await store.profile(owner: owner))
            }
            Terminal.write(
                CalendarFeed.render(records, options: .init(suggested: profile?.suggestedInCalendar ?? .tentative)))
        }
    }
}

extension JSONEncoder {
    static var pretty: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
