import DNS
import Foundation
import TestSupport
import Testing

/// What a new user met in the hostile audit (issue 13): messages that stated instead of instructing, said the wrong
/// thing, or were laid out badly. Through the real command line and `gateway serve`.
@Suite("Hardening: as a new user", .serialized)
struct HardeningNewUserTests {
    static let examples = Integration.packageRoot.appendingPathComponent("examples")

    @Test("gateway check of an example without --keys hints at the keys.zone beside it that holds the key")
    func checkWithoutKeysHintsAtTheZoneBesideTheFile() async throws {
        try await withGateway(senders: []) { cli, _, dnsmasq in
            // A copy of an example and the examples' key file, side by side in another directory: the hint names the
            // file beside the message, whatever its directory.
            let message = try cli.write(
                [UInt8](try Data(contentsOf: Self.examples.appendingPathComponent("flight-two-passengers.eml"))),
                to: "flight.eml")
            let check = try await cli.run(["check", message], resolver: true)
            #expect(check.status == 1)
            #expect(check.stdout.contains("dkim.key-not-found"))
            #expect(!check.stderr.contains("hint:"), "no keys.zone beside the file yet: \(check.stderr)")
            let zone = try cli.write([UInt8](try Data(contentsOf: Self.examples.appendingPathComponent("keys.zone"))), to: "keys.zone")
            let hinted = try await cli.run(["check", message], resolver: true)
            #expect(hinted.status == 1)
            #expect(hinted.stderr.contains("hint: the key is not in DNS, but \(zone) beside \(message) holds it: add --keys \(zone)"), "\(hinted.stderr)")
            // The hint works: with --keys the signature passes (the domain is not registered here: refused for that).
            let withKeys = try await cli.run(["check", message, "--keys", zone, "--json"])
            #expect(withKeys.stdout.contains(#""dkim":"pass""#), "\(withKeys.stdout)")
            #expect(!withKeys.stderr.contains("hint:"))
            // dkim verify gives the same hint; a zone that does not hold the key gives none.
            let verify = try await cli.run(["dkim", "verify", message, "--nameserver", dnsmasq.nameserver.description], policy: nil)
            #expect(verify.stderr.contains("add --keys \(zone)"), "\(verify.stderr)")
            _ = try cli.write(Array("other._domainkey.elsewhere.example. IN TXT \"v=DKIM1; p=\"\n".utf8), to: "keys.zone")
            #expect(!(try await cli.run(["check", message], resolver: true)).stderr.contains("hint:"))
        }
    }

    @Test("domains list --status with none of that status, flags set --for 0m, log --since, register twice, tokens list of an admin token")
    func messagesSayWhatIsTrueAndWhatToDo() async throws {
        try await withGateway(senders: []) { cli, _, _ in
            #expect(try await cli.run(["domains", "list", "--status", "pending"]).stdout == "no registered domains; gateway register DOMAIN adds one\n")
            // Each time with the record that proves control of the domain (issue 15): the same one again.
            let first = try await cli.run(["register", "skyways.example"])
            let proof = "  to prove control, publish this record, then run gateway domains verify skyways.example:\n"
            #expect(first.stdout.hasPrefix("registered skyways.example: approved\n" + proof))
            let again = try await cli.run(["register", "SkyWays.example."])
            #expect(again.status == 0)
            #expect(again.stdout.hasPrefix("skyways.example is already registered: approved\n" + proof))
            #expect(first.stdout.split(separator: "\n").last == again.stdout.split(separator: "\n").last)
            #expect(first.stdout.split(separator: "\n").last?.hasPrefix("  _gateway-challenge.skyways.example. IN TXT \"gateway-verification=") == true)
            let pending = try await cli.run(["domains", "list", "--status", "pending"])
            #expect(pending.stdout == "no pending domains (1 registered: gateway domains list shows them)\n")

            let zero = try await cli.run(["flags", "set", "allow-any-domain", "on", "--for", "0m"])
            #expect(zero.status == 1)
            #expect(zero.stderr.contains("flags.duration-out-of-range"), "\(zero.stderr)")
            #expect(zero.stderr.contains("more than 0 seconds and at most 168 hours"), "\(zero.stderr)")
            let garbled = try await cli.run(["flags", "set", "allow-any-domain", "on", "--for", "5x"])
            #expect(garbled.status == 2)
            #expect(garbled.stderr.contains("a number with s, m, h or d"), "\(garbled.stderr)")

            let since = try await cli.run(["log", "--since", "yesterday"])
            #expect(since.status == 2)
            #expect(since.stderr.contains("ISO 8601 time with its zone (2026-11-21T08:00:00Z) or a duration ago"), "\(since.stderr)")
            #expect(try await cli.run(["log", "--since", "2026-01-01T00:00:00Z"]).status == 0)
            #expect(try await cli.run(["log", "--since", "90s"]).status == 0)

            #expect(try await cli.run(["tokens", "issue", "admin", "--label", "ops"]).status == 0)
            #expect(try await cli.run(["tokens", "issue", "sender", "skyways.example"]).status == 0)
            let tokens = try await cli.run(["tokens", "list"]).stdout.split(separator: "\n")
            #expect(tokens.count == 2)
            #expect(tokens.first?.hasPrefix("#1 admin · ops · issued ") == true, "\(tokens)")
            #expect(tokens.last?.hasPrefix("#2 sender skyways.example · issued ") == true, "\(tokens)")
        }
    }

    @Test("--help texts are wrapped once, by the terminal's width: no sentence broken by a hard line break")
    func helpIsWrappedOnce() async throws {
        let gateway = try #require(GatewayCLI.executable)
        var commands: [[String]] = [[]]
        var seen = 0
        while seen < commands.count {
            let command = commands[seen]
            seen += 1
            // Wide enough for every paragraph to fit on one line: any break left is in the source text.
            let help = try await Integration.run("/usr/bin/env", ["COLUMNS=1000", gateway] + command + ["--help"])
            #expect(help.status == 0, "\(command): \(help.error)")
            var lines = help.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if let usage = lines.firstIndex(where: { $0.hasPrefix("USAGE:") }) {
                // The subcommands listed after it, to visit next.
                if let start = lines.firstIndex(of: "SUBCOMMANDS:") {
                    // `  name    abstract` lines, up to the blank line after the list.
                    for line in lines[(start + 1)...] {
                        guard line.hasPrefix("  ") else { break }
                        let name = line.split(separator: " ").first.map(String.init) ?? ""
                        if !name.isEmpty && name != "help" && command.count < 3 { commands.append(command + [name]) }
                    }
                }
                lines = Array(lines[..<usage])
            }
            for (line, next) in zip(lines, lines.dropFirst()) where !line.isEmpty && !next.isEmpty {
                let brokenMidSentence =
                    (line.last?.isLetter == true || line.last == ",") && next.first?.isLowercase == true
                #expect(!brokenMidSentence, "gateway \(command.joined(separator: " ")) --help breaks a sentence:\n\(line)\n\(next)")
            }
        }
        #expect(commands.count > 20, "\(commands)")
    }

    @Test("The API: registering a domain again issues no new sender token; an admin's lookup without owner says to add it")
    func apiRegistrationAndLookup() async throws {
        try await HardeningServerTests.withServer { server in
            let admin = server.adminToken
            let first = try await server.curl("POST", "/v1/domains", token: admin, json: ["domain": "skyways.example"])
            #expect(first.status == 201)
            #expect(first.text.contains(#""senderToken""#))
            for _ in 0..<2 {
                let again = try await server.curl(
                    "POST", "/v1/domains", token: admin, json: ["domain": "SKYWAYS.example", "contact": "markup@skyways.example"])
                #expect(again.status == 200, "\(again.text)")
                #expect(!again.text.contains("senderToken"), "\(again.text)")
                #expect(again.text.contains(#""contact":"markup@skyways.example""#), "\(again.text)")
            }
            let senders = try await server.curl("GET", "/v1/tokens?role=sender", token: admin)
            #expect(senders.status == 200)
            #expect(senders.text.components(separatedBy: #""role":"sender""#).count - 1 == 1, "\(senders.text)")

            let lookup = try await server.curl("GET", "/v1/reservations/lookup?reference=RXJ34P", token: admin)
            #expect(lookup.status == 400)
            let error = try lookup.decode(APIErrorBody.self).error
            #expect(error.at == "owner")
            #expect(error.message.hasPrefix("add ?owner=ADDRESS"), "\(error.message)")
        }
    }
}
