import DNS
import Foundation
import TestSupport
import Testing

/// The owner decides (issue 16), through the real `gateway serve` and command line: signed mail for two owners over
/// LMTP and HTTP, consent in the calendar, the export, and erasure that leaves no trace of the forgotten owner in the
/// database files (SQLite's file, WAL and shared memory, read as raw bytes), in a `pg_dump`, or in the server's log.
@Suite("The owner decides, end to end", .serialized)
struct OwnerEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let sofia = "sofia@guest.example.net"
    static let nordicRail = (domain: "nordic-rail.example", selector: "mail2026", algorithm: "ed25519")
    /// What must be gone once Eva is forgotten: her address and her reservation numbers.
    static let evaTraces = [eva, "EVA4711", "EVA5822"]
    /// What must stay: Sofia's, and the booking they share (it is Sofia's too).
    static let sofiaTraces = [sofia, "SOF0815", "SHR9090"]

    /// Eva's mail (EVA4711 twice, the second a change: two versions; EVA5822), Sofia's (SOF0815), and SHR9090 for both.
    static func mails(_ sender: Sender, cli: GatewayCLI) async throws -> (eva: [String], sofia: [String], shared: String) {
        func train(_ number: String, to: String, name: String, train: String = "812", date: String, id: String) async throws -> String {
            try await sender.sign(
                BookingMail.train(
                    reservationNumber: number, to: to, messageID: "\(number).\(id)@nordic-rail.example", trainNumber: train,
                    date: date, underName: name),
                cli: cli, name: "\(number)-\(id)")
        }
        let eva = [
            try await train("EVA4711", to: "Eva Green <\(Self.eva)>", name: "Eva Green", train: "801", date: "Mon, 02 Nov 2026 09:14:03 +0100", id: "1"),
            try await train("EVA4711", to: "Eva Green <\(Self.eva)>", name: "Eva Green", train: "802", date: "Tue, 03 Nov 2026 09:14:03 +0100", id: "2"),
            try await train("EVA5822", to: "Eva Green <\(Self.eva)>", name: "Eva Green", date: "Tue, 03 Nov 2026 10:00:00 +0100", id: "1"),
        ]
        let sofia = [
            try await train("SOF0815", to: "Sofia Toudji <\(Self.sofia)>", name: "Sofia Toudji", date: "Tue, 03 Nov 2026 11:00:00 +0100", id: "1")
        ]
        let shared = try await train(
            "SHR9090", to: "Eva Green <\(Self.eva)>, Sofia Toudji <\(Self.sofia)>", name: "Sofia Toudji",
            date: "Tue, 03 Nov 2026 12:00:00 +0100", id: "1")
        return (eva, sofia, shared)
    }

    /// Delivers the mail (Eva's and Sofia's over LMTP, the shared one over HTTP for both), then checks the export and
    /// the consent, forgets Eva through the API with her own token, and hands `search` what to look for.
    static func deliverExportAndForget(
        _ server: ServerProcess, cli: GatewayCLI, sender: Sender
    ) async throws {
        let (evaMail, sofiaMail, shared) = try await mails(sender, cli: cli)
        for file in evaMail {
            let replies = try await server.deliverWithSwaks(file, to: [eva])
            #expect(replies.contains { $0.hasPrefix("250 2.0.0 admitted") }, "\(replies)")
        }
        for file in sofiaMail {
            let replies = try await server.deliverWithSwaks(file, to: [sofia])
            #expect(replies.contains { $0.hasPrefix("250 2.0.0 admitted") }, "\(replies)")
        }
        let senderToken = try await server.curl("POST", "/v1/tokens", token: server.adminToken, json: ["role": "sender", "subject": nordicRail.domain])
            .decode(IssuedTokenResponse.self).secret
        let submitted = try await server.curl(
            "POST", "/v1/messages", token: senderToken, body: Array(try Data(contentsOf: URL(fileURLWithPath: shared))),
            contentType: "message/rfc822")
        #expect(submitted.status == 200 && submitted.text.contains(#""verdict":"admitted""#), "\(submitted.text)")

        // Suggested until Eva decides; accepted shows as confirmed, the rest as tentative.
        let token = try await server.ownerToken(eva).secret
        let mine = try await server.reservations(token: token)
        #expect(Set(mine.map(\.containerReference)) == ["EVA4711", "EVA5822", "SHR9090"])
        let evas = try #require(mine.first { $0.containerReference == "EVA4711" })
        let accepted = try await server.curl("POST", "/v1/owners/\(eva)/reservations/\(evas.id)/accept", token: token)
        #expect(accepted.status == 200, "\(accepted.text)")
        let trusted = try await server.curl("PUT", "/v1/owners/\(eva)/senders/\(nordicRail.domain)", token: token, json: ["decision": "trust"])
        #expect(trusted.status == 200, "\(trusted.text)")
        let calendar = try await server.curl("GET", "/calendars/\(eva).ics", token: token)
        #expect(calendar.text.components(separatedBy: "STATUS:CONFIRMED").count == 2)
        #expect(calendar.text.components(separatedBy: "STATUS:TENTATIVE").count == 3)

        // The export: every item created for Eva, with its versions and provenance, and nothing of Sofia's.
        let export = try await server.curl("GET", "/v1/owners/\(eva)/export", token: token)
        #expect(export.status == 200)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(export.body)) as? [String: Any])
        let reservations = try #require(document["reservations"] as? [[String: Any]])
        #expect(Set(reservations.compactMap { $0["containerReference"] as? String }) == ["EVA4711", "EVA5822", "SHR9090"])
        let first = try #require(reservations.first { $0["containerReference"] as? String == "EVA4711" })
        let versions = try #require(first["versions"] as? [[String: Any]])
        #expect(versions.count == 2)
        let provenance = try #require((versions.first?["provenance"] as? [[String: Any]])?.first)
        #expect(provenance["channel"] as? String == "lmtp")
        #expect((provenance["dkim"] as? [String: Any])?["selector"] as? String == nordicRail.selector)
        #expect((first["consent"] as? [String: Any])?["state"] as? String == "accepted")
        #expect((document["decisionLog"] as? [[String: Any]])?.count == 4)
        #expect((document["tokens"] as? [[String: Any]])?.count == 1)
        #expect((document["senders"] as? [[String: Any]])?.first?["decision"] as? String == "trust")
        // Nothing of Sofia's: the shared email's log entry is Eva's too, exported without Sofia and her item.
        #expect(!export.text.contains("SOF0815"))
        #expect(!export.text.contains("sofia"))
        #expect((document["decisionLog"] as? [[String: Any]] ?? []).allSatisfy { ($0["owners"] as? [String]) == [eva] })

        // Eva forgets herself, with her own token.
        let forgot = try await server.curl("DELETE", "/v1/owners/\(eva)", token: token)
        #expect(forgot.status == 200, "\(forgot.text)")
        struct Forgot: Decodable {
            var reservations: Int
            var versions: Int
            var decisionLogEntries: Int
            var decisionLogEntriesRedacted: Int
            var tokens: Int
            var senderPreferences: Int
        }
        let counts = try forgot.decode(Forgot.self)
        #expect(counts.reservations == 3 && counts.versions == 1 && counts.tokens == 1 && counts.senderPreferences == 1)
        #expect(counts.decisionLogEntries == 3 && counts.decisionLogEntriesRedacted == 1)
        #expect(try await server.curl("GET", "/v1/reservations", token: token).status == 401)
        // Sofia keeps hers, the shared one included.
        let sofiaToken = try await server.ownerToken(sofia).secret
        #expect(Set(try await server.reservations(token: sofiaToken).map(\.containerReference)) == ["SOF0815", "SHR9090"])
    }

    /// Whether `bytes` hold `text`, ASCII case ignored, as text or as the hex a dump writes bytea in.
    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let lowered = bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        let needles = [Array(text.lowercased().utf8), Array(text.lowercased().utf8.map { String(format: "%02x", $0) }.joined().utf8)]
        return needles.contains { needle in
            guard let first = needle.first else { return false }
            var index = lowered.startIndex
            while let found = lowered[index...].firstIndex(of: first) {
                if found + needle.count <= lowered.count, lowered[found..<found + needle.count].elementsEqual(needle) { return true }
                index = found + 1
            }
            return false
        }
    }

    @Test("SQLite: mail for Eva and Sofia, Eva forgets herself: no trace of her in the files or the log, Sofia intact")
    func erasureOnSQLite() async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, dnsmasq in
            let sender = try #require(senders[Self.nordicRail.domain])
            #expect(try await cli.run(["register", Self.nordicRail.domain], resolver: true).status == 0)
            let options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", dnsmasq.nameserver.description])
            let store = cli.store
            func files() -> [UInt8] {
                ["", "-wal", "-shm", "-journal"].flatMap { [UInt8](FileManager.default.contents(atPath: store + $0) ?? Data()) }
            }
            try await ServerProcess.run(options) { server in
                try await Self.deliverExportAndForget(server, cli: cli, sender: sender)
                // While the server runs, its files as they are on disk.
                let bytes = files()
                for trace in Self.evaTraces { #expect(!Self.contains(bytes, trace), "\(trace) is still in the database files") }
                for trace in Self.sofiaTraces { #expect(Self.contains(bytes, trace), "\(trace) is gone from the database files") }
                for trace in Self.evaTraces { #expect(!server.output.contains(trace), "\(trace) is in the server's log") }
            }
            let stopped = files()
            for trace in Self.evaTraces { #expect(!Self.contains(stopped, trace), "\(trace) is in the files after the stop") }
            // The command line still reads Sofia's, and nothing of Eva's.
            #expect(try await cli.reservations(owner: Self.sofia).count == 2)
            #expect(try await cli.reservations(owner: Self.eva).isEmpty)
        }
    }

    @Test("PostgreSQL: the same, and a pg_dump holds no trace of Eva")
    func erasureOnPostgreSQL() async throws {
        let postgres = try await PostgresServer.shared()
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, dnsmasq in
            let sender = try #require(senders[Self.nordicRail.domain])
            try await postgres.withDatabase { url in
                #expect(try await cli.run(["register", Self.nordicRail.domain], resolver: true, store: url).status == 0)
                var options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", dnsmasq.nameserver.description])
                options.storeURL = url
                let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
                try await ServerProcess.run(options) { server in
                    try await Self.deliverExportAndForget(server, cli: cli, sender: sender)
                    let dump = Array(try await postgres.dump(database: database).utf8)
                    for trace in Self.evaTraces { #expect(!Self.contains(dump, trace), "\(trace) is still in the dump") }
                    for trace in Self.sofiaTraces { #expect(Self.contains(dump, trace), "\(trace) is gone from the dump") }
                    for trace in Self.evaTraces { #expect(!server.output.contains(trace), "\(trace) is in the server's log") }
                }
            }
        }
    }

    @Test("gateway owners: accept, sender, profile, export and forget from the command line")
    func ownersFromTheCommandLine() async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, _ in
            let sender = try #require(senders[Self.nordicRail.domain])
            #expect(try await cli.run(["register", Self.nordicRail.domain], resolver: true).status == 0)
            let (evaMail, sofiaMail, _) = try await Self.mails(sender, cli: cli)
            for file in evaMail + sofiaMail { _ = try await cli.ingest(file) }

            let listed = try await cli.run(["reservations", "list", "--owner", Self.eva])
            #expect(listed.stdout.contains("suggested"), "\(listed.stdout)")
            let record = try #require(try await cli.reservations(owner: Self.eva).first)
            let early = try await cli.run(["owners", "sender", Self.eva, Self.nordicRail.domain, "trust"])
            #expect(early.status == 1 && early.stderr.contains("consent.sender-not-accepted"), "\(early.stderr)")
            let accepted = try await cli.run(["owners", "accept", Self.eva, String(record.id)])
            #expect(accepted.status == 0, "\(accepted.stderr)")
            #expect(accepted.stdout.contains("suggested → accepted"))
            #expect(accepted.stdout.contains("learned: bookings under Eva Green are \(Self.eva)'s"))
            #expect(try await cli.run(["owners", "sender", Self.eva, "NORDIC-RAIL.example", "trust"]).stdout == "\(Self.eva): trust nordic-rail.example\n")
            let profile = try await cli.run(["owners", "profile", Self.eva, "--suggested", "hidden"])
            #expect(profile.stdout.contains("suggestions  hidden") && profile.stdout.contains("learned      Eva Green"))

            // Provenance per version in `reservations show`.
            let shown = try await cli.run(["reservations", "show", "EVA4711", "--owner", Self.eva])
            #expect(shown.stdout.contains("consent: accepted (owner)"), "\(shown.stdout)")
            #expect(shown.stdout.contains("email from nordic-rail.example · DKIM d=nordic-rail.example s=mail2026"), "\(shown.stdout)")
            #expect(shown.stdout.contains("policy development"))

            let export = try await cli.run(["owners", "export", Self.eva])
            #expect(export.status == 0)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as? [String: Any])
            #expect((document["reservations"] as? [Any])?.count == 2)
            #expect(!export.stdout.contains("SOF0815") && !export.stdout.contains(Self.sofia))

            let forgot = try await cli.run(["owners", "forget", Self.eva])
            #expect(forgot.status == 0, "\(forgot.stderr)")
            #expect(forgot.stdout.hasPrefix("forgot \(Self.eva): "))
            #expect(forgot.stdout.contains("reservations          2"))
            #expect(forgot.stdout.contains("no deleted byte remains"))
            #expect(try await cli.reservations(owner: Self.eva).isEmpty)
            #expect(try await cli.reservations(owner: Self.sofia).count == 1)

            // The development policy keeps reservations; one that keeps them a day after they end removes June's train.
            let kept = try await cli.run(["store", "prune", "--json"])
            #expect(kept.stdout.contains(#""reservations":0"#), "\(kept.stdout)")
            let policy = cli.directory.appendingPathComponent("short.yaml")
            try Data("name: short\nretention: {reservationsAfterEndDays: 1}\n".utf8).write(to: policy)
            let pruned = try await cli.run(["store", "prune", "--json"], policy: policy.path)
            #expect(pruned.status == 0, "\(pruned.stderr)")
            #expect(pruned.stdout.contains(#""reservations":1"#), "\(pruned.stdout)")
            #expect(try await cli.reservations(owner: Self.sofia).isEmpty)
        }
    }
}
