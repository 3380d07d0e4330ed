import DNS
import Foundation
import Testing

@Suite struct ZoneFileResolverTests {
    private func zoneError(_ text: String, origin: String? = nil) -> ZoneFileError? {
        do {
            _ = try ZoneFileResolver(zoneText: text, origin: origin)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsAnAbsoluteRecord() async throws {
        let zone = try ZoneFileResolver(zoneText: "sel._domainkey.example.com. IN TXT \"v=DKIM1; k=rsa; p=MIGf\"\n")
        let records = try await zone.txtRecords(for: "sel._domainkey.example.com")
        #expect(records == [TXTRecord(strings: [bytes("v=DKIM1; k=rsa; p=MIGf")], ttl: 3600)])
    }

    @Test(arguments: [
        ("a.test. 600 IN TXT \"x\"", UInt32(600)),
        ("a.test. IN 600 TXT \"x\"", 600),
        ("a.test. 600 TXT \"x\"", 600),
        ("a.test. in txt \"x\"", 3600),
        ("a.test. 1h30m IN TXT \"x\"", 5400),
        ("a.test. 1W TXT \"x\"", 604_800),
        ("$TTL 120\na.test. TXT \"x\"", 120),
        ("$TTL 1d\na.test. 30 TXT \"x\"", 30),
    ])
    func readsTTLAndClassInEitherOrder(_ text: String, ttl: UInt32) async throws {
        let zone = try ZoneFileResolver(zoneText: text)
        #expect(try await zone.txtRecords(for: "a.test").map(\.ttl) == [ttl])
    }

    @Test func withoutTTLTheLastExplicitOneApplies() async throws {
        let zone = try ZoneFileResolver(zoneText: "a.test. 77 TXT \"x\"\nb.test. TXT \"y\"\n")
        #expect(try await zone.txtRecords(for: "b.test").map(\.ttl) == [77])
    }

    @Test func keepsSeveralStringsAndSeveralRecords() async throws {
        let text = """
            k.test. TXT "v=DKIM1; " "k=rsa; " unquoted
            k.test. TXT "second record"
            """
        let records = try await ZoneFileResolver(zoneText: text).txtRecords(for: "k.test")
        #expect(
            records.map(\.strings) == [
                [bytes("v=DKIM1; "), bytes("k=rsa; "), bytes("unquoted")], [bytes("second record")],
            ])
        #expect(records[0].text == "v=DKIM1; k=rsa; unquoted")
    }

    @Test func readsParenthesesOverSeveralLinesWithComments() async throws {
        let text = """
            ; a DKIM key, as a DNS operator would write it
            $ORIGIN example.com.
            sel._domainkey  3600  IN  TXT  ( "v=DKIM1; k=rsa; "   ; tags
                                             "p=MIGfMA0G;CSq"     ; semicolon inside quotes is data
                                             )
            next            IN  TXT  "after"
            """
        let zone = try ZoneFileResolver(zoneText: text)
        let records = try await zone.txtRecords(for: "sel._domainkey.example.com")
        #expect(records.map(\.text) == ["v=DKIM1; k=rsa; p=MIGfMA0G;CSq"])
        #expect(records.map(\.strings.count) == [2])
        #expect(try await zone.txtRecords(for: "next.example.com").map(\.text) == ["after"])
    }

    @Test func decodesEscapes() async throws {
        let text = #"e.test. TXT "say \"hi\"" "back\\slash" "semi\059colon" "\255" bare\"word"#
        let records = try await ZoneFileResolver(zoneText: text).txtRecords(for: "e.test")
        #expect(
            records.first?.strings == [
                bytes("say \"hi\""), bytes("back\\slash"), bytes("semi;colon"), [255], bytes("bare\"word"),
            ])
    }

    @Test func resolvesOriginAtAndRelativeNames() async throws {
        let text = """
            $ORIGIN example.com.
            @                 TXT "apex"
            sel._domainkey    TXT "key"
            $ORIGIN sub
            deep              TXT "relative origin"
            other.org.        TXT "absolute"
            """
        let zone = try ZoneFileResolver(zoneText: text)
        #expect(try await zone.txtRecords(for: "example.com").map(\.text) == ["apex"])
        #expect(try await zone.txtRecords(for: "sel._domainkey.example.com").map(\.text) == ["key"])
        #expect(try await zone.txtRecords(for: "deep.sub.example.com").map(\.text) == ["relative origin"])
        #expect(try await zone.txtRecords(for: "other.org").map(\.text) == ["absolute"])
    }

    @Test func originCanBeGivenUpFront() async throws {
        let zone = try ZoneFileResolver(zoneText: "sel._domainkey TXT \"k\"\n", origin: "Example.COM")
        #expect(try await zone.txtRecords(for: "sel._domainkey.example.com").map(\.text) == ["k"])
    }

    @Test func aBlankOwnerRepeatsThePreviousOne() async throws {
        let text = "$ORIGIN example.com.\nwww A 192.0.2.1\n    TXT \"same owner\"\n"
        let zone = try ZoneFileResolver(zoneText: text)
        #expect(try await zone.txtRecords(for: "www.example.com").map(\.text) == ["same owner"])
    }

    @Test func otherTypesMakeANameExistWithoutTXT() async throws {
        let text = """
            $ORIGIN example.com.
            host        IN A     192.0.2.1
            mail        IN MX    10 mx.example.com.
            @           IN SOA   ns hostmaster ( 1 7200 3600 1209600 3600 )
            """
        let zone = try ZoneFileResolver(zoneText: text)
        #expect(await lookupError { try await zone.txtRecords(for: "host.example.com") }?.code == .noData)
        #expect(await lookupError { try await zone.txtRecords(for: "mail.example.com") }?.code == .noData)
        #expect(await lookupError { try await zone.txtRecords(for: "example.com") }?.code == .noData)
        #expect(await lookupError { try await zone.txtRecords(for: "nothing.example.com") }?.code == .nameNotFound)
        #expect(await lookupError { try await zone.txtRecords(for: "bad..name") }?.code == .invalidName)
        #expect(zone.names == ["example.com", "host.example.com", "mail.example.com"])
    }

    @Test func lookupsIgnoreCaseAndTheTrailingDot() async throws {
        let zone = try ZoneFileResolver(zoneText: "Sel._DomainKey.Example.COM. TXT \"k\"")
        #expect(try await zone.txtRecords(for: "SEL._domainkey.example.com.").map(\.text) == ["k"])
    }

    @Test func splitsStringsLongerThan255Bytes() async throws {
        let key = String(repeating: "M", count: 600)
        let zone = try ZoneFileResolver(zoneText: "k.test. TXT \"p=\(key)\"")
        let record = try #require(try await zone.txtRecords(for: "k.test").first)
        #expect(record.strings.map(\.count) == [255, 255, 92])
        #expect(record.text == "p=" + key)
    }

    @Test func acceptsCRLFLineEndings() async throws {
        let zone = try ZoneFileResolver(zoneText: "a.test. TXT \"one\"\r\nb.test. TXT ( \"two\"\r\n )\r\n")
        #expect(try await zone.txtRecords(for: "a.test").map(\.text) == ["one"])
        #expect(try await zone.txtRecords(for: "b.test").map(\.text) == ["two"])
    }

    @Test(arguments: [
        ("a.test. TXT \"ok\"\nb.test. TXT \"no end\n", ZoneFileError.Code.unterminatedString, 2),
        ("a.test. TXT \"ok\"\n\nb.test. TXT \"x\" )\n", .unbalancedParentheses, 3),
        ("a.test. TXT \"ok\"\nb.test. TXT ( \"x\"\n \"y\"\n", .unbalancedParentheses, 2),
        ("a.test. TXT ( ( \"x\" ) )", .unbalancedParentheses, 1),
        ("; comment\nrelative TXT \"x\"", .missingOrigin, 2),
        ("@ TXT \"x\"", .missingOrigin, 1),
        ("a.test. TXT \"x\"\na.test. 99999999999 TXT \"x\"", .invalidTTL, 2),
        ("a.test. 1x TXT \"x\"", .invalidTTL, 1),
        ("$TTL soon", .invalidTTL, 1),
        ("a.test. CH TXT \"x\"", .unsupportedClass, 1),
        ("\n\n$INCLUDE other.zone", .unsupportedDirective, 3),
        ("$GENERATE 1-10 a$ A 1.2.3.4", .unsupportedDirective, 1),
        ("$ORIGIN", .syntax, 1),
        ("a.test. 300 IN", .syntax, 1),
        ("a.test. TXT", .syntax, 1),
        ("a.test. 300 IN \"TXT\" \"x\"", .syntax, 1),
        ("a.test. T@XT x", .syntax, 1),
        ("  TXT \"no owner yet\"", .syntax, 1),
        ("a..test. TXT \"x\"", .invalidName, 1),
        ("\(String(repeating: "l", count: 64)).test. TXT \"x\"", .invalidName, 1),
        ("a\\.b.test. TXT \"x\"", .invalidName, 1),
        ("a.test. TXT \"\\256\"", .invalidEscape, 1),
        ("a.test. TXT \"\\12\"", .invalidEscape, 1),
    ])
    func reportsErrorsWithTheirLine(_ text: String, code: ZoneFileError.Code, line: Int) {
        let error = zoneError(text)
        #expect(error?.code == code)
        #expect(error?.line == line)
    }

    @Test func readsAFile() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).zone").path
        try Data("$ORIGIN example.org.\nsel._domainkey TXT \"v=DKIM1; p=\"\n".utf8).write(
            to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let zone = try ZoneFileResolver(contentsOfFile: path)
        #expect(try await zone.txtRecords(for: "sel._domainkey.example.org").map(\.text) == ["v=DKIM1; p="])
    }

    @Test func anUnreadableFileIsAnErrorAtLineZero() {
        do {
            _ = try ZoneFileResolver(contentsOfFile: "/nonexistent/keys.zone")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unreadableFile)
            #expect(error.line == 0)
        }
    }
}
