import Admission
import ArgumentParser
import Foundation
import Ingestion
import Store

struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register a sending domain, print the DNS record that proves control of it, and check sample emails.",
        discussion: """
            The domain is normalized (lower case, IDNA) and refused if it is an IP address, a public suffix or \
            mixes writing systems (checked on its Unicode form, also when typed as xn-- A-labels). It covers its \
            subdomains. Registering a registered domain again changes nothing but its contact (--contact). \
            A registration gets a challenge: publish the TXT record printed at _gateway-challenge.DOMAIN and run \
            `gateway domains verify DOMAIN`. The development policy approves at once; the production policy leaves \
            the domain pending until it is verified and `gateway domains approve` approves it. A sender token for the \
            HTTP API comes with `gateway tokens issue sender DOMAIN` (or with the first registration through the API).
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
            } else {
                if isNew {
                    Terminal.line("registered \(entry.domain): \(entry.status.rawValue)")
                } else {
                    Terminal.line(
                        "\(entry.domain) is already registered: \(entry.status.rawValue)"
                            + (contact == nil ? "" : "; contact \(entry.contact ?? "")"))
                }
                if entry.trust.verifiedAt == nil, let record = ChallengeRecord(entry) {
                    Terminal.line("  to prove control, publish this record, then run gateway domains verify \(entry.domain):")
                    Terminal.line("  \(record.zoneLine)")
                }
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
        abstract: "List, show, verify, approve and revoke registered domains; their test mode and link hosts.",
        subcommands: [
            List.self, Show.self, Verify.self, Approve.self, Revoke.self, TestMode.self, Hosts.self, Recheck.self,
        ]
    )

    static let statusNames = RegisteredDomain.Status.allCases.map(\.rawValue).joined(separator: ", ")

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered domains.")
        @Option(help: "Only those with this status: pending, verified, approved or suspended.") var status: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let filter: RegisteredDomain.Status?
            if let status {
                guard let parsed = RegisteredDomain.Status(rawValue: status) else {
                    throw ValidationError("--status must be one of \(DomainsCommand.statusNames)")
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
        static let configuration = CommandConfiguration(
            abstract: "Show a domain's registration: its status, the record that proves control, its checks, test mode, link hosts, quotas and history.")
        @Argument var domain: String
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let name: DomainName
            do { name = try DomainName(normalizing: domain) } catch { throw CommandFailure(message: error.description, status: 2) }
            let policy = try state.loadPolicy()
            let plan = QuotaPlan(quotas: policy.quotas)
            let (found, changes, counters) = try await state.withStore { store in
                (
                    try await store.registeredDomain(name.ascii), try await store.domainChanges(domain: name.ascii, limit: 100),
                    try await store.quotaCounters(scope: .domain, subject: name.ascii)
                )
            }
            guard let entry = found else {
                throw CommandFailure(message: "\(name.ascii) is not registered")
            }
            let quotas = plan.usage(scope: .domain, subject: entry.domain, counters: counters, now: Date())
            if json {
                struct Shown: Encodable {
                    var registration: RegisteredDomain
                    var challenge: ChallengeRecord?
                    var changes: [DomainChange]
                    var quotas: [QuotaUsage]
                }
                return try Terminal.json(
                    Shown(registration: entry, challenge: ChallengeRecord(entry), changes: changes, quotas: quotas))
            }
            for line in DomainPrinter.lines(entry, changes: changes, quotas: quotas, now: Date()) { Terminal.line(line) }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Look up a domain's challenge record now and record the result.",
            discussion: """
                Asks for the TXT record at _gateway-challenge.DOMAIN with the gateway's own DNS client (the \
                nameservers of /etc/resolv.conf, --nameserver, or a --keys zone file offline), past any cache, and \
                records when, what it found and who answered. Found: a pending domain becomes verified (and a domain \
                suspended for a missing record gets its status back). A DNS failure changes nothing. Exit status 1 \
                when the record was not found or could not be looked up.
                """)
        @Argument var domain: String
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions
        @OptionGroup var resolver: ResolverOptions

        func run() async throws {
            let policy = try state.loadPolicy()
            let publicSuffixes = try state.publicSuffixes()
            let dns = try resolver.makeResolver()
            let (entry, check) = try await state.withStore { store in
                let registry = DomainRegistry(store: store, policy: policy, publicSuffixes: publicSuffixes)
                do {
                    return try await registry.verify(domain, resolver: dns, by: currentActor)
                } catch let error as AdmissionError {
                    throw CommandFailure(message: error.description)
                }
            }
            if json {
                struct Verified: Encodable {
                    var registration: RegisteredDomain
                    var check: RegisteredDomain.DomainCheck
                    var challenge: ChallengeRecord?
                }
                try Terminal.json(Verified(registration: entry, check: check, challenge: ChallengeRecord(entry)))
            } else {
                Terminal.line(DomainPrinter.checkLine(entry, check))
            }
            if check.result != .found { throw ExitCode(1) }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a registered domain: its markup is admitted from now on (under production, only once verified).")
        @Argument var domain: String
        @OptionGroup var state: StateOptions
        func run() async throws {
            try await change(state) { registry in try await registry.approve(domain, by: currentActor) }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a domain: it is suspended, its markup refused until an operator approves it again (what was stored stays).")
        @Argument var domain: String
        @OptionGroup var state: StateOptions
        func run() async throws {
            try await change(state) { registry in try await registry.revoke(domain, by: currentActor) }
        }
    }

    struct TestMode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-mode",
            abstract: "Admit a verified domain's markup before approval, for the listed owners only, for a while.",
            discussion: """
                Markup from the domain is admitted only for the addresses in --owners (the sender's own test inboxes), \
                marked test-mode in the decision log and on each reservation, and for nobody else, until the time runs \
                out (--for, default 24h, at most the policy's maximum, 7d) or `test-mode DOMAIN off`. The domain must \
                have proved control (gateway domains verify).
                """)
        @Argument var domain: String
        @Argument(help: "on or off.") var value: String
        @Option(help: ArgumentHelp("The owner addresses, comma-separated.", valueName: "A,B")) var owners: String?
        @Option(name: .customLong("for"), help: ArgumentHelp("How long it stays on: 30m, 24h, 7d (default: the policy's, 24h).", valueName: "DURATION"))
        var duration: String?
        @OptionGroup var state: StateOptions

        func validate() throws {
            guard value == "on" || value == "off" else { throw ValidationError("say on or off") }
            if value == "on" && (owners ?? "").isEmpty { throw ValidationError("--owners is required to turn test mode on") }
            if let duration, parseDuration(duration) == nil {
                throw ValidationError("--for takes a duration: a number with s, m, h or d (30m, 24h, 7d); '\(duration)' is not one")
            }
        }

        func run() async throws {
            var listed: [OwnerAddress]? = nil
            if value == "on" {
                listed = try (owners ?? "").split(separator: ",").map {
                    try ownerOption(String($0).trimmingCharacters(in: .whitespaces), option: "--owners")
                }
            }
            let seconds = duration.flatMap(parseDuration)
            try await change(state) { registry in
                try await registry.setTestMode(domain, owners: listed, for: seconds, by: currentActor)
            }
        }
    }

    struct Hosts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set the hosts (besides the domain and below) that links in its markup may point to.")
        @Argument var domain: String
        @Argument(help: "The hosts, each covering its subdomains; none shows the current ones.") var hosts: [String] = []
        @Flag(help: "Remove every listed host.") var clear = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            guard clear || !hosts.isEmpty else {
                let name: DomainName
                do { name = try DomainName(normalizing: domain) } catch { throw CommandFailure(message: error.description, status: 2) }
                guard let entry = try await state.withStore({ try await $0.registeredDomain(name.ascii) }) else {
                    throw CommandFailure(message: "\(name.ascii) is not registered")
                }
                Terminal.line("\(entry.domain): links may point to \(([entry.domain] + entry.trust.hosts).joined(separator: ", ")) and below")
                return
            }
            try await change(state) { registry in try await registry.setHosts(domain, hosts: clear ? [] : hosts, by: currentActor) }
        }
    }

    struct Recheck: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Look up every proved domain's challenge record again now, as the server does daily.",
            discussion: """
                A record found for none of the policy's missingChecksBeforeSuspension checks in a row (3 by default) \
                suspends its domain; found again, the suspension is lifted. A DNS failure counts neither way.
                """)
        @OptionGroup var state: StateOptions
        @OptionGroup var resolver: ResolverOptions

        func run() async throws {
            let policy = try state.loadPolicy()
            let publicSuffixes = try state.publicSuffixes()
            let dns = try resolver.makeResolver()
            let results = try await state.withStore { store in
                try await DomainRegistry(store: store, policy: policy, publicSuffixes: publicSuffixes)
                    .recheck(resolver: dns, by: currentActor)
            }
            for (entry, check) in results { Terminal.line(DomainPrinter.checkLine(entry, check)) }
            if results.isEmpty { Terminal.line("no proved domains to check") }
        }
    }

    /// Runs a registry change under the policy and prints the registration afterwards.
    static func change(
        _ state: StateOptions, _ body: @escaping (DomainRegistry) async throws -> RegisteredDomain
    ) async throws {
        let policy = try state.loadPolicy()
        let publicSuffixes = try state.publicSuffixes()
        try await state.withStore { store in
            let registry = DomainRegistry(store: store, policy: policy, publicSuffixes: publicSuffixes)
            do {
                let entry = try await body(registry)
                Terminal.line(DomainPrinter.statusLine(entry, now: Date()))
            } catch let error as AdmissionError {
                throw CommandFailure(message: error.description)
            }
        }
    }
}

/// How the command line shows a registration.
enum DomainPrinter {
    /// `skyways.example: verified · test mode for 1 owner until …`.
    static func statusLine(_ entry: RegisteredDomain, now: Date) -> String {
        var line = "\(entry.domain): \(entry.status.rawValue)"
        if let suspension = entry.trust.suspension { line += " (\(suspension.reason))" }
        if let test = entry.trust.testMode, test.isActive(at: now) {
            line += " · test mode for \(test.owners.map(\.address).joined(separator: ", ")) until \(test.until.formatted(.iso8601))"
        }
        if !entry.trust.hosts.isEmpty { line += " · link hosts \(entry.trust.hosts.joined(separator: ", "))" }
        return line
    }

    /// What one lookup of the challenge record found.
    static func checkLine(_ entry: RegisteredDomain, _ check: RegisteredDomain.DomainCheck) -> String {
        let record = DomainLifecycle.recordName(of: entry.domain)
        switch check.result {
        case .found:
            return "\(entry.domain): \(entry.status.rawValue); \(record) found (answered by \(check.nameserver))"
        case .missing:
            return "\(entry.domain): \(entry.status.rawValue); \(record) not found (\(check.code ?? "no record") from \(check.nameserver))"
                + (entry.trust.missingChecks > 0 ? "; \(entry.trust.missingChecks) check\(entry.trust.missingChecks == 1 ? "" : "s") in a row" : "")
        case .failed:
            return "\(entry.domain): \(entry.status.rawValue); \(record) could not be looked up now (\(check.code ?? "dns error")); nothing changed"
        }
    }

    /// `gateway domains show`.
    static func lines(_ entry: RegisteredDomain, changes: [DomainChange], quotas: [QuotaUsage], now: Date) -> [String] {
        var lines = [statusLine(entry, now: now)]
        if let contact = entry.contact { lines.append("  contact: \(contact)") }
        lines.append("  registered \(entry.createdAt.formatted(.iso8601)), updated \(entry.updatedAt.formatted(.iso8601)) by \(entry.updatedBy)")
        if let record = ChallengeRecord(entry) {
            lines.append("  proof of control: \(record.zoneLine)")
        } else {
            lines.append("  proof of control: none asked yet (registered before proofs; gateway register \(entry.domain) makes one)")
        }
        if let verified = entry.trust.verifiedAt { lines.append("  verified \(verified.formatted(.iso8601))") }
        if let check = entry.trust.lastCheck {
            lines.append("  last check \(check.at.formatted(.iso8601)): \(check.result.rawValue)\(check.code.map { " (\($0))" } ?? "") from \(check.nameserver)"
                + (entry.trust.missingChecks > 0 ? "; missing \(entry.trust.missingChecks) in a row" : ""))
        }
        if let test = entry.trust.testMode, !test.isActive(at: now) {
            lines.append("  test mode ended \(test.until.formatted(.iso8601))")
        }
        for quota in quotas {
            lines.append("  quota \(quota.metric.rawValue): \(quota.used) of \(quota.limit) per \(quota.windowSeconds) s (window ends \(quota.windowEnd.formatted(.iso8601)))")
        }
        for change in changes {
            lines.append("  \(change.changedAt.formatted(.iso8601))  \(change.status.rawValue)  by \(change.changedBy)\(change.reason.map { ": \($0)" } ?? "")")
        }
        return lines
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
