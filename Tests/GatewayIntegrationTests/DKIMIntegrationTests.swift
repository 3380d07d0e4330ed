import DKIM
import DNS
import Foundation
import MailMessage
import TestSupport
import Testing

/// DKIM through a real DNS server (dnsmasq on loopback) and against an independent verifier and
/// signer (Debian's python3-dkim).
@Suite("DKIM end to end", .serialized)
struct DKIMIntegrationTests {
    static let message = """
        From: "Nordic Rail" <bookings@rail.example>\r
        To: Eva Green <eva@guest.example.net>\r
        Subject: Your booking B9C8\r
        Date: Mon, 02 Nov 2026 09:14:03 +0100\r
        Message-ID: <b9c8@rail.example>\r
        MIME-Version: 1.0\r
        Content-Type: text/html; charset=utf-8\r
        \r
        <html><body>  <script type="application/ld+json">{"@type": "TrainReservation",\r
          "reservationNumber": "B9C8"}</script>\t\r
        <p>See you   on board.</p>\r
        \r
        \r
        </body></html>\r

        """

    struct Keys {
        let directory: URL
        let rsa: PrivateKey
        let ed25519: PrivateKey
        var rsaPath: URL { directory.appendingPathComponent("rsa.pem") }
        var ed25519Path: URL { directory.appendingPathComponent("ed.pem") }
        var zonePath: URL { directory.appendingPathComponent("keys.zone") }

        init() throws {
            directory = try Integration.temporaryDirectory()
            rsa = try PrivateKey.generate(type: .rsa, bits: 2048)
            ed25519 = try PrivateKey.generate(type: .ed25519)
            try Data(try rsa.pem().utf8).write(to: rsaPath)
            try Data(try ed25519.pem().utf8).write(to: ed25519Path)
            let zone = records.map { "\($0.0). IN TXT \"\($0.1)\"" }.joined(separator: "\n")
            try Data(zone.utf8).write(to: zonePath)
        }

        var records: [(String, String)] {
            [
                ("rsa._domainkey.rail.example", "v=DKIM1; k=rsa; p=\(Data(try! rsa.publicKeyRecordData()).base64EncodedString())"),
                ("ed._domainkey.rail.example", "v=DKIM1; k=ed25519; p=\(Data(try! ed25519.publicKeyRecordData()).base64EncodedString())"),
            ]
        }

        var dnsmasqRecords: [DNSMasq.Record] {
            records.map { DNSMasq.Record.txt($0.0, $0.1) } + [.existing("nokey._domainkey.rail.example")]
        }

        func cleanup() { try? FileManager.default.removeItem(at: directory) }
    }

    func sign(_ message: String, key: PrivateKey, selector: String, canonicalization: DKIMSignature.Canonicalization = .relaxed,
              at date: Date = Date(), expiresAfter: TimeInterval? = nil) throws -> RawMessage {
        var configuration = DKIMSigner.Configuration(signingDomain: "rail.example", selector: selector)
        configuration.headerCanonicalization = canonicalization
        configuration.bodyCanonicalization = canonicalization
        configuration.now = { date }
        configuration.expiresAfter = expiresAfter
        return try RawMessage(bytes: DKIMSigner(key: key, configuration: configuration).sign(try RawMessage(message)))
    }

    func dkimpyVerify(_ message: RawMessage, zone: URL) async throws -> [String] {
        let result = try await Integration.run(Integration.python, [Integration.scripts.appendingPathComponent("dkimpy.py").path, "verify", zone.path], input: message.bytes)
        #expect(result.status == 0, "dkimpy: \(result.error)")
        return result.text.split(separator: "\n").map(String.init)
    }

    func dkimpySign(_ message: String, key: URL, selector: String, algorithm: String, canonicalization: String) async throws -> RawMessage {
        let result = try await Integration.run(
            Integration.python,
            [Integration.scripts.appendingPathComponent("dkimpy.py").path, "sign", key.path, selector, "rail.example", algorithm, canonicalization],
            input: Array(Self.message.utf8))
        #expect(result.status == 0, "dkimpy: \(result.error)")
        return try RawMessage(bytes: result.output)
    }

    // MARK: - Real DNS

    @Test("Keys fetched from a real nameserver: pass, NXDOMAIN and NODATA are permerrors")
    func throughDNSMasq() async throws {
        let keys = try Keys()
        defer { keys.cleanup() }
        try await withDNSMasq(records: keys.dnsmasqRecords, localDomains: ["rail.example"]) { dnsmasq in
            let verifier = DKIMVerifier(resolver: CachingResolver(upstream: DNSClient(configuration: dnsmasq.clientConfiguration())))
            let rsa = try sign(Self.message, key: keys.rsa, selector: "rsa")
            #expect(await verifier.verify(rsa).result == .pass)
            let ed = try sign(Self.message, key: keys.ed25519, selector: "ed", canonicalization: .simple)
            #expect(await verifier.verify(ed).result == .pass)

            let unknown = try sign(Self.message, key: keys.rsa, selector: "gone")
            let nxdomain = try #require(await verifier.verify(unknown).signatures.first)
            #expect(nxdomain.result == .permerror)
            #expect(nxdomain.code == .keyNotFound)

            let noData = try sign(Self.message, key: keys.rsa, selector: "nokey")
            let nodata = try #require(await verifier.verify(noData).signatures.first)
            #expect(nodata.result == .permerror)
            #expect(nodata.code == .keyNotFound)
        }
    }

    @Test("SERVFAIL, REFUSED and silence are temperrors, so the message can be retried")
    func temporaryFailures() async throws {
        let keys = try Keys()
        defer { keys.cleanup() }
        let message = try sign(Self.message, key: keys.rsa, selector: "rsa")
        let cases: [(FakeDNSResponder.Behaviour, DKIMError.Code)] = [
            (.responseCode(2), .dnsServerFailure), (.responseCode(5), .dnsRefused), (.silence, .dnsTimeout),
        ]
        for (behaviour, code) in cases {
            try await withFakeDNSResponder(behaviour) { responder in
                let configuration = responder.clientConfiguration(timeout: .milliseconds(300), attempts: 1)
                let verifier = DKIMVerifier(resolver: DNSClient(configuration: configuration))
                let result = try #require(await verifier.verify(message).signatures.first)
                #expect(result.result == .temperror)
                #expect(result.code == code)
            }
        }
    }

    @Test("A nameserver that stopped answering gives temperror")
    func stoppedServer() async throws {
        let keys = try Keys()
        defer { keys.cleanup() }
        let message = try sign(Self.message, key: keys.ed25519, selector: "ed")
        let dnsmasq = try await DNSMasq.start(records: keys.dnsmasqRecords, localDomains: ["rail.example"])
        let configuration = dnsmasq.clientConfiguration(timeout: .milliseconds(300), attempts: 1)
        #expect(await DKIMVerifier(resolver: DNSClient(configuration: configuration)).verify(message).result == .pass)
        dnsmasq.stop()
        let verdict = await DKIMVerifier(resolver: DNSClient(configuration: configuration)).verify(message)
        #expect(verdict.result == .temperror)
    }

    // MARK: - Cross-check with dkimpy

    @Test("Messages signed by dkimpy pass here", arguments: [
        ("rsa-sha256", "relaxed/relaxed"), ("rsa-sha256", "simple/simple"), ("ed25519-sha256", "relaxed/simple"),
    ])
    func dkimpySignedPass(algorithm: String, canonicalization: String) async throws {
        let keys = try Keys()
        defer { keys.cleanup() }
        let isRSA = algorithm.hasPrefix("rsa")
        let signed = try await dkimpySign(Self.message, key: isRSA ? keys.rsaPath : keys.ed25519Path, selector: isRSA ? "rsa" : "ed",
                                    algorithm: algorithm, canonicalization: canonicalization)
        let verifier = DKIMVerifier(resolver: try ZoneFileResolver(contentsOfFile: keys.zonePath.path))
        let result = try #require(await verifier.verify(signed).signatures.first)
        #expect(result.result == .pass, "\(result.reason)")
        #expect(result.algorithm == algorithm)
    }

    @Test("Messages signed here pass in dkimpy", arguments: [
        (true, DKIMSignature.Canonicalization.relaxed), (true, .simple), (false, .relaxed), (false, .simple),
    ])
    func gatewaySignedPassInDkimpy(rsa: Bool, canonicalization: DKIMSignature.Canonicalization) async throws {
        let keys = try Keys()
        defer { keys.cleanup() }
        let signed = try sign(Self.message, key: rsa ? keys.rsa : keys.ed25519, selector: rsa ? "rsa" : "ed", canonicalization: canonicalization)
        #expect(try await dkimpyVerify(signed, zone: keys.zonePath) == ["pass"])
    }

    @Test("Tampered messages fail in both verifiers: body, signed header, expiry")
    func tamperedFailInBoth() async throws {
        let keys = try Keys()
        defer { keys.cleanup() }
        let verifier = DKIMVerifier(resolver: try ZoneFileResolver(contentsOfFile: keys.zonePath.path))
        let signed = try sign(Self.message, key: keys.rsa, selector: "rsa")
        let text = String(decoding: signed.bytes, as: UTF8.self)
        let tampered: [(String, RawMessage, DKIMError.Code)] = [
            ("body", try RawMessage(text.replacingOccurrences(of: "B9C8\"}", with: "B9C9\"}")), .bodyHashMismatch),
            ("header", try RawMessage(text.replacingOccurrences(of: "Subject: Your booking B9C8", with: "Subject: Your booking B9C9")), .signatureMismatch),
            // dkimpy allows 10 hours of slop on x= (we allow 5 minutes by default): expired two days ago.
            ("expiry", try sign(Self.message, key: keys.rsa, selector: "rsa", at: Date().addingTimeInterval(-2 * 86400), expiresAfter: 3600), .signatureExpired),
        ]
        for (what, message, code) in tampered {
            let ours = try #require(await verifier.verify(message).signatures.first)
            #expect(ours.code == code, "\(what)")
            #expect(try await dkimpyVerify(message, zone: keys.zonePath) == ["fail"], "\(what): \(String(decoding: message.bytes.prefix(400), as: UTF8.self))")
        }
    }
}
