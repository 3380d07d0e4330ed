package import Foundation

/// A parsed DKIM-Signature header field (RFC 6376 §3.5).
package struct DKIMSignature: Sendable {
    /// `a=` (RFC 6376 §3.3, RFC 8463 §3).
    package enum Algorithm: String, Sendable, Hashable {
        case rsaSHA256 = "rsa-sha256"
        case ed25519SHA256 = "ed25519-sha256"
        /// Parsed so it can be refused by name (RFC 8301 §3.1).
        case rsaSHA1 = "rsa-sha1"

        package var keyType: KeyRecord.KeyType { self == .ed25519SHA256 ? .ed25519 : .rsa }
        var hashName: String { self == .rsaSHA1 ? "sha1" : "sha256" }
    }

    /// `c=` (RFC 6376 §3.4).
    package enum Canonicalization: String, Sendable, Hashable {
        case simple
        case relaxed
    }

    package var algorithm: Algorithm
    /// `b=`, base64-decoded.
    package var signature: [UInt8]
    /// `bh=`, base64-decoded.
    package var bodyHash: [UInt8]
    package var headerCanonicalization: Canonicalization
    package var bodyCanonicalization: Canonicalization
    /// `d=`, lower-cased.
    package var signingDomain: String
    /// `h=`, lower-cased, in order (repeats and over-signed names kept).
    package var signedHeaders: [String]
    /// `i=`, or `@` + `d=` when absent (RFC 6376 §3.5).
    package var identity: String
    /// `l=`.
    package var bodyLength: Int?
    /// `s=`.
    package var selector: String
    /// `t=`.
    package var timestamp: Date?
    /// `x=`.
    package var expiration: Date?
    /// The header field this was parsed from, for the header hash.
    package var field: HeaderFieldReference
    /// `b=` exactly as written, folding removed: for `header.b` in Authentication-Results.
    package var signatureText: String

    /// Where the `DKIM-Signature` field sits, and the range of its `b=` value to blank.
    package struct HeaderFieldReference: Sendable {
        /// Index into `RawMessage.headerFields`.
        package var index: Int
        /// The range of the `b=` value (between `=` and `;`/end) within the field's `raw` bytes.
        package var signatureValueRange: Range<Int>
    }

    /// The key record's DNS name: `selector._domainkey.domain` (RFC 6376 §3.6.2.1).
    package var keyName: String { "\(selector)._domainkey.\(signingDomain)" }
}
