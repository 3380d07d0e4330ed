import Admission
import ArgumentParser
import Foundation
import Publishing
import Store

/// `gateway owners ...`: what an admin does for an owner (issue 16): their decisions, their export, their erasure.
struct OwnersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "owners",
        abstract: "Act for an owner: accept or decline reservations, trust or block senders, export, forget.",
        discussion: """
            Owners do the same through the HTTP API with their own token (/v1/owners/{owner}/...). New reservations \
            are suggested until the owner accepts them, or trusts their sender; declined ones stay declined.
            """,
        subcommands: [Accept.self, Decline.self, Senders.self, Sender.self, Profile.self, Export.self, Forget.self]
    )

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accept a reservation for its owner: their calendar shows it as confirmed.")
        @Argument(help: ArgumentHelp("The owner.", valueName: "ADDRESS")) var owner: String
        @Argument(help: ArgumentHelp("The reservation's id (as reservations list shows it).", valueName: "ID")) var id: Int64
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws { try await decide(.accept, owner: owner, id: id, json: json, state: state) }
    }

    struct Decline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decline a reservation for its owner: never shown; later updates are not stored, a cancellation is.")
        @Argument(help: ArgumentHelp("The owner.", valueName: "ADDRESS")) var owner: String
        @Argument(help: ArgumentHelp("The reservation's id (as reservations list shows it).", valueName: "ID")) var id: Int64
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws { try await decide(.decline, owner: owner, id: id, json: json, state: state) }
    }

    static func decide(_ decision: ConsentDecision, owner text: String, id: Int64, json: Bool, state: StateOptions)
        async throws
    {
        let owner = try ownerOption(text, option: "OWNER")
        let (change, record) = try await state.withStore { store in
            (try await store.decide(decision, reservation: id, owner: owner), try await store.reservation(id: id))
        }
        guard let change, let record else { throw CommandFailure(message: "\(owner) has no reservation \(id)") }
        if json { return try Terminal.json(ReservationView(record)) }
        let view = ReservationView(record)
        Terminal.line(view.line)
        Terminal.line(
            change.changed
                ? "    \(change.previous.state.rawValue) → \(change.current.state.rawValue)"
                : "    already \(change.current.state.rawValue)")
        if let name = change.learnedName { Terminal.line("    learned: bookings under \(name) are \(owner)'s") }
    }

    struct Senders: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an owner's decisions about sender domains.")
        @Argument(help: ArgumentHelp("The owner.", valueName: "ADDRESS")) var owner: String
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let owner = try ownerOption(self.owner, option: "OWNER")
            let preferences = try await state.withStore { try await $0.senderPreferences(owner: owner) }
            if json { return try Terminal.json(preferences) }
            for preference in preferences {
                Terminal.line("\(preference.decision.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(preference.domain)")
            }
            if preferences.isEmpty { Terminal.line("no decisions: every sender is asked about (suggested)") }
        }
    }

    struct Sender: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust, block or ask about a sender domain for an owner.",
            discussion: """
                trust: new reservations from it are accepted (once the owner has accepted one of them), unless booked \
                under another name. block: nothing new from it is stored for the owner (a cancellation of what is \
                stored still is). ask: the default, new ones are suggested.
                """)
        @Argument(help: ArgumentHelp("The owner.", valueName: "ADDRESS")) var owner: String
        @Argument(help: ArgumentHelp("The sender's domain (it covers its subdomains).", valueName: "DOMAIN")) var domain: String
        @Argument(help: ArgumentHelp("trust, block or ask.", valueName: "DECISION")) var decision: SenderDecision
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let owner = try ownerOption(self.owner, option: "OWNER")
            let domain = try domainArgument(self.domain)
            let result = try await state.withStore {
                try await $0.setSenderDecision(decision, domain: domain, owner: owner)
            }
            switch result {
            case .set(let preference):
                if json { return try Terminal.json(preference) }
                Terminal.line("\(owner): \(preference.decision.rawValue) \(preference.domain)")
            case .refused(let code, let reason):
                throw CommandFailure(message: "\(code): \(reason)")
            }
        }
    }

    struct Profile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set an owner's names (bookings under other names are never accepted automatically) and how their calendar shows suggestions.")
        @Argument(help: ArgumentHelp("The owner.", valueName: "ADDRESS")) var owner: String
        @Option(name: .customLong("name"), help: "A name bookings for the owner are made under (repeat for several; replaces the names set).")
        var names: [String] = []
        @Flag(help: "Forget the names set (the learned ones stay).") var clearNames = false
        @Option(help: ArgumentHelp("How the calendar shows suggested reservations: tentative or hidden.", valueName: "MODE"))
        var suggested: OwnerProfile.SuggestedInCalendar?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func validate() throws {
            if clearNames && !names.isEmpty { throw ValidationError("--clear-names and --name do not go together") }
        }

        func run() async throws {
            let owner = try ownerOption(self.owner, option: "OWNER")
            let update = OwnerProfileUpdate(
                names: clearNames ? [] : names.isEmpty ? nil : names, suggestedInCalendar: suggested)
            let changes = update.names != nil || update.suggestedInCalendar != nil
            let profile = try await state.withStore { store in
                changes ? try await store.updateProfile(update, owner: owner) : try await store.profile(owner: owner)
            } ?? OwnerProfile(owner: owner)
            if json { return try Terminal.json(profile) }
            Terminal.line("owner        \(owner)")
            Terminal.line("names        \(profile.names.isEmpty ? "(none set)" : profile.names.joined(separator: "; "))")
            Terminal.line("learned      \(profile.learnedNames.isEmpty ? "(none)" : profile.learnedNames.joined(separator: "; "))")
            Terminal.line("suggestions  \(profile.suggestedInCalendar.rawValue)")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print everything held about an owner as one JSON document.",
            discussion: """
                Their reservations with every version, its provenance and their consent; their sender decisions and \
                profile; the decision-log entries naming them; messages spooled for them; tokens issued to them \
                (without secrets).
                """)
        @Argument(help: ArgumentHelp("The owner.", valueName: "ADDRESS")) var owner: String
        @OptionGroup var state: StateOptions

        func run() async throws {
            let owner = try ownerOption(self.owner, option: "OWNER")
            let records = try await state.withStore { try await $0.records(of: owner) }
            let encoder = JSONEncoder.pretty
            encoder.dateEncodingStrategy = .iso8601
            Terminal.line(String(decoding: try encoder.encode(OwnerExport(records, exportedAt: Date())), as: UTF8.self))
        }
    }

    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase everything held about an owner, and say what was removed.",
            discussion: """
                Removes their reservations and every earlier version, their sender decisions and profile, the \
                decision-log entries naming them (from an entry that names another owner too, only their part), \
                messages spooled for them or mentioning their address, and their tokens. An SQLite store is then \
                vacuumed and its write-ahead log emptied, so no deleted byte stays in the files.
                """)
        @Argument(help: ArgumentHelp("The owner.", valueName: "ADDRESS")) var owner: String
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let owner = try ownerOption(self.owner, option: "OWNER")
            let report = try await state.withStore { try await $0.forget(owner) }
            if json { return try Terminal.json(report) }
            Terminal.line("forgot \(owner): \(report.total) rows")
            let rows: [(String, Int)] = [
                ("reservations", report.reservations), ("earlier versions", report.versions),
                ("sender decisions", report.senderPreferences), ("profiles", report.profiles),
                ("log entries", report.decisionLogEntries), ("log entries redacted", report.decisionLogEntriesRedacted),
                ("spooled messages", report.spooledMessages), ("tokens", report.tokens), ("change events", report.changeEvents),
            ]
            for (name, count) in rows { Terminal.line("  \(name.padding(toLength: 21, withPad: " ", startingAt: 0)) \(count)") }
            Terminal.line(
                report.compacted
                    ? "  the database files were compacted: no deleted byte remains in them"
                    : "  not compacted: on SQLite another process held an old snapshot (run forget again when it is idle); "
                        + "PostgreSQL reclaims the space with its own VACUUM")
        }
    }
}

/// A domain argument as the store keys it (IDNA, lower case); one that is not a domain is a usage error.
func domainArgument(_ text: String) throws(CommandFailure) -> String {
    do {
        return try DomainName(normalizing: text).ascii
    } catch {
        throw CommandFailure(message: "DOMAIN \(text.prefix(80)): \(error.description)", status: 2)
    }
}

extension SenderDecision: ExpressibleByArgument {}
extension OwnerProfile.SuggestedInCalendar: ExpressibleByArgument {}
