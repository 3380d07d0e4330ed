import DNS
import Foundation
internal import Glibc
import TestSupport
import Testing

/// `gateway serve` end to end: the real `.build/debug/gateway serve` as a child process on a SQLite store in a
/// temporary directory, on ports the kernel picked, driven by the clients an operator and a mail server use —
/// Debian's swaks and Python's smtplib.LMTP over LMTP, curl over HTTP and HTTPS, python3-icalendar reading the
/// feed — with DKIM keys from dnsmasq, from a nameserver the test scripts (SERVFAIL, held answers), or from
/// examples/keys.zone where DNS is not the point. Every server is stopped by the test that started it.
@Suite("gateway serve end to end", .serialized)
struct ServerEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let tom = "tom@guest.example.net"
    static let mallory = "mallory@elsewhere.example"
    static let skyways = (domain: "skyways.example", selector: "sel1", algorithm: "ed25519")
    /// The message limit of the tests' policy (the development policy's is 10 MiB).
    static let maxMessageBytes = 262_144

    // MARK: - LMTP

    @Test("LMTP on a Unix socket (--lmtp unix:PATH), as an MTA on the same machine delivers: swaks's signed booking is stored; the socket file goes with the server")
    func lmtpOverAUnixSocket() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, dnsmasq in
            let skyways = try #require(senders["skyways.example"])
            let k7 = try await Self.booking("K7QF2M", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let socket = cli.directory.appendingPathComponent("lmtp.sock").path
            var options = ServerProcess.Options(
                directory: cli.directory, policy: try Self.policy(in: cli.directory),
                resolver: ["--nameserver", dnsmasq.nameserver.description])
            options.lmtpSocket = socket
            try await withServer(options, lmtp: false) { server in
                #expect(server.output.contains("gateway: LMTP on unix:\(socket) "), "\(server.output)")
                _ = try await server.register("skyways.example")
                let swaks = try await server.deliverWithSwaks(k7, to: [Self.eva])
                let dataAccepted = try #require(swaks.firstIndex { $0.hasPrefix("354") }, "\(swaks)")
                #expect(
                    swaks.dropFirst(dataAccepted + 1).first?.hasPrefix("250 2.0.0 admitted: 1 created; log #") == true,
                    "\(swaks)")
                let evas = try await server.reservations(token: try await server.ownerToken(Self.eva).secret)
                #expect(evas.map(\.containerReference) == ["K7QF2M"])
            }
            #expect(!FileManager.default.fileExists(atPath: socket), "the socket file outlived gateway serve")
        }
    }

    @Test(
        "Postfix relays over lmtp:unix: to gateway serve --lmtp unix:PATH, the socket given Postfix's group by a setgid directory or by lmtp-socket-group, as the README says",
        arguments: [false, true])
    func postfixOverAUnixSocket(byConfiguration: Bool) async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, dnsmasq in
            let skyways = try #require(senders["skyways.example"])
            let k7 = try await Self.booking("K7QF2M", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            // Postfix's lmtp client runs as the postfix user: it reaches the socket through the group the directory
            // hands down (setgid) and the socket file's mode (0660).
            let sockets = cli.directory.appendingPathComponent("run")
            try FileManager.default.createDirectory(at: sockets, withIntermediateDirectories: true)
            let group = try #require(getgrnam("postfix"), "no postfix group: install postfix (make deps)")
            if byConfiguration {
                try #require(chmod(sockets.path, 0o755) == 0)  // a plain directory: the configuration names the group
            } else {
                try #require(chown(sockets.path, 0, group.pointee.gr_gid) == 0 && chmod(sockets.path, 0o2750) == 0)
            }
            let socket = sockets.appendingPathComponent("lmtp.sock").path
            var options = ServerProcess.Options(
                directory: cli.directory, policy: try Self.policy(in: cli.directory),
                resolver: ["--nameserver", dnsmasq.nameserver.description],
                configuration: byConfiguration ? "lmtp-socket-group: postfix\n" : nil)
            options.lmtpSocket = socket
            try await withServer(options, lmtp: false) { server in
                _ = try await server.register("skyways.example")
                let postfix = try await PostfixRelay.start(
                    in: cli.directory.appendingPathComponent("postfix"), relaying: "guest.example.net",
                    toDestinations: ["lmtp:unix:\(socket)"])
                defer { Task { await postfix.stop() } }
                try await postfix.queue(k7, from: "bounces@mta.example", to: Self.eva)
                let token = try await server.ownerToken(Self.eva).secret
                let deadline = ContinuousClock.now + .seconds(30)
                var stored: [String] = []
                while stored.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    stored = try await server.reservations(token: token).map(\.containerReference)
                }
                #expect(stored == ["K7QF2M"], "\(postfix.log.suffix(3000))")
                let sent = postfix.log.split(separator: "\n").filter { $0.contains("status=sent") }
                #expect(sent.count == 1, "\(postfix.log.suffix(3000))")
                #expect(sent.first?.contains(socket) == true, "\(sent)")
                #expect(sent.first?.contains("admitted: 1 created") == true, "\(sent)")
            }
        }
    }

    @Test("LMTP from swaks and smtplib.LMTP: a reply per recipient, the signed one's reservation stored, SIZE enforced, a non-address refused")
    func lmtpDelivery() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, dnsmasq in
            let skyways = try #require(senders["skyways.example"])
            let k7 = try await Self.booking("K7QF2M", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let rx = try await Self.booking("RXJ34P", passenger: "Tom Green", to: ["Tom Green <\(Self.tom)>"], sender: skyways, cli: cli)
            let big = try cli.write(Self.oversizedMessage(), to: "big.eml")
            let options = ServerProcess.Options(
                directory: cli.directory, policy: try Self.policy(in: cli.directory),
                resolver: ["--nameserver", dnsmasq.nameserver.description])
            try await withServer(options) { server in
                _ = try await server.register("skyways.example")

                // swaks: Eva is a signed recipient, Mallory is not; one reply each after the data (RFC 2033 §4.2).
                let swaks = try await server.deliverWithSwaks(k7, to: [Self.eva, Self.mallory])
                #expect(swaks.contains { $0.hasPrefix("250") && $0.hasSuffix("SIZE \(Self.maxMessageBytes)") }, "\(swaks)")
                let dataAccepted = try #require(swaks.firstIndex { $0.hasPrefix("354") }, "\(swaks)")
                let swaksReplies = Array(swaks[(dataAccepted + 1)...].prefix(2))
                #expect(swaksReplies.count == 2)
                #expect(swaksReplies.first?.hasPrefix("250 2.0.0 admitted: 1 created; log #") == true, "\(swaks)")
                #expect(
                    swaksReplies.last?.hasPrefix("250 2.0.0 delivered; no reservation admitted: admission.recipient-not-signed; log #")
                        == true, "\(swaks)")

                // smtplib.LMTP: Tom is signed; Postmaster is a valid path but no owner's address, and a path without
                // a domain is no mailbox at all (both 550 5.1.3, as the README says); Eva is not signed this time.
                let python = try await server.deliverWithPython(rx, to: [Self.tom, "Postmaster", "eva", Self.eva])
                #expect(python.lhlo?.code == 250)
                #expect(python.size == Self.maxMessageBytes)
                #expect(python.mail?.code == 250)
                #expect(python.rcpt.map(\.code) == [250, 550, 550, 250], "\(python.rcpt)")
                #expect(python.rcpt.dropFirst().allSatisfy { $0.code == 250 || $0.text.hasPrefix("5.1.3") }, "\(python.rcpt)")
                #expect(python.data.map(\.code) == [250, 250], "\(python.data)")
                #expect(python.data.first?.text.hasPrefix("2.0.0 admitted: 1 created; log #") == true, "\(python.data)")
                #expect(
                    python.data.last?.text.hasPrefix("2.0.0 delivered; no reservation admitted: admission.recipient-not-signed")
                        == true, "\(python.data)")

                // Over the policy's size: smtplib declares SIZE and is refused at MAIL (RFC 1870 §6.1); swaks does
                // not, sends it all, and is refused after the data (RFC 1870 §6.3).
                let declared = try await server.deliverWithPython(big, to: [Self.eva])
                #expect(declared.mail?.code == 552, "\(String(describing: declared.mail))")
                #expect(declared.mail?.text.hasPrefix("5.3.4") == true)
                #expect(declared.rcpt.isEmpty && declared.data.isEmpty)
                let undeclared = try await server.deliverWithSwaks(big, to: [Self.eva])
                let bigAccepted = try #require(undeclared.firstIndex { $0.hasPrefix("354") }, "\(undeclared)")
                #expect(undeclared.dropFirst(bigAccepted + 1).first?.hasPrefix("552 5.3.4") == true, "\(undeclared)")

                // The store, through the API with each owner's token: Eva's and Tom's bookings, nothing for Mallory.
                let evas = try await server.reservations(token: try await server.ownerToken(Self.eva).secret)
                #expect(evas.map(\.containerReference) == ["K7QF2M"])
                #expect(evas.allSatisfy { $0.owner == Self.eva && $0.version == 1 && $0.status == "confirmed" })
                #expect(evas.allSatisfy { $0.sourceDomain == "skyways.example" && $0.kind == "flight" })
                let toms = try await server.reservations(token: try await server.ownerToken(Self.tom).secret)
                #expect(toms.map(\.containerReference) == ["RXJ34P"])
                #expect(toms.map(\.version) == [1])
                #expect(try await server.reservations(token: try await server.ownerToken(Self.mallory).secret).isEmpty)

                // The command line reads the same store, and the same records.
                let listed = try await cli.reservations(owner: Self.eva)
                #expect(listed.map(\.id) == evas.map(\.id))
                #expect(listed.map(\.itemReference) == evas.map(\.itemReference))
                #expect(try await cli.reservations(owner: Self.tom).map(\.containerReference) == ["RXJ34P"])

                // One decision per recipient, none for the refused message; nothing left in the spool.
                let log = try await server.log(domain: "skyways.example")
                #expect(log.map(\.verdict).sorted() == ["admitted", "admitted", "rejected", "rejected"])
                #expect(log.allSatisfy { $0.channel == "lmtp" })
                #expect(try await server.spooledMessageCount() == 0)

                let metrics = try await server.metrics()
                #expect(ServerProcess.total(metrics, "gateway_lmtp_replies_total", ["code": "250"]) == 4)
                #expect(ServerProcess.total(metrics, "gateway_lmtp_replies_total") == 4)
                #expect(ServerProcess.total(metrics, "gateway_ingestions_total", ["channel": "lmtp", "verdict": "admitted"]) == 2)
                #expect(ServerProcess.total(metrics, "gateway_ingestions_total", ["channel": "lmtp", "verdict": "rejected"]) == 2)
                #expect(ServerProcess.total(metrics, "gateway_dkim_results_total", ["result": "pass"]) == 4)
                #expect(
                    ServerProcess.total(metrics, "gateway_refusals_total", ["channel": "lmtp", "code": "admission.recipient-not-signed"])
                        == 2)
                #expect(ServerProcess.total(metrics, "gateway_spooled_messages") == 0)
            }
        }
    }

    @Test("A DKIM temperror over LMTP answers 451 4.4.3 and keeps nothing; when DNS answers again the same delivery is admitted")
    func temporaryKeyFailure() async throws {
        try await withScriptedDNS(mode: .serverFailure) { cli, skyways, dns in
            let k7 = try await Self.booking("K7QF2M", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", dns.address])
            try await withServer(options) { server in
                _ = try await server.register("skyways.example")

                let refused = try await server.deliverWithPython(k7, to: [Self.eva])
                #expect(refused.rcpt.map(\.code) == [250])
                #expect(refused.data.map(\.code) == [451], "\(refused.data)")
                #expect(refused.data.first?.text.hasPrefix("4.4.3") == true, "\(refused.data)")
                #expect(dns.queries >= 1)
                // The MTA keeps the message and retries: the gateway keeps no copy and stores nothing.
                #expect(try await server.spooledMessageCount() == 0)
                #expect(try await server.reservations(token: server.adminToken, owner: Self.eva).isEmpty)
                let deferred = try await server.log(domain: "skyways.example")
                #expect(deferred.map(\.verdict) == ["deferred"])
                #expect(deferred.first?.codes.first?.hasPrefix("dkim.") == true, "\(deferred.map(\.codes))")

                // The MTA's retry, once DNS answers.
                dns.mode = .answer
                let admitted = try await server.deliverWithPython(k7, to: [Self.eva])
                #expect(admitted.data.map(\.code) == [250], "\(admitted.data)")
                #expect(admitted.data.first?.text.hasPrefix("2.0.0 admitted: 1 created") == true, "\(admitted.data)")
                let stored = try await server.reservations(token: server.adminToken, owner: Self.eva)
                #expect(stored.map(\.containerReference) == ["K7QF2M"])
                #expect(stored.map(\.version) == [1])
                #expect(try await server.spooledMessageCount() == 0)

                let metrics = try await server.metrics()
                #expect(ServerProcess.total(metrics, "gateway_lmtp_replies_total", ["code": "451"]) == 1)
                #expect(ServerProcess.total(metrics, "gateway_lmtp_replies_total", ["code": "250"]) == 1)
                #expect(ServerProcess.total(metrics, "gateway_dkim_results_total", ["result": "temperror"]) == 1)
                #expect(ServerProcess.total(metrics, "gateway_dkim_results_total", ["result": "pass"]) == 1)
                #expect(ServerProcess.total(metrics, "gateway_ingestions_total", ["channel": "lmtp", "verdict": "deferred"]) == 1)
                #expect(ServerProcess.total(metrics, "gateway_ingestions_total", ["channel": "lmtp", "verdict": "admitted"]) == 1)
            }
        }
    }

    // MARK: - HTTP

    @Test("HTTP with curl: the admin registers, the sender token submits, owner tokens read their own; 401 and 403 where due")
    func httpAPI() async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let flight = Self.example("flight-two-passengers.eml")
        let restaurant = Self.example("restaurant-microdata.eml")
        try await withServer(ServerProcess.Options(directory: directory, resolver: ["--keys", Self.example("keys.zone")]), lmtp: false) { server in
            // Without a token, with an unknown one.
            let anonymous = try await server.curl("GET", "/v1/reservations")
            #expect(anonymous.status == 401)
            #expect(anonymous.errorCode == "auth.missing-token")
            #expect(anonymous.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            let unknown = try await server.curl("POST", "/v1/domains", token: "an-unknown-token-0123456789", json: ["domain": "skyways.example"])
            #expect(unknown.status == 401)
            #expect(unknown.errorCode == "auth.invalid-token")

            let sender = try await server.register("skyways.example")
            let eva = try await server.ownerToken(Self.eva)
            let tom = try await server.ownerToken(Self.tom)

            // What each token may not do.
            let senderListsDomains = try await server.curl("GET", "/v1/domains", token: sender)
            #expect(senderListsDomains.status == 403)
            #expect(senderListsDomains.errorCode == "auth.forbidden")
            let otherDomain = try await server.curl(
                "POST", "/v1/messages", token: sender, body: try Self.bytes(restaurant), contentType: "message/rfc822")
            #expect(otherDomain.status == 403, "a skyways.example token submitted kokkari.example's mail")
            #expect(otherDomain.errorCode == "auth.forbidden")
            let ownerSubmits = try await server.curl(
                "POST", "/v1/messages", token: eva.secret, body: try Self.bytes(flight), contentType: "message/rfc822")
            #expect(ownerSubmits.status == 403)
            let senderReads = try await server.curl("GET", "/v1/reservations", token: sender)
            #expect(senderReads.status == 403)

            // The sender submits its signed confirmation: admitted for both signed recipients.
            let submitted = try await server.curl(
                "POST", "/v1/messages", token: sender, body: try Self.bytes(flight), contentType: "message/rfc822")
            #expect(submitted.status == 200, "\(submitted.text)")
            let report = try submitted.decode(IngestReport.self)
            #expect(report.verdict == "admitted")
            #expect(report.dkim == "pass")
            #expect(report.channel == "http")
            #expect(Set(report.owners) == [Self.eva, Self.tom])
            #expect(!report.items.isEmpty && report.items.allSatisfy { $0.outcome == "created" && $0.containerReference == "RXJ34P" })

            // Each owner reads their own, and only their own.
            let evas = try await server.reservations(token: eva.secret)
            let toms = try await server.reservations(token: tom.secret)
            #expect(evas.count == report.items.count && toms.count == report.items.count)
            #expect(evas.allSatisfy { $0.owner == Self.eva && $0.version == 1 })
            #expect(toms.allSatisfy { $0.owner == Self.tom && $0.version == 1 })
            let othersList = try await server.curl("GET", "/v1/reservations?owner=\(Self.tom)", token: eva.secret)
            #expect(othersList.status == 403)
            let tomsRecord = try #require(toms.first)
            let othersRecord = try await server.curl("GET", "/v1/reservations/\(tomsRecord.id)", token: eva.secret)
            #expect(othersRecord.status == 404, "another owner's record must look like none")
            #expect(othersRecord.errorCode == "request.not-found")
            let ownRecord = try await server.curl("GET", "/v1/reservations/\(tomsRecord.id)", token: tom.secret)
            #expect(ownRecord.status == 200)
            #expect(try ownRecord.decode(ShownReservation.self).history?.count == 1)
            let lookup = try await server.curl("GET", "/v1/reservations/lookup?reference=RXJ34P", token: eva.secret)
            #expect(lookup.status == 200)
            #expect(try lookup.decode([ShownReservation].self).map(\.id).sorted() == evas.map(\.id).sorted())

            // The same email again changes nothing.
            let again = try await server.curl(
                "POST", "/v1/messages", token: sender, body: try Self.bytes(flight), contentType: "message/rfc822")
            #expect(try again.decode(IngestReport.self).items.allSatisfy { $0.outcome == "unchanged" })
            #expect(try await server.reservations(token: tom.secret).allSatisfy { $0.version == 1 })

            // A revoked token is refused from then on.
            let revoked = try await server.curl("DELETE", "/v1/tokens/\(eva.id)", token: server.adminToken)
            #expect(revoked.status == 204)
            let afterRevocation = try await server.curl("GET", "/v1/reservations", token: eva.secret)
            #expect(afterRevocation.status == 401)
            #expect(afterRevocation.errorCode == "auth.invalid-token")

            let metrics = try await server.metrics()
            #expect(ServerProcess.total(metrics, "gateway_ingestions_total", ["channel": "http", "verdict": "admitted"]) == 2)
            #expect(ServerProcess.total(metrics, "gateway_dkim_results_total", ["result": "pass"]) == 2)
            #expect(ServerProcess.total(metrics, "gateway_http_requests_total", ["status": "403"]) == 5)
            #expect(ServerProcess.total(metrics, "gateway_http_requests_total", ["status": "401"]) == 3)
        }
    }

    @Test("TLS: the API over HTTPS with a certificate from the development CA, verified by curl --cacert")
    func tls() async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let options = ServerProcess.Options(
            directory: directory, resolver: ["--keys", Self.example("keys.zone")],
            extra: [
                "--tls-certificate", Certificates.path("booking.example.test.pem"), "--tls-key",
                Certificates.path("booking.example.test.key"),
            ])
        try await withServer(options, lmtp: false) { server in
            #expect(server.baseURL == "https://127.0.0.1:\(server.httpPort)")
            let origin = "https://booking.example.test:\(server.httpPort)"
            let resolve = ["--resolve", "booking.example.test:\(server.httpPort):127.0.0.1"]
            let trusted = resolve + ["--cacert", Certificates.path("dev-ca.pem")]

            let health = try await server.curl("GET", origin + "/healthz", extra: trusted)
            #expect(health.status == 200)
            let registered = try await server.curl(
                "POST", origin + "/v1/domains", token: server.adminToken, body: Array(#"{"domain":"skyways.example"}"#.utf8),
                contentType: "application/json", extra: trusted)
            #expect(registered.status == 201)
            let domains = try await server.curl("GET", origin + "/v1/domains", token: server.adminToken, extra: trusted)
            #expect(domains.status == 200)
            #expect(try domains.decode([Registration].self).map(\.domain) == ["skyways.example"])

            // Without the development CA curl cannot verify the server (60: CURLE_PEER_FAILED_VERIFICATION).
            let unverified = try await Integration.run("/usr/bin/curl", ["-sS", "--max-time", "10"] + resolve + [origin + "/healthz"])
            #expect(unverified.status == 60, "\(unverified.error)")
            // Plain HTTP on the TLS port gets no HTTP answer.
            let plain = try await Integration.run(
                "/usr/bin/curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.httpPort)/healthz"])
            #expect(plain.status != 0 || plain.text != "200", "plain HTTP was served on the TLS listener")
        }
    }

    @Test("A calendar client polling the feed: 304 while nothing changes, 200 with a new ETag after a new email; python3-icalendar reads it")
    func calendarPolling() async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServer(ServerProcess.Options(directory: directory, resolver: ["--keys", Self.example("keys.zone")])) { server in
            _ = try await server.register("skyways.example")
            _ = try await server.register("nordic-rail.example")
            let eva = try await server.ownerToken(Self.eva).secret
            let tom = try await server.ownerToken(Self.tom).secret

            let trip = try await server.deliverWithPython(Self.example("flight-two-passengers.eml"), to: [Self.eva, Self.tom])
            #expect(trip.data.map(\.code) == [250, 250])
            #expect(trip.data.allSatisfy { $0.text.hasPrefix("2.0.0 admitted: ") }, "\(trip.data)")

            let feed = "/calendars/\(Self.eva).ics"
            let first = try await server.curl("GET", feed, token: eva)
            #expect(first.status == 200)
            #expect(first.headers["content-type"]?.hasPrefix("text/calendar") == true)
            #expect(first.headers["cache-control"]?.contains("max-age=") == true)
            let etag = try #require(first.headers["etag"])
            let calendar = try await Self.parseCalendar(first.body)
            let flights = calendar.events
            #expect(!flights.isEmpty)
            #expect(Set(flights.map(\.uid)).count == flights.count)
            // Suggested until Eva accepts them (issue 16).
            #expect(flights.allSatisfy { $0.status == "TENTATIVE" && $0.summary.hasPrefix("Flight UA") })

            // Polling while nothing changes: 304, no body, the same ETag; also with the token in the query.
            for _ in 0..<2 {
                let unchanged = try await server.curl("GET", feed, token: eva, headers: ["If-None-Match: \(etag)"])
                #expect(unchanged.status == 304)
                #expect(unchanged.body.isEmpty)
                #expect(unchanged.headers["etag"] == etag)
            }
            let byQuery = try await server.curl("GET", feed + "?token=\(eva)", headers: ["If-None-Match: \(etag)"])
            #expect(byQuery.status == 304)
            // If-None-Match compares weakly (RFC 9110 §13.1.2): a proxy that compresses the feed (nginx gzip) hands
            // clients W/"..." and they send it back; a client may also send several tags.
            let weak = try await server.curl("GET", feed, token: eva, headers: ["If-None-Match: W/\(etag)"])
            #expect(weak.status == 304, "a weak validator of the current ETag must get 304")
            let several = try await server.curl("GET", feed, token: eva, headers: ["If-None-Match: \"0123\", \(etag)"])
            #expect(several.status == 304)
            let tomsFirst = try await server.curl("GET", "/calendars/\(Self.tom).ics", token: tom)
            let tomsETag = try #require(tomsFirst.headers["etag"])
            #expect(tomsETag != etag)
            #expect(try await server.curl("GET", "/calendars/\(Self.tom).ics", token: eva).status == 403)

            // A new email for Eva: the next poll gets the feed with it, under a new ETag.
            let train = try await server.deliverWithSwaks(Self.example("train-confirmation.eml"), to: [Self.eva])
            #expect(train.contains { $0.hasPrefix("250 2.0.0 admitted: 1 created") }, "\(train)")
            let changed = try await server.curl("GET", feed, token: eva, headers: ["If-None-Match: \(etag)"])
            #expect(changed.status == 200)
            let newETag = try #require(changed.headers["etag"])
            #expect(newETag != etag)
            let updated = try await Self.parseCalendar(changed.body)
            #expect(updated.events.count == flights.count + 1)
            #expect(Set(flights.map(\.uid)).isSubset(of: Set(updated.events.map(\.uid))))
            let added = try #require(updated.events.first { !flights.map(\.uid).contains($0.uid) })
            #expect(added.dtstart == "2026-06-26T08:25:00+02:00", "\(added)")
            #expect(added.status == "TENTATIVE")
            #expect(try await server.curl("GET", feed, token: eva, headers: ["If-None-Match: \(newETag)"]).status == 304)
            // Eva accepts the train: a change like any other, under a new ETag, and it is confirmed.
            let trainID = try #require(try await server.reservations(token: eva).first { $0.containerReference == "B9C8" }?.id)
            #expect(try await server.curl("POST", "/v1/owners/\(Self.eva)/reservations/\(trainID)/accept", token: eva).status == 200)
            let accepted = try await server.curl("GET", feed, token: eva, headers: ["If-None-Match: \(newETag)"])
            #expect(accepted.status == 200)
            #expect(accepted.headers["etag"] != newETag)
            let confirmed = try await Self.parseCalendar(accepted.body).events.first { $0.uid == added.uid }
            #expect(confirmed?.status == "CONFIRMED")
            // Tom's feed did not change.
            let tomsAgain = try await server.curl("GET", "/calendars/\(Self.tom).ics", token: tom, headers: ["If-None-Match: \(tomsETag)"])
            #expect(tomsAgain.status == 304)
        }
    }

    @Test("Back-pressure: with the one ingestion slot taken and no queue, LMTP answers 452 4.3.1 at MAIL and HTTP 429 with Retry-After")
    func backPressure() async throws {
        try await withScriptedDNS(mode: .answer) { cli, skyways, dns in
            let k7 = try await Self.booking("K7QF2M", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let options = ServerProcess.Options(
                directory: cli.directory, resolver: ["--nameserver", dns.address, "--dns-timeout", "5"],
                configuration: "max-concurrent-ingestions: 1\nmax-queued-ingestions: 0\nretry-after-seconds: 7\n")
            try await withServer(options) { server in
                let sender = try await server.register("skyways.example")
                dns.mode = .hold
                async let first = server.deliverWithPython(k7, to: [Self.eva])
                #expect(try await dns.waitForQueries(1))

                let busy = try await server.deliverWithPython(k7, to: [Self.eva])
                #expect(busy.mail?.code == 452, "\(String(describing: busy.mail))")
                #expect(busy.mail?.text.hasPrefix("4.3.1") == true)
                let refused = try await server.curl("POST", "/v1/messages", token: sender, body: try Self.bytes(k7), contentType: "message/rfc822")
                #expect(refused.status == 429)
                #expect(refused.errorCode == "server.busy")
                #expect(refused.headers["retry-after"] == "7")

                dns.mode = .answer
                let admitted = try await first
                #expect(admitted.data.first?.text.hasPrefix("2.0.0 admitted: 1 created") == true, "\(admitted.data)")
                // The slot is free again.
                let later = try await server.curl("POST", "/v1/messages", token: sender, body: try Self.bytes(k7), contentType: "message/rfc822")
                #expect(later.status == 200)
                let metrics = try await server.metrics()
                #expect(ServerProcess.total(metrics, "gateway_busy_refusals_total", ["channel": "http"]) == 1)
                #expect(ServerProcess.total(metrics, "gateway_http_requests_total", ["status": "429"]) == 1)
            }
        }
    }

    // MARK: - Stopping and crashing

    @Test("SIGTERM while an LMTP delivery waits for its key: the client still gets its 250, the server exits 0 and says it stopped")
    func gracefulShutdown() async throws {
        try await withScriptedDNS(mode: .answer) { cli, skyways, dns in
            let k7 = try await Self.booking("K7QF2M", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let server = try await ServerProcess.start(
                ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", dns.address, "--dns-timeout", "5"]))
            _ = try await server.register("skyways.example")

            dns.mode = .hold
            async let delivery = server.deliverWithPython(k7, to: [Self.eva])
            // The message is in and spooled, its key lookup held by the nameserver: now stop the server.
            #expect(try await dns.waitForQueries(1))
            server.signal(SIGTERM)
            // Draining: the LMTP listener closes (new connections refused) while the delivery in flight goes on.
            let lmtpPort = try #require(server.lmtpPort)
            let closing = ContinuousClock.now + .seconds(10)
            while ServerProcess.acceptsConnections(port: lmtpPort), ContinuousClock.now < closing {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(!ServerProcess.acceptsConnections(port: lmtpPort), "the LMTP listener still accepts 10 s after SIGTERM")
            try await Task.sleep(for: .milliseconds(200))
            let exitedEarly = server.exitStatus != nil
            dns.mode = .answer
            let transcript = try await delivery
            #expect(!exitedEarly, "gateway serve exited with a delivery in flight:\n\(server.output)")
            #expect(transcript.data.map(\.code) == [250], "\(transcript.data)")
            #expect(transcript.data.first?.text.hasPrefix("2.0.0 admitted: 1 created") == true, "\(transcript.data)")

            let status = try await server.waitForExit(timeout: .seconds(30))
            #expect(status == 0, "gateway serve:\n\(server.output)")
            #expect(server.output.contains("gateway: stopped"))
            if status == nil { try await server.crash() }
            // Decided and stored before the exit; nothing left to recover.
            #expect(try await cli.reservations(owner: Self.eva).map(\.containerReference) == ["K7QF2M"])
            #expect(try await server.spooledMessageCount() == 0)
        }
    }

    @Test("kill -9 after 250s over LMTP, then a restart on the same store: every acknowledged message stored, none twice")
    func crashSafety() async throws {
        try await withScriptedDNS(mode: .answer) { cli, skyways, dns in
            let first = try await Self.booking("K7QF2M", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>"], sender: skyways, cli: cli)
            let second = try await Self.booking("RXJ34P", passenger: "Tom Green", to: ["Tom Green <\(Self.tom)>"], sender: skyways, cli: cli)
            let third = try await Self.booking(
                "W4LL8Z", passenger: "Eva Green", to: ["Eva Green <\(Self.eva)>", "Tom Green <\(Self.tom)>"], sender: skyways, cli: cli)
            // A short reply deadline: with the key lookup held, the 250 "queued" comes while the decision waits. The
            // killed process's claims on its spooled messages would hold for spool-lease-seconds (10 minutes here);
            // the restarted process, on the same host, finds that process gone and takes them at start.
            let options = ServerProcess.Options(
                directory: cli.directory, resolver: ["--nameserver", dns.address, "--dns-timeout", "5"],
                configuration: "lmtp-reply-deadline-seconds: 0.3\nretry-interval-seconds: 3600\nspool-lease-seconds: 600\n")
            let server = try await ServerProcess.start(options)
            _ = try await server.register("skyways.example")

            let decided = try await server.deliverWithPython(first, to: [Self.eva])
            #expect(decided.data.first?.text.hasPrefix("2.0.0 admitted: 1 created") == true, "\(decided.data)")
            dns.mode = .hold
            let clock = ContinuousClock()
            let sent = clock.now
            let queued = try await server.deliverWithPython(second, to: [Self.tom])
            let queuedTwice = try await server.deliverWithPython(third, to: [Self.eva, Self.tom])
            // Each reply is due 0.3 s after the data; the held key lookup takes up to 10 s.
            #expect(clock.now - sent < .seconds(4), "the LMTP replies waited for the decision past lmtp-reply-deadline-seconds")
            for reply in queued.data + queuedTwice.data {
                #expect(reply.code == 250)
                #expect(reply.text.hasPrefix("2.0.0 queued as spool #"), "\(reply)")
            }
            #expect(queued.data.count + queuedTwice.data.count == 3)
            // Durable before the 250: each acknowledged recipient has its spool row.
            #expect(try await server.spooledMessageCount() == 3)

            let killed = try await server.crash()
            #expect(killed & 0x7F == SIGKILL)
            dns.mode = .answer

            let restarted = try await ServerProcess.start(options)
            var stopped = false
            defer { if !stopped { restarted.signal(SIGKILL) } }
            // At start the server ends the dead process's claims and decides what it left in the spool.
            let deadline = ContinuousClock.now + .seconds(30)
            while try await restarted.spooledMessageCount() > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await restarted.spooledMessageCount() == 0, "\(restarted.output)")
            #expect(restarted.output.contains("took over the spool claims of a process that no longer runs"))

            let evas = try await restarted.reservations(token: restarted.adminToken, owner: Self.eva)
            let toms = try await restarted.reservations(token: restarted.adminToken, owner: Self.tom)
            #expect(evas.map(\.containerReference).sorted() == ["K7QF2M", "W4LL8Z"])
            #expect(toms.map(\.containerReference).sorted() == ["RXJ34P", "W4LL8Z"])
            #expect((evas + toms).allSatisfy { $0.version == 1 && $0.status == "confirmed" })

            // Each acknowledged delivery was decided exactly once: one admitted log entry per message and owner.
            let decisions = try await restarted.log(domain: "skyways.example").filter { $0.verdict == "admitted" }
                .map { "\($0.source ?? "?") \($0.owners.joined(separator: ","))" }.sorted()
            #expect(
                decisions == [
                    "<K7QF2M.1@skyways.example> \(Self.eva)", "<RXJ34P.1@skyways.example> \(Self.tom)",
                    "<W4LL8Z.1@skyways.example> \(Self.eva)", "<W4LL8Z.1@skyways.example> \(Self.tom)",
                ], "\(decisions)")

            // The MTA delivering the first again (it cannot know it was decided): unchanged, still version 1.
            let redelivered = try await restarted.deliverWithPython(first, to: [Self.eva])
            #expect(redelivered.data.first?.text.hasPrefix("2.0.0 admitted: 1 unchanged") == true, "\(redelivered.data)")
            #expect(try await restarted.reservations(token: restarted.adminToken, owner: Self.eva).map(\.version) == [1, 1])

            let metrics = try await restarted.metrics()
            #expect(ServerProcess.total(metrics, "gateway_ingestions_total", ["channel": "lmtp", "verdict": "admitted"]) == 4)
            #expect(ServerProcess.total(metrics, "gateway_dkim_results_total", ["result": "pass"]) == 4)
            #expect(ServerProcess.total(metrics, "gateway_lmtp_replies_total", ["code": "250"]) == 1)
            #expect(ServerProcess.total(metrics, "gateway_spooled_messages") == 0)

            let status = try await restarted.stop()
            stopped = true
            #expect(status == 0, "\(restarted.output)")
        }
    }

    // MARK: - Helpers

    /// Runs `body` with a started server, then stops it with SIGTERM and expects a clean exit (status 0).
    func withServer<T>(
        _ options: ServerProcess.Options, lmtp: Bool = true, _ body: (ServerProcess) async throws -> T
    ) async throws -> T {
        try await ServerProcess.run(options, expectLMTP: lmtp, body)
    }

    /// A temporary directory, SkyWays' key made by `gateway dkim keygen`, and a scripted nameserver holding it.
    func withScriptedDNS<T>(
        mode: ScriptedNameserver.Mode, _ body: (GatewayCLI, Sender, ScriptedNameserver) async throws -> T
    ) async throws -> T {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sender = try await Sender.make(
            Self.skyways.domain, selector: Self.skyways.selector, algorithm: Self.skyways.algorithm, in: directory)
        let value = try #require(sender.record.strings).joined()
        let dns = try ScriptedNameserver(records: [sender.record.name: value], mode: mode)
        defer { dns.stop() }
        return try await body(GatewayCLI(directory: directory, nameserver: dns.address), sender, dns)
    }

    /// A one-leg SkyWays booking for `passenger`, sent to `recipients` and signed: the file's path.
    static func booking(
        _ reference: String, passenger: String, to recipients: [String], sender: Sender, cli: GatewayCLI
    ) async throws -> String {
        let leg = FlightLeg(
            reservationNumber: reference, passenger: passenger, ticketNumber: "0162345678901", flightNumber: "110",
            departure: FlightLeg.sfo, departureTime: "2027-03-04T20:15:00-08:00", arrival: FlightLeg.jfk,
            arrivalTime: "2027-03-05T06:30:00-05:00")
        let message = FlightLeg.email([leg], to: recipients, messageID: "\(reference).1@skyways.example", subject: "Your flight \(reference)")
        return try await sender.sign(message, cli: cli, name: reference)
    }

    /// The development policy with a 256 KiB message limit, written into `directory`: its path.
    static func policy(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("e2e-policy.yaml")
        let text = """
            name: e2e
            description: the development policy with a small message limit, for the server's size tests
            registration:
              approveOnRegister: true
            limits:
              maxMessageBytes: \(maxMessageBytes)
            """
        try Data(text.utf8).write(to: path)
        return path.path
    }

    /// A plain message over `maxMessageBytes`.
    static func oversizedMessage() -> [UInt8] {
        var text = "From: SkyWays <no-reply@skyways.example>\r\nTo: \(eva)\r\nSubject: A large attachment\r\n"
        text += "Message-ID: <big.1@skyways.example>\r\n\r\n"
        let line = String(repeating: "x", count: 76) + "\r\n"
        text += String(repeating: line, count: maxMessageBytes / line.utf8.count + 100)
        return Array(text.utf8)
    }

    /// A file of examples/ (signed by examples/keys/*.pem, keys in examples/keys.zone).
    static func example(_ name: String) -> String {
        Integration.packageRoot.appendingPathComponent("examples").appendingPathComponent(name).path
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The feed as Debian's python3-icalendar reads it.
    static func parseCalendar(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) async throws -> ParsedCalendar {
        let parsed = try await Integration.run(Integration.python, ["-c", ParsedCalendar.script], input: body)
        try #require(parsed.status == 0, "python3-icalendar could not read the feed: \(parsed.error)", sourceLocation: sourceLocation)
        return try JSONDecoder().decode(ParsedCalendar.self, from: Data(parsed.output))
    }
}
