import DNS
import Foundation
import MailMessage
import Testing

@testable import DKIM

/// Inputs that made DKIM crash or take too long, found by `make fuzz` (fuzz-dkim-tags, see
/// Fuzz/README.md) or while reading the code it exercises, each kept with the behaviour its fix gives.
@Suite("Fuzz regressions")
struct DKIMFuzzRegressionTests {
    /// h= naming 100,001 fields over a header of 100,000: the header hash input searched the whole
    /// header once per h= entry (minutes); a sender's own domain and key are all it takes.
    @Test("A signature over 100,000 header fields signs and verifies in linear time")
    func manySignedHeaderFields() async throws {
        var text = "From: a@example.com\r\n"
        for index in 0..<100_000 { text += "X-Tag: \(index)\r\n" }
        text += "Subject: hi\r\n\r\nbody\r\n"
        let message = try RawMessage(text)
        let signer = DKIMSigner.fixture(try Fixtures.key("ed25519"), selector: "ed25519") {
            // One X-Tag more than present: the over-signed name adds nothing (RFC 6376 §5.4.2).
            $0.headers = ["from"] + Array(repeating: "x-tag", count: 100_001) + ["subject"]
            $0.overSignFrom = false
        }
        let start = ContinuousClock.now
        let signed = try RawMessage(bytes: signer.sign(message))
        let verification = await DKIMVerifier.fixture(try StaticResolver(zoneFixture: "example.zone")).verify(signed)
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(verification.result == .pass)
        #expect(verification.signatures.first?.signedHeaders.count == 100_003)

        // The bottom-up choice still matters: swapping two signed fields breaks the signature.
        let swapped = try signed.altered {
            $0.replacingOccurrences(of: "X-Tag: 0\r\nX-Tag: 1\r\n", with: "X-Tag: 1\r\nX-Tag: 0\r\n")
        }
        let failed = await DKIMVerifier.fixture(try StaticResolver(zoneFixture: "example.zone")).verify(swapped)
        #expect(failed.signatures.first?.code == .signatureMismatch)
    }
}
