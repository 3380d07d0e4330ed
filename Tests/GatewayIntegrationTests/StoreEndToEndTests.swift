import Foundation
import TestSupport
import Testing

/// The store through the real command line: ordering by the sender's time (issue 13, defect 1), the owner in the log,
/// choosing the store (`--store`, `GATEWAY_STORE`), a dry run that creates nothing, and `gateway store
/// migrate|status|copy` between SQLite and a real PostgreSQL.
@Suite("The store end to end", .serialized)
struct StoreEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let nordicRail = (domain: "nordic-rail.example", selector: "mail2026", algorithm: "ed25519")

    /// Nordic Rail's booking B9C8 by real signed mail, without `modifiedTime`: train 801, then the change to 802 a day
    /// later, then the first email delivered again (anyone who holds it can re-send it). The signed `Date:` orders
    /// them: the late copy is stale, the reservation stays train 802 at version 2.
    @Test("Train 801, update 802, then 801 again: stays 802, reported stale")
    func anOlderSignedMessageIsStale() async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, _ in
            let sender = try #require(senders[Self.nordicRail.domain])
            #expect(try await cli.run(["register", Self.nordicRail.domain], resolver: true).status == 0)
            let first = try await sender.sign(
                BookingMail.train(
                    reservationNumber: "B9C8", to: "Eva Green <\(Self.eva)>", messageID: "B9C8.1@nordic-rail.example",
                    trainNumber: "801", date: "Mon, 02 Nov 2026 09:14:03 +0100"),
                cli: cli, name: "train-801")
            let update = try await sender.sign(
                BookingMail.train(
                    reservationNumber: "B9C8", to: "Eva Green <\(Self.eva)>", messageID: "B9C8.2@nordic-rail.example",
                    trainNumber: "802", date: "Tue, 03 Nov 2026 11:40:00 +0100"),
                cli: cli, name: "train-802")

            let (created, _) = try await cli.ingest(first)
            #expect(created.items.map(\.outcome) == ["created"])
            let (updated, _) = try await cli.ingest(update)
            #expect(updated.items.map(\.outcome) == ["updated"])
            #expect(updated.items.first?.version == 2)

            let (late, status) = try await cli.ingest(first)
            #expect(status == 0)
            #expect(late.verdict == "admitted")
            #expect(late.items.map(\.outcome) == ["stale"])

            let stored = try #require(try await cli.show("B9C8", owner: Self.eva).first)
            #expect(stored.version == 2)
            #expect(stored.summary.contains("train 802"))
            #expect(stored.history?.count == 2)

            // The log names the owner of each item, as one typed address.
            let log = try await cli.log(domain: Self.nordicRail.domain)
            #expect(log.map { $0.reservations.first?.outcome?.outcome } == ["created", "updated", "stale"])
            #expect(log.allSatisfy { $0.owners == [Self.eva] && $0.reservations.allSatisfy { $0.owner == Self.eva } })
            let text = try await cli.run(["log", "--domain", Self.nordicRail.domain])
            #expect(text.stdout.contains("for \(Self.eva)"))
            #expect(text.stdout.contains("B9C8 → \(Self.eva): stale"))
        }
    }

    /// Issue 13: a dry run in an empty directory stores nothing, so it creates no `var/gateway.sqlite` either.
    @Test("gateway check in an empty directory creates no store")
    func checkCreatesNoStore() async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, _ in
            let sender = try #require(senders[Self.nordicRail.domain])
            let email = try await sender.sign(
                BookingMail.train(reservationNumber: "B9C8", to: Self.eva, messageID: "B9C8.1@nordic-rail.example"),
                cli: cli, name: "train")
            let result = try await cli.run(
                ["check", email, "--json", "--policy", "development", "--nameserver", cli.nameserver], policy: nil)
            #expect(result.status == 1, "\(result.stderr)")
            let report = try JSONDecoder().decode(IngestReport.self, from: try #require(result.jsonLines.first))
            #expect(report.dryRun && report.codes == ["registry.domain-not-registered"])
            #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("var").path))
        }
    }

    /// Issue 19: a store argument that looks like a URL of an unknown scheme is refused, never a folder named after it.
    @Test(
        "An unknown store scheme is refused, from --store or GATEWAY_STORE",
        arguments: ["postgres:gateway", "mysql://root@db/gateway", "http://example.com/store", "postgress://db/x"])
    func unknownStoreSchemesAreRefused(store: String) async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cli = GatewayCLI(directory: directory, nameserver: "127.0.0.1:53")
        let flag = try await cli.run(["domains", "list"], store: store)
        #expect(flag.status == 2)
        #expect(flag.stderr.contains("--store: store.location-invalid"))
        let variable = try await cli.run(["domains", "list"], policy: nil, environment: ["GATEWAY_STORE": store])
        #expect(variable.status == 2)
        #expect(variable.stderr.contains("GATEWAY_STORE: store.location-invalid"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// The same commands on PostgreSQL; then the whole store copied SQLite → PostgreSQL → SQLite with the same
    /// digest, and `store status` reading the copies.
    @Test("store migrate, status and copy between SQLite and PostgreSQL")
    func storeCommandsAcrossBackends() async throws {
        let server = try await PostgresServer.shared()
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, _ in
            let sender = try #require(senders[Self.nordicRail.domain])
            let email = try await sender.sign(
                BookingMail.train(reservationNumber: "B9C8", to: Self.eva, messageID: "B9C8.1@nordic-rail.example"),
                cli: cli, name: "train")
            try await server.withDatabase { primary in
                // A new database: migrate says what it applied, then that nothing is left.
                let migrated = try await cli.run(["store", "migrate"], policy: nil, environment: ["GATEWAY_STORE": primary])
                #expect(migrated.status == 0, "\(migrated.stderr)")
                #expect(migrated.stdout.contains("applied v3"))
                #expect(try await cli.run(["store", "migrate", "--store", primary], policy: nil).stdout.contains("nothing to migrate"))

                // The pipeline on PostgreSQL, the password from PGPASSWORD (trust auth accepts any).
                #expect(try await cli.run(["register", Self.nordicRail.domain], resolver: true, store: primary).status == 0)
                let ingested = try await cli.run(
                    ["ingest", "email", email, "--json"], resolver: true, store: primary, environment: ["PGPASSWORD": "pw"])
                #expect(ingested.status == 0, "\(ingested.stderr)")
                #expect(ingested.stdout.contains("\"outcome\":\"created\""))
                let again = try await cli.run(["ingest", "email", email, "--json"], resolver: true, store: primary)
                #expect(again.stdout.contains("\"outcome\":\"unchanged\""))

                let status = try await cli.run(["store", "status", "--store", primary, "--json", "--digest"], policy: nil)
                #expect(status.status == 0, "\(status.stderr)")
                let shown = try JSONDecoder().decode(ShownStatus.self, from: Data(status.stdout.utf8))
                #expect(shown.status.backend == "postgresql")
                #expect(
                    shown.status.schemaVersion == shown.status.knownSchemaVersion
                        && shown.status.pendingMigrations.isEmpty)
                #expect(shown.status.counts["reservations"] == 1 && shown.status.counts["decision-log"] == 2)

                // PostgreSQL → SQLite → PostgreSQL: the same digest all the way.
                let sqlite = cli.directory.appendingPathComponent("copy.sqlite").path
                let down = try await cli.run(["store", "copy", "--from", primary, "--to", sqlite, "--json"], policy: nil)
                #expect(down.status == 0, "\(down.stderr)")
                let first = try JSONDecoder().decode(Copied.self, from: Data(down.stdout.utf8))
                #expect(first.report.digest == shown.digest)
                try await server.withDatabase { second in
                    let up = try await cli.run(["store", "copy", "--from", "sqlite:" + sqlite, "--to", second, "--json"], policy: nil)
                    #expect(up.status == 0, "\(up.stderr)")
                    let back = try JSONDecoder().decode(Copied.self, from: Data(up.stdout.utf8))
                    #expect(back.report.digest == first.report.digest)
                    #expect(back.report.counts == first.report.counts)
                    let text = try await cli.run(["store", "status", "--store", second], policy: nil)
                    #expect(text.stdout.contains("backend   postgresql") && text.stdout.contains("schema    \(shown.status.knownSchemaVersion) (current)"))
                    // A target that holds data is refused.
                    let refused = try await cli.run(["store", "copy", "--from", sqlite, "--to", second], policy: nil)
                    #expect(refused.status == 1 && refused.stderr.contains("store.copy-target-not-empty"))
                }
            }
        }
    }

    /// A wrong or unreachable URL is one clear line naming the URL without its password.
    @Test("An unreachable PostgreSQL is a clear error without the password")
    func anUnreachableDatabaseIsAClearError() async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cli = GatewayCLI(directory: directory, nameserver: "127.0.0.1:53")
        let port = try unusedLoopbackPort()
        let result = try await cli.run(
            ["domains", "list"], store: "postgres://ops:hunter2@127.0.0.1:\(port)/gateway?sslmode=disable&connect_timeout=2")
        #expect(result.status == 1)
        #expect(result.stderr.contains("store.unavailable"))
        #expect(result.stderr.contains("postgres://ops@127.0.0.1:\(port)/gateway"))
        #expect(!result.stderr.contains("hunter2"))
    }

    struct ShownStatus: Decodable {
        struct Status: Decodable {
            var backend: String
            var schemaVersion: String?
            var knownSchemaVersion: String
            var pendingMigrations: [String]
            var counts: [String: Int]
        }
        var status: Status
        var digest: String?
    }

    struct Copied: Decodable {
        struct Report: Decodable {
            var counts: [String: Int]
            var digest: String
        }
        var report: Report
    }
}
