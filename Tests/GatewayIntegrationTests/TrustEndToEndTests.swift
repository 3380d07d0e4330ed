import DNS
import Foundation
import TestSupport
import Testing

/// Issue 15 end to end: the real command line and `gateway serve` against a real DNS server on loopback (dnsmasq,
/// restarted on the same port when a test publishes or removes a record), signed mail made by `gateway dkim sign`, a
/// real SQLite store read back as raw bytes.
@Suite("Sender trust end to end", .serialized)
struct TrustEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let tom = "tom@guest.example.net"

    /// A sender's DKIM key in DNS, the challenge record when published, and dnsmasq restarted on its port whenever the
    /// records change.
    final class Zone: @unchecked Sendable {
        // @unchecked: used by one test task at a time.
        let senders: [Sender]
        var challenges: [String: String] = [:]
        private(set) var dnsmasq: DNSMasq
        let port: UInt16

        init(senders: [Sender]) async throws {
            self.senders = senders
            dnsmasq = try await DNSMasq.start(records: senders.map(\.record), localDomains: ["example"])
            port = dnsmasq.nameserver.port
        }

        var nameserver: String { "127.0.0.1:\(port)" }

        /// Publishes (or, with nil, removes) `domain`'s challenge record.
        func publish(_ domain: String, challenge: String?) async throws {
            challenges[domain] = challenge
            try await restart()
        }

        /// Stops dnsmasq: lookups get no answer (ICMP port unreachable), a failure, never "record gone".
        func takeDown() { dnsmasq.stop() }

        func restart() async throws {
            dnsmasq.stop()
            let records =
                senders.map(\.record)
                + challenges.sorted { $0.key < $1.key }.map {
                    DNSMasq.Record.txt("_gateway-challenge.\($0.key)", "gateway-verification=\($0.value)")
                }
            dnsmasq = try await DNSMasq.start(records: records, localDomains: ["example"], port: port)
        }

        func stop() { dnsmasq.stop() }
    }

    /// Runs `body` with a command line over a fresh store and a zone serving the senders' keys.
    func withZone<T>(
        _ specs: [(domain: String, selector: String)], _ body: (GatewayCLI, Zone, [String: Sender]) async throws -> T
    ) async throws -> T {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var senders: [String: Sender] = [:]
        for spec in specs {
            senders[spec.domain] = try await Sender.make(spec.domain, selector: spec.selector, algorithm: "ed25519", in: directory)
        }
        let zone = try await Zone(senders: Array(senders.values))
        defer { zone.stop() }
        let cli = GatewayCLI(directory: directory, nameserver: zone.nameserver)
        return try await body(cli, zone, senders)
    }

    /// A signed confirmation of booking `number` for `to`.
    static func confirmation(
        _ number: String, to: [String], sender: Sender, cli: GatewayCLI, from: String = "SkyWays <no-reply@skyways.example>"
    ) async throws -> String {
        let leg = FlightLeg(
            reservationNumber: number, passenger: "Eva Green", ticketNumber: "016\(number)", flightNumber: "110",
            departure: FlightLeg.sfo, departureTime: "2027-03-04T20:15:00-08:00", arrival: FlightLeg.jfk,
            arrivalTime: "2027-03-05T06:30:00-05:00")
        return try await sender.sign(
            FlightLeg.email([leg], to: to, messageID: "\(number)@\(sender.domain)", subject: "Booking \(number)", from: from),
            cli: cli, name: number)
    }

    /// `gateway domains show DOMAIN --json`.
    struct Shown: Decodable {
        struct Registration: Decodable {
            struct Trust: Decodable {
                struct Check: Decodable {
                    var result: String
                    var nameserver: String
                    var code: String?
                }
                struct Suspension: Decodable {
                    var cause: String
                    var reason: String
                }
                var challenge: String?
                var verifiedAt: String?
                var lastCheck: Check?
                var missingChecks: Int
                var suspension: Suspension?
            }
            var status: String
            var trust: Trust
        }
        struct Change: Decodable {
            var status: String
            var reason: String?
        }
        var registration: Registration
        var changes: [Change]
    }

    static func show(_ domain: String, _ cli: GatewayCLI, policy: String = "production") async throws -> Shown {
        let result = try await cli.run(["domains", "show", domain, "--json"], policy: policy)
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(Shown.self, from: Data(result.stdout.utf8))
    }

    /// The challenge token in the zone-file line `gateway register` prints.
    static func challenge(inRegisterOutput output: String, domain: String) throws -> String {
        let prefix = "_gateway-challenge.\(domain). IN TXT \"gateway-verification="
        let line = try #require(
            output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(prefix) },
            "no zone line in: \(output)")
        return String(line.dropFirst(prefix.count).dropLast())
    }

    // MARK: - Proof of control, approval, re-checks

    @Test("Published → verified → approved; removed for 3 checks → suspended; DNS down → not suspended; back → lifted")
    func proofVerificationApprovalSuspensionAndLifting() async throws {
        try await withZone([("skyways.example", "sel1")]) { cli, zone, senders in
            let skyways = try #require(senders["skyways.example"])
            let registered = try await cli.run(["register", "skyways.example"], policy: "production")
            #expect(registered.status == 0, "\(registered.stderr)")
            #expect(registered.stdout.hasPrefix("registered skyways.example: pending\n"))
            let token = try Self.challenge(inRegisterOutput: registered.stdout, domain: "skyways.example")
            #expect(token.count == 43)

            // Production refuses a pending domain's mail, and refuses to approve it.
            let first = try await Self.confirmation("K7QF2M", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let (refused, refusedStatus) = try await cli.ingest(first, policy: "production")
            #expect(refusedStatus == 1)
            #expect(refused.codes == ["registry.domain-not-verified"])
            let early = try await cli.run(["domains", "approve", "skyways.example"], policy: "production")
            #expect(early.status == 1)
            #expect(early.stderr.contains("registry.domain-not-verified"))

            // Not published yet: missing, still pending.
            let missing = try await cli.run(["domains", "verify", "skyways.example"], policy: "production", resolver: true)
            #expect(missing.status == 1)
            #expect(missing.stdout.contains("not found (dns.nxdomain from \(zone.nameserver))"), "\(missing.stdout)")

            // Published: verified, with the time and the nameserver that answered.
            try await zone.publish("skyways.example", challenge: token)
            let verified = try await cli.run(["domains", "verify", "skyways.example"], policy: "production", resolver: true)
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
            #expect(verified.stdout == "skyways.example: verified; _gateway-challenge.skyways.example found (answered by \(zone.nameserver))\n")
            var shown = try await Self.show("skyways.example", cli)
            #expect(shown.registration.status == "verified")
            #expect(shown.registration.trust.lastCheck?.result == "found")
            #expect(shown.registration.trust.lastCheck?.nameserver == zone.nameserver)
            #expect(isoTime(shown.registration.trust.verifiedAt).map { abs($0.timeIntervalSinceNow) < 120 } == true)

            // Approved, and its mail admitted.
            #expect(try await cli.run(["domains", "approve", "skyways.example"], policy: "production").status == 0)
            let (admitted, admittedStatus) = try await cli.ingest(first, policy: "production")
            #expect(admittedStatus == 0)
            #expect(admitted.verdict == "admitted")
            #expect(admitted.flags.isEmpty)

            // The record removed: two checks count it missing, a DNS outage counts neither way, the third suspends.
            try await zone.publish("skyways.example", challenge: nil)
            for count in 1...2 {
                let recheck = try await cli.run(["domains", "recheck"], policy: "production", resolver: true)
                #expect(recheck.status == 0, "\(recheck.stderr)")
                #expect(recheck.stdout.contains("skyways.example: approved;"))
                #expect(recheck.stdout.contains("\(count) check\(count == 1 ? "" : "s") in a row"))
            }
            zone.takeDown()
            for _ in 0..<2 {
                let down = try await cli.run(
                    ["domains", "recheck", "--dns-timeout", "0.5"], policy: "production", resolver: true)
                #expect(down.stdout.contains("could not be looked up now"), "\(down.stdout)")
            }
            shown = try await Self.show("skyways.example", cli)
            #expect(shown.registration.status == "approved")
            #expect(shown.registration.trust.missingChecks == 2)
            #expect(shown.registration.trust.lastCheck?.result == "failed")
            try await zone.restart()
            _ = try await cli.run(["domains", "recheck"], policy: "production", resolver: true)
            shown = try await Self.show("skyways.example", cli)
            #expect(shown.registration.status == "suspended")
            #expect(shown.registration.trust.suspension?.cause == "proof-missing")
            let reason = try #require(shown.changes.last?.reason)
            #expect(reason.contains("_gateway-challenge.skyways.example was not found in 3 checks in a row"))
            let second = try await Self.confirmation("B9C8XK", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            #expect(try await cli.ingest(second, policy: "production").0.codes == ["registry.domain-suspended"])

            // Published again: the next check lifts the suspension.
            try await zone.publish("skyways.example", challenge: token)
            let lifted = try await cli.run(["domains", "recheck"], policy: "production", resolver: true)
            #expect(lifted.stdout.contains("skyways.example: approved; _gateway-challenge.skyways.example found"))
            #expect(try await cli.ingest(second, policy: "production").0.verdict == "admitted")
            shown = try await Self.show("skyways.example", cli)
            #expect(shown.changes.map(\.status) == ["pending", "verified", "approved", "suspended", "approved"])
        }
    }

    // MARK: - Test mode

    @Test("Test mode: admitted for a listed owner, refused for another, expired after its time")
    func testModeAdmitsForListedOwnersUntilItExpires() async throws {
        try await withZone([("skyways.example", "sel1")]) { cli, zone, senders in
            let skyways = try #require(senders["skyways.example"])
            let registered = try await cli.run(["register", "skyways.example"], policy: "production")
            try await zone.publish(
                "skyways.example", challenge: try Self.challenge(inRegisterOutput: registered.stdout, domain: "skyways.example"))
            #expect(try await cli.run(["domains", "verify", "skyways.example"], policy: "production", resolver: true).status == 0)

            let on = try await cli.run(
                ["domains", "test-mode", "skyways.example", "on", "--owners", Self.eva, "--for", "6s"], policy: "production")
            #expect(on.status == 0, "\(on.stderr)")
            #expect(on.stdout.contains("skyways.example: verified · test mode for \(Self.eva) until "))

            let toEva = try await Self.confirmation("TEST01", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let (admitted, _) = try await cli.ingest(toEva, policy: "production")
            #expect(admitted.verdict == "admitted")
            #expect(admitted.flags == ["test-mode"])
            let stored = try await cli.reservations(owner: Self.eva)
            #expect(stored.map(\.flags) == [["test-mode"]])
            #expect(try await cli.log(domain: "skyways.example").last?.flags == ["test-mode"])

            let toTom = try await Self.confirmation("TEST02", to: ["Tom Green <\(Self.tom)>"], sender: skyways, cli: cli)
            let (refused, _) = try await cli.ingest(toTom, policy: "production")
            #expect(refused.codes == ["registry.test-mode-owner-not-listed"])
            #expect(try await cli.reservations(owner: Self.tom).isEmpty)

            try await Task.sleep(for: .seconds(7))
            let later = try await Self.confirmation("TEST03", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let (expired, _) = try await cli.ingest(later, policy: "production")
            #expect(expired.codes == ["registry.domain-not-approved"])
        }
    }

    // MARK: - The server's periodic re-check, quotas, privacy

    /// A policy file in `directory`: production's rules with the given YAML sections.
    static func policy(_ yaml: String, in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("policy-\(UUID().uuidString.prefix(8)).yaml").path
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("gateway serve re-checks proofs once per interval: the record gone suspends, back lifts")
    func theServerRechecksProofsPeriodically() async throws {
        try await withZone([("skyways.example", "sel1")]) { cli, zone, _ in
            let policy = try Self.policy(
                """
                name: recheck-test
                registration: {requireProof: true}
                verification: {recheckIntervalSeconds: 1, missingChecksBeforeSuspension: 2}
                """, in: cli.directory)
            let registered = try await cli.run(["register", "skyways.example"], policy: policy)
            let token = try Self.challenge(inRegisterOutput: registered.stdout, domain: "skyways.example")
            try await zone.publish("skyways.example", challenge: token)
            #expect(try await cli.run(["domains", "verify", "skyways.example"], policy: policy, resolver: true).status == 0)
            #expect(try await cli.run(["domains", "approve", "skyways.example"], policy: policy).status == 0)

            var options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", zone.nameserver])
            options.policy = policy
            try await ServerProcess.run(options) { server in
                try await zone.publish("skyways.example", challenge: nil)
                let suspended = try await Self.poll(timeout: .seconds(60)) {
                    let shown = try await Self.show("skyways.example", cli, policy: policy)
                    return shown.registration.status == "suspended" ? shown : nil
                }
                #expect(suspended.registration.trust.suspension?.cause == "proof-missing")
                #expect(suspended.changes.last?.reason?.contains("2 checks in a row") == true)

                try await zone.publish("skyways.example", challenge: token)
                let lifted = try await Self.poll(timeout: .seconds(60)) {
                    let shown = try await Self.show("skyways.example", cli, policy: policy)
                    return shown.registration.status == "approved" ? shown : nil
                }
                #expect(lifted.registration.trust.missingChecks == 0)
                let metrics = try await server.metrics()
                #expect(ServerProcess.total(metrics, "gateway_domain_checks_total", ["result": "missing"]) >= 2)
                #expect(ServerProcess.total(metrics, "gateway_domain_checks_total", ["result": "found"]) >= 1)
            }
        }
    }

    /// Polls `probe` every half second until it answers, or fails after `timeout`.
    static func poll<T>(timeout: Duration, _ probe: () async throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try await probe() { return value }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw FixtureError("nothing within \(timeout)")
    }

    @Test("A burst over the quotas gets 452 over LMTP and 429 over HTTP; after the retries every message is stored once")
    func aBurstOverTheQuotasIsDeferredThenStoredOnce() async throws {
        try await withZone([("skyways.example", "sel1"), ("kokkari.example", "ed1")]) { cli, zone, senders in
            let skyways = try #require(senders["skyways.example"])
            let kokkari = try #require(senders["kokkari.example"])
            let window = 15
            let policy = try Self.policy(
                """
                name: quota-test
                registration: {approveOnRegister: true}
                quotas:
                  domain:
                    messages: {limit: 3, seconds: \(window)}
                """, in: cli.directory)
            var options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", zone.nameserver])
            options.policy = policy
            try await ServerProcess.run(options) { server in
                _ = try await server.register("skyways.example")
                let kokkariToken = try await server.register("kokkari.example")

                // Six bookings over LMTP and six over HTTP, sent from the start of a window.
                var lmtpFiles: [String] = []
                var httpBodies: [[UInt8]] = []
                for index in 1...6 {
                    lmtpFiles.append(try await Self.confirmation("LMTP0\(index)", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli))
                    let file = try await Self.confirmation(
                        "HTTP0\(index)", to: ["Eva Green <\(Self.eva)>"], sender: kokkari, cli: cli,
                        from: "Kokkari <reservations@kokkari.example>")
                    httpBodies.append([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
                }
                try await Self.waitForWindowStart(window)
                var deferred: [String] = []
                var retryAfter = 1
                for file in lmtpFiles {
                    let transcript = try await server.deliverWithPython(file, to: [Self.eva])
                    let reply = try #require(transcript.data.first)
                    if reply.code == 250 {
                        #expect(reply.text.hasPrefix("2.0.0 admitted: 1 created"), "\(reply)")
                    } else {
                        #expect(reply.code == 452, "\(reply)")
                        #expect(reply.text.hasPrefix("4.2.1 quota.domain-messages: skyways.example is over its quota"), "\(reply)")
                        retryAfter = max(retryAfter, Self.seconds(in: reply.text) ?? window)
                        deferred.append(file)
                    }
                }
                var refusedBodies: [[UInt8]] = []
                for body in httpBodies {
                    let reply = try await server.curl(
                        "POST", "/v1/messages", token: kokkariToken, body: body, contentType: "message/rfc822")
                    if reply.status == 200 { continue }
                    #expect(reply.status == 429)
                    #expect(reply.errorCode == "quota.domain-messages")
                    let wait = try #require(reply.headers["retry-after"].flatMap { Int($0) })
                    #expect((1...window).contains(wait))
                    retryAfter = max(retryAfter, wait)
                    refusedBodies.append(body)
                }
                #expect(deferred.count == 3)
                #expect(refusedBodies.count == 3)

                // The senders retry after the wait; everything is stored, once.
                try await Task.sleep(for: .seconds(retryAfter + 1))
                for file in deferred {
                    #expect(try await server.deliverWithPython(file, to: [Self.eva]).data.first?.code == 250)
                }
                for body in refusedBodies {
                    let reply = try await server.curl(
                        "POST", "/v1/messages", token: kokkariToken, body: body, contentType: "message/rfc822")
                    #expect(reply.status == 200)
                }
                let stored = try await cli.reservations(owner: Self.eva)
                #expect(stored.count == 12)
                #expect(Set(stored.map(\.containerReference)).count == 12)
                #expect(stored.allSatisfy { $0.version == 1 })
                let metrics = try await server.metrics()
                #expect(ServerProcess.total(metrics, "gateway_quota_refusals_total", ["channel": "lmtp"]) == 3)
                #expect(ServerProcess.total(metrics, "gateway_quota_refusals_total", ["channel": "http"]) == 3)
                #expect(try await server.spooledMessageCount() == 0)
            }
        }
    }

    /// Waits until a window of `seconds` (aligned to multiples since 1970) has just begun, so a short burst stays in it.
    static func waitForWindowStart(_ seconds: Int) async throws {
        let now = Date().timeIntervalSince1970
        let next = (now / Double(seconds)).rounded(.down) * Double(seconds) + Double(seconds)
        try await Task.sleep(for: .milliseconds(Int((next - now) * 1000) + 50))
    }

    /// The N of "try again in N s".
    static func seconds(in text: String) -> Int? {
        guard let range = text.range(of: "try again in ") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    @Test("Mail without markup leaves no string of its headers in the store's files or the log")
    func mailWithoutMarkupLeavesNoTrace() async throws {
        try await withZone([("newsletter.example", "nl1")]) { cli, zone, senders in
            let newsletter = try #require(senders["newsletter.example"])
            let strings = [
                "<weekly-2026-47@newsletter.example>", "weekly-2026-47", "news@newsletter.example", "Weekly deals for Eva",
                "reader@guest.example.net", "Eva Reader",
            ]
            // A signed newsletter: HTML with a script (so a prefilter passes it) but no schema.org markup.
            let html = """
                <html><head><script type="text/javascript">var tracking = 1;</script></head>
                <body><h1>Weekly deals</h1><p>Flights from 99.</p></body></html>
                """
            let message = BookingMail.message(
                from: "Newsletter <news@newsletter.example>", to: ["Eva Reader <reader@guest.example.net>"],
                subject: "Weekly deals for Eva", date: "Thu, 19 Nov 2026 08:00:00 +0000",
                messageID: "weekly-2026-47@newsletter.example", text: "Weekly deals", html: html)
            let signed = try await newsletter.sign(message, cli: cli, name: "newsletter")
            #expect(try await cli.run(["register", "newsletter.example"]).status == 0)

            // Through the command line.
            let (report, status) = try await cli.ingest(signed)
            #expect(status == 1)
            #expect(report.codes == ["markup.no-reservations"])
            #expect(report.logID == nil)

            // Through the HTTP API.
            var options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", zone.nameserver])
            options.policy = "development"
            try await ServerProcess.run(options) { server in
                let reply = try await server.curl(
                    "POST", "/v1/messages", token: server.adminToken,
                    body: [UInt8](try Data(contentsOf: URL(fileURLWithPath: signed))), contentType: "message/rfc822")
                #expect(reply.status == 200)
                #expect(!reply.text.contains("\"logID\""))
                #expect(try await server.log(domain: "newsletter.example").isEmpty)
            }
            #expect(try await cli.log(domain: "newsletter.example").isEmpty)

            // The store's files, byte for byte.
            let store = URL(fileURLWithPath: cli.store)
            var files: [URL] = [store]
            for suffix in ["-wal", "-shm", "-journal"] {
                let url = URL(fileURLWithPath: cli.store + suffix)
                if FileManager.default.fileExists(atPath: url.path) { files.append(url) }
            }
            for file in files {
                let bytes = try Data(contentsOf: file)
                #expect(!bytes.isEmpty || file != store)
                for string in strings {
                    #expect(bytes.range(of: Data(string.utf8)) == nil, "\(file.lastPathComponent) holds \(string)")
                }
            }
            // A booking from the same sender is still logged with its identity: the check above can fail.
            let booking = try await Self.confirmation(
                "NL0001", to: ["Eva Reader <reader@guest.example.net>"], sender: newsletter, cli: cli,
                from: "Newsletter <news@newsletter.example>")
            #expect(try await cli.ingest(booking).0.verdict == "admitted")
            #expect(try await cli.log(domain: "newsletter.example").first?.owners == ["reader@guest.example.net"])
        }
    }
}
