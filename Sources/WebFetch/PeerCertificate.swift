package import Foundation

/// The leaf certificate a server presented (RFC 5280 §4.1): recorded with every page as proof of
/// the source.
package struct PeerCertificate: Sendable, Hashable {
    /// The subject distinguished name in RFC 4514 form, e.g. `CN=booking.example.test`.
    package var subject: String
    /// The issuer distinguished name in RFC 4514 form.
    package var issuer: String
    /// SHA-256 over the DER encoding of the certificate, 64 lowercase hex digits (what
    /// `openssl x509 -fingerprint -sha256` prints, without colons).
    package var sha256Fingerprint: String
    /// The end of the validity period (RFC 5280 §4.1.2.5).
    package var notAfter: Date
    /// The certificate itself, DER-encoded.
    package var der: [UInt8]

    package init(subject: String, issuer: String, sha256Fingerprint: String, notAfter: Date, der: [UInt8]) {
        self.subject = subject
        self.issuer = issuer
        self.sha256Fingerprint = sha256Fingerprint
        self.notAfter = notAfter
        self.der = der
    }
}
