import Admission
import ArgumentParser
import Foundation
import Ingestion
import Store

struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register a sending domain, and check sample emails from it at once.",
        discussion: """
            The domain is normalized (lower case, IDNA) and refused if it is an IP address, a public suffix or \
            mixes writing systems (checked on its Unicode form, also when typed as xn-- A-labels). It covers its \
            subdomains. Registering a registered domain again changes nothing but its contact (--contact). \
            The development policy approves it at once; the production policy leaves it pending until \
            `gateway domains approve`. A sender token for the HTTP API comes with `gateway tokens issue sender DOMAIN` \
            (or with the first registration through the API).
            """
    )

    @Argument(help: "The domain mail and pages come from, such as booking.example.com.")
    var domain: String

    @Option(name: .customLong("sample"), help: ArgumentHelp("An email to check now (repeatable).", valueName: "FILE"))
    var samples: [String] = []

    @Option(help: ArgumentHelp("Who to contact about this domain.", valueName: "EMAIL"))
    var contact: String?

    @Flag(help: "Print the registration (and sample reports) as JSON.")
    var json = false

    @OptionGroup var state: StateOptions
    @OptionGroup var resolver: ResolverOptions

    func run() async throws {
        let allPass = try await withIngestor(state: state, resolver: resolver) { ingestor in
            let entry: RegisteredDomain
            let isNew: Bool
            do {
                (entry, isNew) = try await ingestor.registry.register(domain, contact: contact, by: currentActor)
            } catch let error as AdmissionError {
                throw CommandFailure(message: "cannot register \(domain): \(error)")
            }
            if json {
                try Terminal.json(entry)
            } else if isNew {
                Terminal.line("registered \(entry.domain): \(entry.status.rawValue)")
            } else {
                Terminal.line(
                    "\(entry.domain) is already registered: \(entry.status.rawValue)"
                        + (contact == nil ? "" : "; contact \(entry.contact ?? "")"))
            }
            var allPass = true
            for sample in samples {
                let report = try await ingestor.ingestEmail(try Terminal.read(sample), source: sample, dryRun: true)
                allPass = allPass && report.verdict == .admitted
                if json { try Terminal.json(report) } else { ReportPrinter.print(report) }
            }
            return allPass
        }
        if !allPass { throw ExitCode(1) }
    }
}

struct DomainsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "domains",
        abstract: "List, show, approve and revoke registered domains.",
        subcommands: [List.self, Show.self, Approve.self, Revoke.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered domains.")
        @Option(help: "Only those with this status: pending, approved or revoked.") var status: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let filter: RegisteredDomain.Status?
            if let status {
                guard let parsed = RegisteredDomain.Status(rawValue: status) else {
                    throw ValidationError("--status must be pending, approved or revoked")
                }
                filter = parsed
            } else {
                filter = nil
            }
            let (domains, all) = try await state.withStore { store in
                let domains = try await store.registeredDomains(status: filter)
                let all = domains.isEmpty && filter != nil ? try await store.registeredDomains(status: nil).count : 0
                return (domains, all)
            }
            if json { return try Terminal.json(domains) }
            for domain in domains {
                Terminal.line("\(domain.domain.padding(toLength: 32, withPad: " ", startingAt: 0)) \(domain.status.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(domain.contact ?? "")")
            }
            if domains.isEmpty {
                if let filter, all > 0 {
                    Terminal.line("no \(filter.rawValue) domains (\(all) registered: gateway domains list shows them)")
                } else {
                    Terminal.line("no registered domains; gateway register DOMAIN adds one")
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a domain's registration and its history.")
        @Argument var domain: String
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let name: DomainName
            do { name = try DomainName(normalizing: domain) } catch { throw CommandFailure(message: error.description, status: 2) }
            let (found, changes) = try await state.withStore { store in
                (try await store.registeredDomain(name.ascii), try await store.domainChanges(domain: name.ascii, limit: 100))
            }
            guard let entry = found else {
                throw CommandFailure(message: "\(name.ascii) is not registered")
            }
            if json {
                struct Shown: Encodable { var registration: RegisteredDomain; var changes: [DomainChange] }
                return try Terminal.json(Shown(registration: entry, changes: changes))
            }
            Terminal.line("\(entry.domain): \(entry.status.rawValue)")
            if let contact = entry.contact { Terminal.line("  contact: \(contact)") }
            Terminal.line("  registered \(entry.createdAt.formatted(.iso8601)), updated \(entry.updatedAt.formatted(.iso8601)) by \(entry.updatedBy)")
            for change in changes {
                Terminal.line("  \(change.changedAt.formatted(.iso8601))  \(change.status.rawValue)  by \(change.changedBy)")
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Approve a registered domain: its markup is admitted from now on.")
        @Argument var domain: String
        @OptionGroup var state: StateOptions
        func run() async throws { try await setStatus(domain, .approved, state: state) }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a domain: its markup is refused from now on (what was stored stays).")
        @Argument var domain: String
        @OptionGroup var state: StateOptions
        func run() async throws { try await setStatus(domain, .revoked, state: state) }
    }

    static func setStatus(_ domain: String, _ status: RegisteredDomain.Status, state: StateOptions) async throws {
        let policy = try state.loadPolicy()
        let publicSuffixes = try state.publicSuffixes()
        try await state.withStore { store in
            let registry = DomainRegistry(store: store, policy: policy, publicSuffixes: publicSuffixes)
            do {
                let entry = try await registry.setStatus(domain, status, by: currentActor)
                Terminal.line("\(entry.domain): \(entry.status.rawValue)")
            } catch let error as AdmissionError {
                throw CommandFailure(message: error.description)
            }
        }
    }
}

struct FlagsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flags",
        abstract: "Show the developer flags, or turn one on or off.",
        discussion: """
            allow-any-domain skips the registry check only; allow-unverified-sources skips DKIM (and HTTPS) only. \
            A flag turns itself off when its time runs out. The production policy refuses to turn them on.
            """,
        subcommands: [Show.self, Set.self],
        defaultSubcommand: Show.self
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the flags and who set them.")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let policy = try state.loadPolicy()
            let statuses = try await state.withStore { try await FlagController(store: $0, policy: policy).statuses() }
            if json { return try Terminal.json(statuses) }
            for status in statuses {
                var line = "\(status.name.padding(toLength: 26, withPad: " ", startingAt: 0)) \(status.enabled ? "on " : "off")"
                if status.enabled, let expires = status.expiresAt { line += "  until \(expires.formatted(.iso8601))" }
                if status.expired, let expires = status.expiresAt { line += "  (expired \(expires.formatted(.iso8601)))" }
                if let by = status.setBy, let at = status.setAt { line += "  set by \(by) at \(at.formatted(.iso8601))" }
                Terminal.line(line)
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a flag on (for a while) or off.")
        @Argument(help: "allow-any-domain or allow-unverified-sources.") var name: String
        @Argument(help: "on or off.") var value: String
        @Option(name: .customLong("for"), help: ArgumentHelp("How long it stays on: 30m, 24h, 7d (default: the policy's, 24h).", valueName: "DURATION"))
        var duration: String?
        @OptionGroup var state: StateOptions

        func validate() throws {
            guard DeveloperFlag(rawValue: name) != nil else {
                throw ValidationError("unknown flag '\(name)'; the flags are allow-any-domain and allow-unverified-sources")
            }
            guard value == "on" || value == "off" else { throw ValidationError("say on or off") }
            if let duration, parseDuration(duration) == nil {
                throw ValidationError("--for takes a duration: a number with s, m, h or d (30m, 24h, 7d); '\(duration)' is not one")
            }
        }

        func run() async throws {
            let policy = try state.loadPolicy()
            try await state.withStore { store in
                let controller = FlagController(store: store, policy: policy)
                do {
                    let flag = DeveloperFlag(rawValue: name)!
                    let result = try await controller.set(flag, enabled: value == "on", for: duration.flatMap(parseDuration), by: currentActor)
                    Terminal.line("\(result.name): \(result.enabled ? "on until \(result.expiresAt?.formatted(.iso8601) ?? "?")" : "off")")
                } catch let error as AdmissionError {
                    throw CommandFailure(message: error.description)
                }
            }
        }
    }
}
