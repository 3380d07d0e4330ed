import Testing
import TestSupport

@testable import MailMessage

/// Mangled messages never trap: every prefix of a real message, and deterministic random mutations.
@Suite struct RobustnessTests {
    static let fixture = utf8(
        "From: =?utf-8?Q?Caf=C3=A9?= <a@example.com>\r\nTo: x:b@example.com,(c)<d@e>;\r\n"
            + "Content-Type: multipart/mixed; boundary=\"o\"; x*0*=utf-8''%E2; x*1*=%82%AC\r\n\r\n"
            + "--o\r\nContent-Type: multipart/alternative; boundary=a\r\n\r\n"
            + "--a\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            + "<p>caf=E9=\r\n =3D</p>\r\n"
            + "--a\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
            + "PHA+w6k8L3A+\r\n--a--\r\n"
            + "--o\r\nContent-Type: message/rfc822\r\n\r\nContent-Type: text/html\r\n\r\n<p>x</p>\r\n--o--\r\n")

    @Test func everyPrefixParses() throws {
        for length in 1...Self.fixture.count {
            guard let message = try? RawMessage(bytes: Array(Self.fixture[..<length])) else { continue }
            let markup = message.markupParts()
            #expect(markup.parts.count <= 2)
            _ = message.from
            _ = message.recipients()
        }
        let whole = try RawMessage(bytes: Self.fixture).markupParts()
        #expect(whole.parts.map(\.text) == ["<p>café =</p>", "<p>é</p>"])
    }

    @Test func randomMutationsParse() {
        var generator = SplitMix64(seed: 0x5EED)  // deterministic: a failure reproduces
        let interesting: [UInt8] = Array("-=?;:\"\\()<>@,\r\n \t%*'".utf8) + [0x00, 0x80, 0xFF]
        var parsed = 0
        for _ in 0..<1500 {
            var bytes = Self.fixture
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[position] = interesting.randomElement(using: &generator) ?? 0
                case 1: bytes.remove(at: position)
                default: bytes.insert(interesting.randomElement(using: &generator) ?? 0, at: position)
                }
            }
            guard let message = try? RawMessage(bytes: bytes) else { continue }
            parsed += 1
            let markup = message.markupParts()
            #expect(markup.parts.count <= 1000)
            _ = message.recipients(in: ["from", "to"])
            _ = message.headerFields.map(\.decodedValue)
        }
        #expect(parsed > 1200)
    }
}
