import Admission
import ArgumentParser
import Foundation
import Store
import StoreBackends

/// `gateway store migrate|status|copy`: the operator's commands for the store itself.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "The store itself: migrate its schema, show its state, copy it to another backend, apply retention.",
        discussion: """
            The store is an SQLite file (the default, var/gateway.sqlite) or a PostgreSQL database \
            (postgres://USER@HOST:PORT/DATABASE?sslmode=MODE), named by --store, else GATEWAY_STORE.
            """,
        subcommands: [Migrate.self, Status.self, Copy.self, Prune.self]
    )

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply the policy's retention now: remove what it keeps no longer, and say how much.",
            discussion: """
                gateway serve does this itself every retention.sweepIntervalSeconds, on one node of a cluster. \
                Reservations go a set time after they end (with every earlier version), decision-log entries and \
                spooled messages a set time after they were written (see the policy's retention settings).
                """)
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let policy = try state.loadPolicy()
            let report = try await state.withStore { try await $0.prune(policy.retention.cutoffs(now: Date())) }
            if json { return try Terminal.json(report) }
            Terminal.line(
                "removed \(report.reservations) reservations (\(report.versions) earlier versions), "
                    + "\(report.decisionLogEntries) log entries, \(report.spooledMessages) spooled messages "
                    + "(\(policy.name) policy: reservations \(days(policy.retention.reservationsAfterEndDays)) after they end, "
                    + "log \(days(policy.retention.decisionLogDays)), spool \(days(policy.retention.spooledMessagesDays)))")
        }

        func days(_ value: Double) -> String {
            value == 0 ? "kept" : value == value.rounded() ? "\(Int(value)) days" : "\(value) days"
        }
    }

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring the store's schema up to this gateway's version (safe while other nodes start).",
            discussion: "Every command that writes migrates on opening too; this one says what it applied.")
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let location = try state.location()
            let applied = try await StateOptions.withStore(location, purpose: .migrate) { try await $0.migrate() }
            if json {
                struct Migrated: Encodable { var location: String; var applied: [String]; var schemaVersion: String }
                return try Terminal.json(
                    Migrated(location: location.description, applied: applied, schemaVersion: StoreSchema.current))
            }
            if applied.isEmpty {
                Terminal.line("\(location): schema \(StoreSchema.current), nothing to migrate")
            } else {
                Terminal.line("\(location): applied \(applied.joined(separator: ", ")); schema \(StoreSchema.current)")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the backend, the schema version and how many rows each part of the store holds.")
        @Flag(help: "Also compute the content digest (reads every row), as store copy verifies it.") var digest = false
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var state: StateOptions

        func run() async throws {
            let (status, contentDigest) = try await state.withStore(purpose: .inspect) { store in
                let status = try await store.status()
                guard digest, status.pendingMigrations.isEmpty else { return (status, String?.none) }
                return (status, try await StoreCopy.digest(of: store).value)
            }
            if json {
                struct Shown: Encodable { var status: StoreStatus; var digest: String? }
                return try Terminal.json(Shown(status: status, digest: contentDigest))
            }
            Terminal.line("backend   \(status.backend)")
            Terminal.line("location  \(status.location)")
            if status.pendingMigrations.isEmpty {
                Terminal.line("schema    \(status.schemaVersion ?? "none") (current)")
            } else {
                Terminal.line(
                    "schema    \(status.schemaVersion ?? "none"); pending \(status.pendingMigrations.joined(separator: ", ")) "
                        + "(run gateway store migrate)")
            }
            for table in StoreTable.allCases {
                guard let count = status.counts[table] else { continue }
                Terminal.line("  \(table.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) \(count)")
            }
            if let contentDigest { Terminal.line("digest    \(contentDigest)") }
        }
    }

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a whole store into an empty one (SQLite to PostgreSQL and back), verified.",
            discussion: """
                Every row is copied as it is (ids, times, history, log, registry, flags, spool, tokens), then the \
                target is read back and compared by counts and a content digest. Stop every writer of the source \
                first. The target is created and migrated when needed, and must hold no data.
                """)
        @Option(help: ArgumentHelp("The store to copy.", valueName: "PATH|URL")) var from: String
        @Option(help: ArgumentHelp("The empty store to copy into.", valueName: "PATH|URL")) var to: String
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let source = try Self.parse(from, option: "--from")
            let target = try Self.parse(to, option: "--to")
            guard source != target else { throw CommandFailure(message: "--from and --to name the same store", status: 2) }
            let report = try await StateOptions.withStore(source, purpose: .inspect) { sourceStore in
                let pending = try await sourceStore.status().pendingMigrations
                guard pending.isEmpty else {
                    throw CommandFailure(
                        message: "\(source) needs \(pending.joined(separator: ", ")); run gateway store migrate --store on it first")
                }
                return try await StateOptions.withStore(target) { targetStore in
                    do {
                        return try await StoreCopy.copy(from: sourceStore, to: targetStore)
                    } catch let error as StoreError {
                        throw CommandFailure(message: error.description)
                    }
                }
            }
            if json {
                struct Copied: Encodable { var from: String; var to: String; var report: StoreCopy.Report }
                return try Terminal.json(Copied(from: source.description, to: target.description, report: report))
            }
            let total = report.counts.values.reduce(0, +)
            Terminal.line("copied \(total) rows from \(source) to \(target)")
            for table in StoreTable.allCases {
                Terminal.line("  \(table.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) \(report.counts[table] ?? 0)")
            }
            Terminal.line("digest \(report.digest) (the target reads back the same)")
        }

        static func parse(_ text: String, option: String) throws(CommandFailure) -> StoreLocation {
            do {
                return try StoreLocation(parsing: text)
            } catch {
                throw CommandFailure(message: "\(option): \(error)", status: 2)
            }
        }
    }
}
