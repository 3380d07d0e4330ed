import Admission
import ArgumentParser
import Foundation
import GatewayServer
import Ingestion
import Publishing
import Reservations
import Store

struct DonateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "donate",
        abstract: "Ingest an app donation (a JSON document shaped like INInteraction + INGetReservationDetailsIntent).",
        discussion: """
            The same as POST /v1/donations: the reservations are read into the same model as markup, admitted through \
            the registry, the flags and the policy, stored with channel app, and logged. With --token (or \
            GATEWAY_APP_TOKEN) the app token proves the app; with --app alone an operator donates on the app's \
            behalf, which proves nothing about the app: admitted only under allow-unverified-sources.

            Exit status: 0 when admitted, 1 when refused (every problem at its field path; nothing stored).
            """
    )

    @Argument(help: ArgumentHelp("The donation (.json; - for standard input).", valueName: "FILE")) var file: String
    @Option(help: ArgumentHelp("Whose reservations these are.", valueName: "ADDRESS")) var owner: [String] = []
    @Option(help: ArgumentHelp("The app's token (default: GATEWAY_APP_TOKEN).", valueName: "SECRET")) var token: String?
    @Option(help: ArgumentHelp("Donate on this app's behalf, without its token (unverified).", valueName: "APP-ID"))
    var app: String?
    @Flag(help: "Print the report as JSON.") var json = false
    @OptionGroup var state: StateOptions

    func run() async throws {
        guard !owner.isEmpty else {
            throw ValidationError("--owner ADDRESS: a donation is for the owner of the device")
        }
        let owners = try owner.map { try ownerOption($0) }
        let bytes: [UInt8]
        do {
            bytes =
                file == "-"
                ? [UInt8](FileHandle.standardInput.readDataToEndOfFile())
                : [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw CommandFailure(message: "\(file): cannot be read (\(error.localizedDescription))", status: 2)
        }
        let secret = token ?? ProcessInfo.processInfo.environment["GATEWAY_APP_TOKEN"]
        let noKeys = try ResolverOptions.parse([])
        let report = try await withIngestor(state: state, resolver: noKeys) { ingestor in
            let identity: (app: String, verified: Bool)
            if let secret, !secret.isEmpty {
                guard let token = try await TokenAuthority(store: ingestor.environment.store).authenticate(secret),
                    token.role == .app
                else { throw CommandFailure(message: "auth.invalid-token: the token is not a valid app token") }
                if let app, app != token.subject {
                    throw CommandFailure(message: "auth.forbidden: this app token is \(token.subject)'s, not \(app)'s")
                }
                identity = (token.subject, true)
            } else if let app {
                identity = (app, false)
            } else {
                throw CommandFailure(message: "give --token SECRET (or GATEWAY_APP_TOKEN), or --app APP-ID", status: 2)
            }
            return try await ingestor.ingestDonation(
                bytes, app: identity.app, verified: identity.verified, owners: owners)
        }
        if json { try Terminal.json(report) } else { ReportPrinter.print(report) }
        if report.verdict != .admitted { throw ExitCode(1) }
    }
}

struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Bind booking apps to registered domains: their donations are admitted as the domain's.",
        subcommands: [Register.self, List.self]
    )

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bind an app (its bundle identifier) to a registered domain; then issue its token.",
            discussion: "An app is bound to one domain. Next: gateway tokens issue app APP-ID.")
        @Argument(help: "The app's bundle identifier (com.airline.app).") var app: String
        @Option(help: "The registered domain it donates for.") var domain: String
        @OptionGroup var state: StateOptions

        func run() async throws {
            let policy = try state.loadPolicy()
            let suffixes = try state.publicSuffixes()
            do {
                let entry = try await state.withStore { store in
                    try await DomainRegistry(store: store, policy: policy, publicSuffixes: suffixes)
                        .registerApp(app, domain: domain, by: currentActor)
                }
                Terminal.line(
                    "app \(app) bound to \(entry.domain) (\(entry.status.rawValue)); next: gateway tokens issue app \(app)"
                )
            } catch let error as AdmissionError {
                throw CommandFailure(message: error.description)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps and the domains they are bound to.")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let domains = try await state.withStore { try await $0.registeredDomains(status: nil) }
            struct Binding: Encodable { var app: String; var domain: String; var status: String }
            let bindings = domains.flatMap { entry in
                entry.trust.apps.map { Binding(app: $0, domain: entry.domain, status: entry.status.rawValue) }
            }
            if json { return try Terminal.json(bindings) }
            for binding in bindings { Terminal.line("\(binding.app) · \(binding.domain) (\(binding.status))") }
            if bindings.isEmpty { Terminal.line("no apps; gateway apps register APP-ID --domain D") }
        }
    }
}

struct SuggestionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suggestions",
        abstract: "What is relevant to an owner now (or --at): open check-ins, departures soon, what starts today.")
    @Option(help: ArgumentHelp("Whose reservations.", valueName: "ADDRESS")) var owner: String
    @Option(help: ArgumentHelp("The moment (ISO 8601 with offset; default now).", valueName: "TIME")) var at: String?
    @Option(help: "How many hours ahead check-ins and departures count (default 6).") var hours: Double = 6
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var state: StateOptions

    func run() async throws {
        let owner = try ownerOption(self.owner)
        var instant = Date()
        if let at {
            guard let parsed = ReservationAction.instant(at) else {
                throw ValidationError("--at \(at): give an ISO 8601 date-time with an offset (2027-03-04T08:00:00Z)")
            }
            instant = parsed
        }
        let records = try await state.withStore { try await $0.list(owner: owner) }
        let suggestions = Suggestion.suggestions(for: records, at: instant, horizon: hours * 3600)
        if json { return try Terminal.json(suggestions) }
        for suggestion in suggestions {
            var line =
                "\(suggestion.reason.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) \(suggestion.time) \(suggestion.reservation.summary)"
            if let url = suggestion.url { line += " · \(url)" }
            if let action = suggestion.action, action.windowInferred {
                line += " · window inferred (24 h before departure)"
            }
            Terminal.line(line)
        }
        if suggestions.isEmpty { Terminal.line("nothing to suggest at \(instant.formatted(.iso8601))") }
    }
}
