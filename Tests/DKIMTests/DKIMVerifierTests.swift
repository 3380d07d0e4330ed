import DNS
@testable import DKIM
import Foundation
import MailMessage
import Testing

@Suite("DKIM verification")
struct DKIMVerifierTests {
    let zone: StaticResolver

    init() throws {
        zone = try StaticResolver(zoneFixture: "example.zone")
    }

    // MARK: - Known-good signatures

    @Test("RFC 8463 Appendix A: the Ed25519 and the RSA signature both pass")
    func rfc8463Example() async throws {
        let verifier = DKIMVerifier.fixture(try StaticResolver(zoneFixture: "rfc8463.zone"), at: Fixtures.rfc8463SigningTime)
        let verification = await verifier.verify(try Fixtures.message("rfc8463.eml"))
        #expect(verification.result == .pass)
        #expect(verification.signatures.map(\.result) == [.pass, .pass])
        #expect(verification.signatures.map(\.algorithm) == ["ed25519-sha256", "rsa-sha256"])
        #expect(verification.signatures.map(\.keyBits) == [256, 1024])
        #expect(verification.signatures[0].signedHeaders == ["from", "to", "subject", "date", "message-id", "from", "subject", "date"])
    }

    @Test("Signed by dkimpy, verified here", arguments: [
        ("dkimpy-rsa2048-relaxed.eml", "rsa-sha256", 2048),
        ("dkimpy-ed25519-simple.eml", "ed25519-sha256", 256),
        ("dkimpy-rsa1024-length.eml", "rsa-sha256", 1024),
    ])
    func dkimpySigned(file: String, algorithm: String, bits: Int) async throws {
        let verification = await DKIMVerifier.fixture(zone).verify(try Fixtures.message(file))
        let signature = try #require(verification.signatures.first)
        #expect(signature.result == .pass, "\(signature.code?.description ?? "") \(signature.reason)")
        #expect(signature.algorithm == algorithm)
        #expect(signature.keyBits == bits)
        #expect(signature.signingDomain == "example.com")
    }

    @Test("A bare-LF file is verified as the CRLF message an MTA saw")
    func bareLineFeeds() async throws {
        let crlf = try Fixtures.bytes("dkimpy-rsa2048-relaxed.eml")
        let bareLF = String(decoding: crlf, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        let verification = await DKIMVerifier.fixture(zone).verify(try RawMessage(bareLF))
        #expect(verification.result == .pass)
        let simple = String(decoding: try Fixtures.bytes("dkimpy-ed25519-simple.eml"), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        #expect(await DKIMVerifier.fixture(zone).verify(try RawMessage(simple)).result == .pass)
    }

    @Test("No signature: none")
    func unsigned() async throws {
        let verification = await DKIMVerifier.fixture(zone).verify(try Fixtures.message("booking.eml"))
        #expect(verification.result == .none)
        #expect(verification.signatures.isEmpty)
    }

    // MARK: - Tampering

    @Test("A changed body fails with dkim.body-hash-mismatch")
    func bodyChanged() async throws {
        let message = try Fixtures.message("dkimpy-rsa2048-relaxed.eml").altered { $0.replacingOccurrences(of: "15:17:00", with: "16:17:00") }
        let signature = try #require(await DKIMVerifier.fixture(zone).verify(message).signatures.first)
        #expect(signature.result == .fail)
        #expect(signature.code == .bodyHashMismatch)
    }

    @Test("A changed signed header fails with dkim.signature-mismatch")
    func headerChanged() async throws {
        let message = try Fixtures.message("dkimpy-rsa2048-relaxed.eml").altered { $0.replacingOccurrences(of: "To: Eva Green", with: "To: Eve Green") }
        let signature = try #require(await DKIMVerifier.fixture(zone).verify(message).signatures.first)
        #expect(signature.result == .fail)
        #expect(signature.code == .signatureMismatch)
    }

    @Test("Relaxed canonicalization survives whitespace changes that simple does not")
    func relaxedVersusSimple() async throws {
        let rewrap: (String) -> String = {
            $0.replacingOccurrences(of: "Subject: =?UTF-8?Q?", with: "Subject:   =?UTF-8?Q?")
                .replacingOccurrences(of: "confirmed.  See", with: "confirmed. \t See")
        }
        let relaxed = try Fixtures.message("dkimpy-rsa2048-relaxed.eml").altered(rewrap)
        #expect(await DKIMVerifier.fixture(zone).verify(relaxed).result == .pass)
        let simple = try Fixtures.message("dkimpy-ed25519-simple.eml").altered(rewrap)
        let result = try #require(await DKIMVerifier.fixture(zone).verify(simple).signatures.first)
        #expect(result.result == .fail)
    }

    @Test("An unsigned header may be added; a second From under an over-signed From may not")
    func overSignedFrom() async throws {
        let signer = DKIMSigner.fixture(try Fixtures.key("rsa2048"), selector: "rsa2048")
        let signed = try RawMessage(bytes: signer.sign(try Fixtures.message("booking.eml")))
        #expect(await DKIMVerifier.fixture(zone).verify(signed).result == .pass)
        let received = try RawMessage(bytes: Array("Received: from relay.example.org\r\n".utf8) + signed.bytes)
        #expect(await DKIMVerifier.fixture(zone).verify(received).result == .pass)
        let spoofed = try signed.altered { $0.replacingOccurrences(of: "MIME-Version: 1.0\r\n", with: "MIME-Version: 1.0\r\nFrom: attacker@evil.example\r\n") }
        let result = try #require(await DKIMVerifier.fixture(zone).verify(spoofed).signatures.first)
        #expect(result.code == .signatureMismatch)
    }

    @Test("h= picks repeated fields bottom-up, and a listed but absent field adds nothing")
    func repeatedAndAbsentHeaders() async throws {
        let base = "From: a@example.com\r\nX-Tag: first\r\nX-Tag: second\r\nSubject: hi\r\n\r\nbody\r\n"
        let signer = DKIMSigner.fixture(try Fixtures.key("ed25519"), selector: "ed25519") {
            $0.headers = ["from", "x-tag", "x-tag", "x-tag", "x-absent", "subject"]
            $0.overSignFrom = false
        }
        let signed = try RawMessage(bytes: signer.sign(try RawMessage(base)))
        #expect(await DKIMVerifier.fixture(zone).verify(signed).result == .pass)
        // Swapping the two X-Tag values changes the order the hash sees.
        let swapped = try signed.altered { $0.replacingOccurrences(of: "X-Tag: first\r\nX-Tag: second", with: "X-Tag: second\r\nX-Tag: first") }
        #expect(await DKIMVerifier.fixture(zone).verify(swapped).signatures.first?.code == .signatureMismatch)
        // A third X-Tag (over-signed) or the absent X-Absent appearing breaks it too.
        let added = try signed.altered { $0.replacingOccurrences(of: "Subject: hi", with: "X-Absent: now\r\nSubject: hi") }
        #expect(await DKIMVerifier.fixture(zone).verify(added).signatures.first?.code == .signatureMismatch)
    }

    // MARK: - l=

    @Test("l= records how much of the body is signed; text appended after it still passes")
    func bodyLength() async throws {
        let message = try Fixtures.message("dkimpy-rsa1024-length.eml")
        let intact = try #require(await DKIMVerifier.fixture(zone).verify(message).signatures.first)
        #expect(intact.result == .pass)
        #expect(intact.bodyLengthLimit == 1104)
        #expect(intact.hasUnsignedTail == false)

        let appended = try RawMessage(bytes: message.bytes + Array("<script type=\"application/ld+json\">{}</script>\r\n".utf8))
        let tail = try #require(await DKIMVerifier.fixture(zone).verify(appended).signatures.first)
        #expect(tail.result == .pass)
        #expect(tail.hasUnsignedTail)
        #expect(tail.signedBodyBytes == message.body.count)
        #expect(tail.bodyBytes == appended.body.count)
    }

    @Test("l= longer than the body is a permerror")
    func bodyLengthTooLong() async throws {
        let message = try Fixtures.message("dkimpy-rsa1024-length.eml")
        let truncated = try RawMessage(bytes: Array(message.bytes.dropLast(200)))
        let result = try #require(await DKIMVerifier.fixture(zone).verify(truncated).signatures.first)
        #expect(result.result == .permerror)
        #expect(result.code == .bodyLengthExceeded)
    }

    // MARK: - Times

    @Test("x= in the past expires the signature; t= in the future is refused; both within the skew pass")
    func times() async throws {
        let signingTime = Date(timeIntervalSince1970: 1_800_000_000)
        let signer = DKIMSigner.fixture(try Fixtures.key("ed25519"), selector: "ed25519", at: signingTime) { $0.expiresAfter = 3600 }
        let signed = try RawMessage(bytes: signer.sign(try Fixtures.message("booking.eml")))

        #expect(await DKIMVerifier.fixture(zone, at: signingTime.addingTimeInterval(3600 + 200)).verify(signed).result == .pass)
        let expired = try #require(await DKIMVerifier.fixture(zone, at: signingTime.addingTimeInterval(3600 + 400)).verify(signed).signatures.first)
        #expect(expired.result == .permerror)
        #expect(expired.code == .signatureExpired)

        #expect(await DKIMVerifier.fixture(zone, at: signingTime.addingTimeInterval(-200)).verify(signed).result == .pass)
        let future = try #require(await DKIMVerifier.fixture(zone, at: signingTime.addingTimeInterval(-400)).verify(signed).signatures.first)
        #expect(future.code == .signatureInFuture)
    }

    // MARK: - Algorithms and key sizes (RFC 8301)

    @Test("rsa-sha1 is refused with its own code")
    func rsaSHA1Refused() async throws {
        let message = try RawMessage(
            "DKIM-Signature: v=1; a=rsa-sha1; c=relaxed/relaxed; d=example.com; s=rsa2048; h=from; bh=AAAA; b=AAAA\r\nFrom: a@example.com\r\n\r\nx\r\n")
        let result = try #require(await DKIMVerifier.fixture(zone).verify(message).signatures.first)
        #expect(result.result == .policy)
        #expect(result.code == .algorithmRefused)
    }

    @Test("An RSA key under 1024 bits is refused with its own code")
    func shortKeyRefused() async throws {
        let signer = DKIMSigner.fixture(try Fixtures.key("rsa512"), selector: "rsa512")
        let signed = try RawMessage(bytes: signer.sign(try Fixtures.message("booking.eml")))
        let result = try #require(await DKIMVerifier.fixture(zone).verify(signed).signatures.first)
        #expect(result.result == .policy)
        #expect(result.code == .keyTooShort)
        #expect(result.keyBits == 512)
    }

    @Test("An unknown algorithm is a permerror")
    func unknownAlgorithm() async throws {
        let message = try RawMessage("DKIM-Signature: v=1; a=rsa-sha512; d=example.com; s=x; h=from; bh=AAAA; b=AAAA\r\nFrom: a@example.com\r\n\r\n")
        #expect(await DKIMVerifier.fixture(zone).verify(message).signatures.first?.code == .unknownAlgorithm)
    }

    // MARK: - Tag-list syntax (RFC 6376 §3.2)

    static let goodTags = "v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=AAAA; b=AAAA"

    @Test("Malformed signature fields are permerrors with their own codes", arguments: [
        ("v=1; a=rsa-sha256; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=AAAA; b=AAAA", "dkim.tag-duplicate"),
        ("a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=AAAA; b=AAAA", "dkim.tag-missing"),
        ("v=1; a=rsa-sha256; s=rsa2048; h=from; bh=AAAA; b=AAAA", "dkim.tag-missing"),
        ("v=1; a=rsa-sha256; d=example.com; h=from; bh=AAAA; b=AAAA", "dkim.tag-missing"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; bh=AAAA; b=AAAA", "dkim.tag-missing"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; b=AAAA", "dkim.tag-missing"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=AAAA", "dkim.tag-missing"),
        ("v=2; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=AAAA; b=AAAA", "dkim.version-unsupported"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=A!A; b=AAAA", "dkim.tag-invalid"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=AAAA; b=AAA", "dkim.tag-invalid"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=to:subject; bh=AAAA; b=AAAA", "dkim.from-not-signed"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; i=@other.example; bh=AAAA; b=AAAA", "dkim.identity-mismatch"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; c=fancy/simple; bh=AAAA; b=AAAA", "dkim.canonicalization-unknown"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; q=http; bh=AAAA; b=AAAA", "dkim.query-method-unsupported"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; t=100; x=50; bh=AAAA; b=AAAA", "dkim.tag-invalid"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; l=12a; bh=AAAA; b=AAAA", "dkim.tag-invalid"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh=AAAA; b=AAAA; 3x=1", "dkim.signature-malformed"),
        ("v=1; a=rsa-sha256; d=example.com; s=rsa2048; h=from; bh; b=AAAA", "dkim.signature-malformed"),
    ])
    func malformed(tags: String, code: String) async throws {
        let message = try RawMessage("DKIM-Signature: \(tags)\r\nFrom: a@example.com\r\n\r\nx\r\n")
        let result = try #require(await DKIMVerifier.fixture(zone).verify(message).signatures.first)
        #expect(result.result == .permerror)
        #expect(result.code?.description == code)
    }

    @Test("Whitespace folded inside b= is ignored (b= is blanked before hashing)")
    func foldedSignature() async throws {
        let signed = try Fixtures.message("dkimpy-rsa2048-relaxed.eml")
        let refolded = try signed.altered { text in
            var text = text
            if let range = text.range(of: "b=Pa9Alge8TkUSAR") {
                text.replaceSubrange(range, with: "b=Pa9Al \t\r\n\tge8TkU\r\n SAR")
            }
            return text
        }
        #expect(refolded.bytes != signed.bytes)
        #expect(await DKIMVerifier.fixture(zone).verify(refolded).result == .pass)
    }

    @Test("Base64 values folded over lines decode; junk does not")
    func foldedBase64() {
        #expect(decodeBase64("ovyBy1aKnb\r\n  TRPDMZT36GFl9LmUpc0ByT6TilDC8eLvU=") == decodeBase64("ovyBy1aKnbTRPDMZT36GFl9LmUpc0ByT6TilDC8eLvU="))
        #expect(decodeBase64("ovyBy1aKnbTRPDMZT36GFl9LmUpc0ByT6TilDC8eLvU=")?.count == 32)
        #expect(decodeBase64("ab*d") == nil)
    }

    // MARK: - Key records

    func signedWithRSA2048() throws -> RawMessage { try Fixtures.message("dkimpy-rsa2048-relaxed.eml") }

    func verify(_ message: RawMessage, keyRecord: String?) async throws -> DKIMSignatureResult {
        var resolver = zone
        if let keyRecord { resolver.set("rsa2048._domainkey.example.com", keyRecord) } else { resolver.remove("rsa2048._domainkey.example.com") }
        return try #require(await DKIMVerifier.fixture(resolver).verify(message).signatures.first)
    }

    func publishedRSA2048Key() async throws -> String {
        try await zone.txtRecords(for: "rsa2048._domainkey.example.com")[0].text
    }

    @Test("Key records split over several TXT strings are joined")
    func multiStringKey() async throws {
        let records = try await zone.txtRecords(for: "rsa2048._domainkey.example.com")
        #expect(records[0].strings.count > 1)
        #expect(try await verify(signedWithRSA2048(), keyRecord: records[0].text).result == .pass)
    }

    @Test("Key record problems each have their code")
    func keyRecordProblems() async throws {
        let good = try await publishedRSA2048Key()
        let p = String(good[good.range(of: "p=")!.upperBound...])
        let message = try signedWithRSA2048()
        let cases: [(String?, DKIMResult, String)] = [
            (nil, .permerror, "dkim.key-not-found"),
            ("v=DKIM1; k=rsa; p=", .permerror, "dkim.key-revoked"),
            ("k=rsa; v=DKIM1; p=\(p)", .permerror, "dkim.key-malformed"),
            ("v=DKIM2; p=\(p)", .permerror, "dkim.key-malformed"),
            ("v=DKIM1; k=dsa; p=\(p)", .permerror, "dkim.key-malformed"),
            ("v=DKIM1; p=AAAA", .permerror, "dkim.key-malformed"),
            ("v=DKIM1; k=ed25519; p=\(p)", .permerror, "dkim.key-type-mismatch"),
            ("v=DKIM1; h=sha1; p=\(p)", .permerror, "dkim.key-hash-not-allowed"),
            ("v=DKIM1; s=tlsrpt; p=\(p)", .permerror, "dkim.key-service-mismatch"),
            ("v=DKIM1; t=y; p=\(p)", .policy, "dkim.key-testing"),
            ("v=DKIM1; h=sha1:sha256; s=email; t=s; p=\(p)", .pass, ""),
            ("v=DKIM1; k=rsa; p=\(p)", .pass, ""),
            ("p=\(p)", .pass, ""),
        ]
        for (record, result, code) in cases {
            let verdict = try await verify(message, keyRecord: record)
            #expect(verdict.result == result, "\(record ?? "nil"): \(verdict.reason)")
            #expect((verdict.code?.description ?? "") == code, "\(record ?? "nil")")
        }
    }

    @Test("t=s refuses an i= in a subdomain")
    func strictIdentity() async throws {
        let signer = DKIMSigner.fixture(try Fixtures.key("ed25519"), selector: "ed25519") { $0.identity = "@mail.example.com" }
        let signed = try RawMessage(bytes: signer.sign(try Fixtures.message("booking.eml")))
        #expect(await DKIMVerifier.fixture(zone).verify(signed).result == .pass)
        var strict = zone
        let record = try await zone.txtRecords(for: "ed25519._domainkey.example.com")[0].text
        strict.set("ed25519._domainkey.example.com", record + "; t=s")
        #expect(await DKIMVerifier.fixture(strict).verify(signed).signatures.first?.code == .keyStrictIdentity)
    }

    @Test("DNS outcomes: NXDOMAIN and NODATA are permerror; SERVFAIL, REFUSED, timeouts, network errors and unreadable answers temperror",
          arguments: [
            (DNSError.Code.nameNotFound, DKIMResult.permerror, "dkim.key-not-found"),
            (.noData, .permerror, "dkim.key-not-found"),
            (.serverFailure, .temperror, "dkim.dns-servfail"),
            (.refused, .temperror, "dkim.dns-refused"),
            (.timeout, .temperror, "dkim.dns-timeout"),
            (.network, .temperror, "dkim.dns-unreachable"),
            (.malformedResponse, .temperror, "dkim.dns-malformed"),
            (.cancelled, .temperror, "dkim.dns-error"),
            (.invalidNameserver, .temperror, "dkim.dns-error"),
          ])
    func dnsOutcomes(dnsCode: DNSError.Code, result: DKIMResult, code: String) async throws {
        var resolver = zone
        resolver.answers["rsa2048._domainkey.example.com"] = .failure(DNSError(code: dnsCode, reason: "test"))
        let verdict = try #require(await DKIMVerifier.fixture(resolver).verify(signedWithRSA2048()).signatures.first)
        #expect(verdict.result == result)
        #expect(verdict.code?.description == code)
    }

    // MARK: - Message result

    @Test("The message passes if any signature passes, else takes its first signature's result")
    func messageResult() async throws {
        let good = try Fixtures.message("dkimpy-rsa2048-relaxed.eml")
        let broken = "DKIM-Signature: v=1; a=rsa-sha256; d=example.com; s=missing; h=from; bh=AAAA; b=AAAA\r\n"
        let both = try RawMessage(bytes: Array(broken.utf8) + good.bytes)
        let verification = await DKIMVerifier.fixture(zone).verify(both)
        #expect(verification.signatures.map(\.result) == [.permerror, .pass])
        #expect(verification.result == .pass)

        var outage = zone
        outage.answers["rsa2048._domainkey.example.com"] = .failure(DNSError(code: .timeout, reason: "test"))
        let first = await DKIMVerifier.fixture(outage).verify(both)
        #expect(first.signatures.map(\.result) == [.permerror, .temperror])
        #expect(first.result == .permerror)
    }

    @Test("Authentication-Results names each signature's result, domain, selector and algorithm")
    func authenticationResults() async throws {
        let verification = await DKIMVerifier.fixture(try StaticResolver(zoneFixture: "rfc8463.zone"), at: Fixtures.rfc8463SigningTime)
            .verify(try Fixtures.message("rfc8463.eml"))
        let header = AuthenticationResults.header(for: verification, authServID: "gateway.example")
        #expect(header.hasPrefix("Authentication-Results: gateway.example;"))
        #expect(header.contains("dkim=pass (256-bit ed25519 key) header.d=football.example.com header.i=@football.example.com header.s=brisbane header.a=ed25519-sha256 header.b=\"/gCrinpc\""))
        #expect(header.contains("dkim=pass (1024-bit rsa key) header.d=football.example.com"))
        let none = AuthenticationResults.header(for: DKIMVerification(signatures: []), authServID: "gw")
        #expect(none.contains("dkim=none"))
    }
}
