import ArgumentParser
import DKIM
import Foundation
import Ingestion
import Store
import StoreBackends
import WebFetch

struct IngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Authenticate, extract, admit and store reservation markup.",
        subcommands: [Email.self, URLPage.self]
    )

    struct URLPage: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "url",
            abstract: "Fetch a booking page over HTTPS and ingest its markup.",
            discussion: """
                The gateway fetches the page itself: https only (http only under allow-unverified-sources), a \
                certificate that validates for the host (the system trust store plus the policy's bundles), redirects \
                only to https URLs on registered domains (at most five), a public address, size and time limits, HTML \
                only. The page's host must be registered and approved (or allow-any-domain on).

                Exit status: 0 when admitted, 1 when refused.
                """
        )

        @Argument(help: "The page's https:// URL.") var url: String
        @Option(help: ArgumentHelp("Whose reservations these are.", valueName: "ADDRESS")) var owner: String
        @Flag(help: "Print the report as JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            guard let parsed = URL(string: url), parsed.scheme != nil, parsed.host != nil else {
                throw ValidationError("\(url) is not an absolute URL such as https://booking.example.com/trip/B9C8")
            }
            // A page needs no DKIM keys: the default resolver options. They are parsed from no
            // arguments, because a ParsableArguments made with `init()` traps when read.
            let noKeys = try ResolverOptions.parse([])
            let report = try await withIngestor(state: state, resolver: noKeys) { ingestor in
                try await ingestPage(parsed, owners: [try ownerOption(owner)], dryRun: false, ingestor, policy: state.policy)
            }
            if json { try Terminal.json(report) } else { ReportPrinter.print(report) }
            if report.verdict != .admitted { throw ExitCode(1) }
        }
    }

    struct Email: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ingest emails: DKIM, alignment, registry, markup, then the store.",
            discussion: """
                Prints, per reservation: created, updated, unchanged, stale, cancelled, or rejected with its codes. \
                A DKIM lookup that fails for now (temperror) defers the message to the spool for `gateway retry`.

                Exit status: 0 when every message was admitted (or deferred), 1 when any was refused.
                """
        )

        @Argument(help: ArgumentHelp("Messages (.eml files; - for standard input).", valueName: "FILE"))
        var files: [String]

        @Option(help: ArgumentHelp("The owner of the reservations (default: each address of the signed To and Cc fields).", valueName: "ADDRESS"))
        var owner: String?

        @Flag(help: "Print one JSON report per message, one per line.")
        var json = false

        @OptionGroup var state: StateOptions
        @OptionGroup var resolver: ResolverOptions

        func run() async throws {
            let owners = try owner.map { [try ownerOption($0)] } ?? []
            let allAdmitted = try await withIngestor(state: state, resolver: resolver) { ingestor in
                var allAdmitted = true
                var counts: [String: Int] = [:]
                // Several messages in flight, as the server has (the sandbox's workers busy, the store's group commit
                // at work), so that a batch goes as fast per email as the server path; reports print in file order.
                let inFlight = min(files.count, 4 * ProcessInfo.processInfo.activeProcessorCount)
                try await withThrowingTaskGroup(of: (Int, IngestionReport).self) { group in
                    var reports: [Int: IngestionReport] = [:]
                    var next = 0
                    var printed = 0
                    func submit() throws {
                        let index = next
                        let file = files[index]
                        next += 1
                        let bytes = try Terminal.read(file)
                        group.addTask { (index, try await ingestor.ingestEmail(bytes, source: file, owners: owners)) }
                    }
                    while next < inFlight { try submit() }
                    while let (index, report) = try await group.next() {
                        reports[index] = report
                        if next < files.count { try submit() }
                        while let report = reports.removeValue(forKey: printed) {
                            printed += 1
                            allAdmitted = allAdmitted && (report.verdict == .admitted || report.verdict == .deferred)
                            counts[report.isWithoutMarkup ? "without markup" : report.verdict.rawValue, default: 0] += 1
                            for item in report.items { counts[item.outcome, default: 0] += 1 }
                            if json { try Terminal.json(report) } else { ReportPrinter.print(report) }
                            if let hint = await resolver.keysHint(
                                forMessageAt: files[printed - 1],
                                keyNotFound: report.codes.contains(DKIMError.Code.keyNotFound.description))
                            {
                                Terminal.error(hint)
                            }
                            if !json && files.count >= 50 && printed % 50 == 0 {
                                Terminal.error("\(printed) of \(files.count) messages…", prefixed: false)
                            }
                        }
                    }
                }
                if !json && files.count > 1 {
                    let order = [
                        "admitted", "partial", "rejected", "deferred", "without markup", "created", "updated", "unchanged",
                        "stale", "cancelled",
                    ]
                    let summary = order.compactMap { key in counts[key].map { "\($0) \(key)" } }.joined(separator: ", ")
                    Terminal.line("\(files.count) messages: \(summary)")
                }
                return allAdmitted
            }
            if !allAdmitted { throw ExitCode(1) }
        }
    }
}

struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Say what ingesting an email or a page would decide, storing nothing (a dry run).",
        discussion: "Exit status: 0 when it would be admitted, 1 otherwise."
    )

    @Argument(help: ArgumentHelp("An .eml message (- for standard input), or a page's https:// URL, which is fetched.", valueName: "FILE|URL"))
    var file: String

    @Option(help: ArgumentHelp("Check for this owner (default: the signed To and Cc addresses).", valueName: "ADDRESS"))
    var owner: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    @OptionGroup var state: StateOptions
    @OptionGroup var resolver: ResolverOptions

    func run() async throws {
        let owners = try owner.map { [try ownerOption($0)] } ?? []
        // A dry run: an SQLite store that does not exist yet is not created.
        let report = try await withIngestor(state: state, resolver: resolver, purpose: .dryRun) { ingestor in
            if file.hasPrefix("https://") || file.hasPrefix("http://"), let url = URL(string: file) {
                return try await ingestPage(url, owners: owners, dryRun: true, ingestor, policy: state.policy)
            }
            return try await ingestor.ingestEmail(try Terminal.read(file), source: file, owners: owners, dryRun: true)
        }
        if json { try Terminal.json(report) } else { ReportPrinter.print(report) }
        if let hint = await resolver.keysHint(
            forMessageAt: file, keyNotFound: report.codes.contains(DKIMError.Code.keyNotFound.description))
        {
            Terminal.error(hint)
        }
        if report.verdict != .admitted { throw ExitCode(1) }
    }
}

struct RetryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Ingest again the messages deferred by a DNS failure (temperror)."
    )

    @Flag(help: "Only those whose next attempt is due (default: all of them, now).")
    var onlyDue = false

    @Flag(help: "Print one JSON report per message.")
    var json = false

    @OptionGroup var state: StateOptions
    @OptionGroup var resolver: ResolverOptions

    func run() async throws {
        let reports = try await withIngestor(state: state, resolver: resolver) { ingestor in
            try await ingestor.retrySpooled(onlyDue: onlyDue)
        }
        for report in reports {
            if json { try Terminal.json(report) } else { ReportPrinter.print(report) }
        }
        if !json { Terminal.line("\(reports.count) deferred message\(reports.count == 1 ? "" : "s") retried") }
    }
}

/// `Ingestor.ingestPage`, with a policy whose web settings cannot make a fetcher (an unreadable
/// trust bundle) reported as the usage error it is: status 2, naming the policy.
fileprivate func ingestPage(_ url: URL, owners: [OwnerAddress], dryRun: Bool, _ ingestor: Ingestor, policy: String) async throws -> IngestionReport {
    do {
        return try await ingestor.ingestPage(url, owners: owners, dryRun: dryRun)
    } catch let error as FetchError {
        throw CommandFailure(message: "--policy \(policy): \(error)", status: 2)
    }
}
