import Foundation
import TestSupport
import Testing

@testable import WebFetch

/// The certificate check on its own, with the committed fixtures and no server: each OpenSSL
/// verification result and the code it maps to.
@Suite("Trust store")
struct TrustStoreTests {
    let store: TrustStore

    init() throws {
        store = try TrustStore(additionalBundles: [Certificates.path("dev-ca.pem")])
    }

    /// The DER of the first certificate in a PEM file of `certs/`.
    static func der(_ name: String) throws -> [UInt8] {
        let pem = try String(contentsOfFile: Certificates.path(name), encoding: .utf8)
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try #require(Data(base64Encoded: base64).map(Array.init))
    }

    static let target = try! PageTarget(URL(string: "https://booking.example.test:8443/")!, allowingHTTP: false)

    @Test func trustedCertificateForItsHostPasses() throws {
        #expect(
            store.verify(chain: [try Self.der("booking.example.test.pem")], host: "booking.example.test", address: nil)
                == nil)
    }

    @Test(
        arguments: [
            // file, host (nil: check the IP address 127.0.0.1), OpenSSL X509_V_ERR_*, code
            ("expired.pem", "booking.example.test", 10, FetchError.Code.certificateExpired),  // CERT_HAS_EXPIRED
            ("untrusted.pem", "booking.example.test", 20, .certificateUntrusted),  // UNABLE_TO_GET_ISSUER_CERT_LOCALLY
            ("untrusted-ca.pem", "booking.example.test", 18, .certificateUntrusted),  // DEPTH_ZERO_SELF_SIGNED_CERT
            ("wrong-host.pem", "booking.example.test", 62, .hostnameMismatch),  // HOSTNAME_MISMATCH
            ("booking.example.test.pem", "other.example.test", 62, .hostnameMismatch),
            ("booking.example.test.pem", nil, 64, .hostnameMismatch),  // IP_ADDRESS_MISMATCH
            ("dev-ca.pem", "booking.example.test", 26, .certificateUntrusted),  // INVALID_PURPOSE: a CA is no server
        ] as [(String, String?, Int32, FetchError.Code)])
    func failuresMapToTheirCodes(file: String, host: String?, openSSLError: Int32, code: FetchError.Code) throws {
        let failure = try #require(
            store.verify(chain: [try Self.der(file)], host: host, address: IPAddress("127.0.0.1")))
        #expect(failure.code == openSSLError, "\(failure.text)")
        #expect(failure.error(for: Self.target).code == code)
    }

    @Test func garbageIsNoCertificate() {
        let failure = store.verify(chain: [[0x30, 0x03, 0x02, 0x01, 0x01]], host: "booking.example.test", address: nil)
        #expect(failure?.error(for: Self.target).code == .certificateUntrusted)
        #expect(store.verify(chain: [], host: "booking.example.test", address: nil) != nil)
    }

    @Test func certificateDetailsAreRead() throws {
        let certificate = try #require(PeerCertificate(der: try Self.der("expired.pem")))
        #expect(certificate.subject == "CN=booking.example.test")
        #expect(certificate.issuer == "CN=Gateway Development CA,O=Gateway Development")
        #expect(certificate.notAfter == Date(timeIntervalSince1970: 1_609_459_200))  // 2021-01-01T00:00:00Z
        #expect(certificate.sha256Fingerprint == (try Certificates.opensslFingerprint("expired.pem")))
        #expect(PeerCertificate(der: [0x30, 0x00]) == nil)
    }
}
