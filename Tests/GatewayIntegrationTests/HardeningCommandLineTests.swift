import DNS
import Foundation
import TestSupport
import Testing

/// Regressions from the hostile audit (issue 13), each through the command line where it was found: the real
/// `gateway` executable, real SQLite files, keys served by dnsmasq or by a nameserver that answers badly on purpose.
@Suite("Hardening: the command line", .serialized)
struct HardeningCommandLineTests {
    static let eva = "eva@guest.example.net"
    static let mallory = "mallory@elsewhere.example"

    /// `skywаys.example` with a Cyrillic а, written as its A-label.
    static let lookalike = "xn--skywys-6nf.example"

    // MARK: - Defect 2: the look-alike check on A-labels

    @Test("A name typed as A-labels is checked on its Unicode form: a look-alike and invalid Punycode are refused")
    func lookalikeALabelsAreRefused() async throws {
        try await withGateway(senders: []) { cli, _, _ in
            for (name, code) in [
                (Self.lookalike, "registry.mixed-scripts"), ("XN--SKYWYS-6NF.EXAMPLE", "registry.mixed-scripts"),
                ("mail.\(Self.lookalike)", "registry.mixed-scripts"), ("skywаys.example", "registry.mixed-scripts"),
                ("xn--abc.com", "registry.domain-invalid"), ("xn--.example", "registry.domain-invalid"),
            ] {
                let refused = try await cli.run(["register", name])
                #expect(refused.status == 1, "\(name): \(refused.stdout)")
                #expect(refused.stderr.contains(code), "\(name): \(refused.stderr)")
            }
            let listed = try await cli.run(["domains", "list", "--json"])
            #expect(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
            // A valid internationalized name is the same registration in either form.
            let unicode = try await cli.run(["register", "bücher.example", "--json"])
            #expect(unicode.status == 0, "\(unicode.stderr)")
            #expect(unicode.stdout.contains("\"domain\":\"xn--bcher-kva.example\""))
            let ascii = try await cli.run(["domains", "show", "XN--BCHER-KVA.example"])
            #expect(ascii.status == 0 && ascii.stdout.hasPrefix("xn--bcher-kva.example: approved"), "\(ascii.stderr)")
        }
    }

    @Test("Mail signed by a look-alike A-label domain is refused even with allow-any-domain on")
    func mailFromLookalikeIsRefused() async throws {
        try await withGateway(senders: [(Self.lookalike, "sel1", "ed25519")]) { cli, senders, _ in
            let sender = try #require(senders[Self.lookalike])
            let email = try await sender.sign(
                BookingMail.train(reservationNumber: "B9C8", to: Self.eva, messageID: "b9c8@\(Self.lookalike)")
                    .replacingFrom(with: "bookings@\(Self.lookalike)"),
                cli: cli, name: "lookalike")
            #expect(try await cli.run(["flags", "set", "allow-any-domain", "on", "--for", "10m"]).status == 0)
            let (report, status) = try await cli.ingest(email)
            #expect(status == 1)
            #expect(report.verdict == "rejected")
            #expect(report.codes == ["admission.from-invalid"])
            #expect(report.flags.isEmpty)
            #expect(try await cli.reservations(owner: Self.eva).isEmpty)
        }
    }

    // MARK: - A malformed DNS answer is a temporary failure

    /// A compression pointer that points at itself, and an RDLENGTH running past the end of the message.
    enum BrokenAnswer: String, CaseIterable, Sendable {
        case compressionLoop, rdlengthPastTheEnd

        func reply(to query: [UInt8]) -> [[UInt8]] {
            guard query.count > 12 else { return [] }
            var end = 12
            while end < query.count, query[end] != 0 { end += Int(query[end]) + 1 }
            end += 5  // the root label, QTYPE and QCLASS
            guard end <= query.count else { return [] }
            // ID, QR RD RA, NOERROR, one question, one answer.
            var message = Array(query[0..<2]) + [0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0] + Array(query[12..<end])
            switch self {
            case .compressionLoop:
                let here = message.count
                message += [0xC0 | UInt8(here >> 8), UInt8(here & 0xFF)]  // a pointer to itself
                message += [0, 16, 0, 1, 0, 0, 0x0E, 0x10, 0, 4, 3, 0x61, 0x62, 0x63]
            case .rdlengthPastTheEnd:
                message += [0xC0, 12, 0, 16, 0, 1, 0, 0, 0x0E, 0x10, 0x01, 0x00]  // RDLENGTH 256
                message += [9] + Array("v=DKIM1; ".utf8)
            }
            return [message]
        }
    }

    @Test("A malformed DNS answer is a temporary failure: dkim.dns-malformed, and the email is deferred",
          arguments: BrokenAnswer.allCases)
    func malformedDNSAnswer(_ broken: BrokenAnswer) async throws {
        try await withGateway(senders: [AdmissionEndToEndTests.skyways]) { cli, senders, _ in
            let skyways = try #require(senders["skyways.example"])
            _ = try await cli.run(["register", "skyways.example"])
            let email = try await skyways.sign(
                FlightLeg.email([AdmissionEndToEndTests.flight()], to: [Self.eva], messageID: "K7QF2M.1@skyways.example", subject: "K7QF2M"),
                cli: cli, name: "flight")
            try await withFakeDNSResponder(.custom { query, _ in broken.reply(to: query) }) { responder in
                let nameserver = responder.nameserver.description
                let verify = try await cli.run(["dkim", "verify", email, "--json", "--nameserver", nameserver], policy: nil)
                #expect(verify.status == 1, "\(verify.stderr)")
                let result = try JSONDecoder().decode(VerifyResult.self, from: try #require(verify.jsonLines.first))
                #expect(result.result == "temperror")
                #expect(result.signatures.map(\.result) == ["temperror"])
                #expect(result.signatures.map(\.code) == ["dkim.dns-malformed"])

                let (deferred, status) = try await cli.ingest(email, nameserver: nameserver)
                #expect(status == 0)
                #expect(deferred.verdict == "deferred")
                #expect(deferred.codes == ["dkim.dns-malformed"])
                #expect(deferred.spoolID != nil)
                #expect(responder.statistics.udpQueries > 0)
            }
        }
    }

    struct VerifyResult: Decodable {
        struct Signature: Decodable {
            var result: String
            var code: String?
        }
        var result: String
        var signatures: [Signature]
    }

    // MARK: - allow-unverified-sources loosens DKIM only

    @Test("allow-unverified-sources admits an unsigned email for its own recipients only, not for any --owner")
    func unverifiedSourcesKeepTheRecipientRule() async throws {
        try await withGateway(senders: []) { cli, _, _ in
            _ = try await cli.run(["register", "nordic-rail.example"])
            #expect(try await cli.run(["flags", "set", "allow-unverified-sources", "on", "--for", "30m"]).status == 0)
            let unsigned = try cli.write(
                BookingMail.train(reservationNumber: "B9C8", to: Self.eva, messageID: "b9c8@mail.nordic-rail.example"),
                to: "unsigned.eml")

            let (stolen, stolenStatus) = try await cli.ingest(unsigned, owner: Self.mallory)
            #expect(stolenStatus == 1)
            #expect(stolen.verdict == "rejected")
            #expect(stolen.codes == ["admission.recipient-not-signed"])
            #expect(try await cli.reservations(owner: Self.mallory).isEmpty)

            let (own, ownStatus) = try await cli.ingest(unsigned, owner: Self.eva)
            #expect(ownStatus == 0)
            #expect(own.verdict == "admitted")
            #expect(own.flags == ["allow-unverified-sources"])
            #expect(try await cli.reservations(owner: Self.eva).map(\.containerReference) == ["B9C8"])
        }
    }
}

extension [UInt8] {
    /// The message with its From field replaced by `address`.
    func replacingFrom(with address: String) -> [UInt8] {
        let text = String(decoding: self, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        if let index = lines.firstIndex(where: { $0.lowercased().hasPrefix("from:") }) { lines[index] = "From: <\(address)>" }
        return Array(lines.joined(separator: "\r\n").utf8)
    }
}
