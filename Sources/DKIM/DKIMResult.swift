package import Foundation

/// The outcome of DKIM verification, in RFC 8601 §2.7.1 terms.
package enum DKIMResult: String, Sendable, Hashable, Codable, CaseIterable {
    /// The message has no DKIM-Signature field.
    case none
    /// The signature verified.
    case pass
    /// The signature or the body hash did not match: the message was altered or the key is wrong.
    case fail
    /// The signature could not be evaluated for a reason not covered elsewhere.
    case neutral
    /// The signature verified or could be checked, but is not acceptable (RFC 8301 algorithm or key size, testing key).
    case policy
    /// A lookup failed in a way that may succeed later (timeout, SERVFAIL, REFUSED, an unreadable answer): retry.
    case temperror
    /// The signature or key record is unusable and will stay so (syntax, NXDOMAIN, revoked key, expired).
    case permerror

    /// The RFC 8601 result for a code.
    static func `for`(_ code: DKIMError.Code) -> DKIMResult {
        switch code {
        case .bodyHashMismatch, .signatureMismatch: .fail
        case .algorithmRefused, .keyTooShort, .keyTesting: .policy
        // A lookup that did not give a definitive answer is never a verdict on the message (RFC 6376 §6.1.2: only
        // NXDOMAIN or no key record is PERMFAIL); neither is a local failure.
        case .dnsTimeout, .dnsServerFailure, .dnsRefused, .dnsUnreachable, .dnsMalformed, .dnsError, .openSSLFailure:
            .temperror
        default: .permerror
        }
    }
}

/// The verdict on one DKIM-Signature field.
package struct DKIMSignatureResult: Sendable, Hashable {
    package var result: DKIMResult
    /// Nil when the signature passed.
    package var code: DKIMError.Code?
    /// What happened, in words a sender can act on.
    package var reason: String
    /// `d=`, when it could be read.
    package var signingDomain: String?
    /// `s=`, when it could be read.
    package var selector: String?
    /// `a=` as written.
    package var algorithm: String?
    /// `i=` (the agent or user identifier), or `@d` by default.
    package var identity: String?
    /// Size of the public key in bits, once the key record was read.
    package var keyBits: Int?
    /// The header fields named in `h=`, lower-cased, in order.
    package var signedHeaders: [String]
    /// `l=`, when present (RFC 6376 §3.5): the signature covers only this many canonicalized body bytes.
    package var bodyLengthLimit: Int?
    /// How many bytes of the message body (as transmitted) the signature covers: the whole body unless
    /// `l=` cut it short. Later stages take markup only from these bytes.
    package var signedBodyBytes: Int?
    /// The message body's length, to tell whether an unsigned tail exists.
    package var bodyBytes: Int
    /// `t=`, when present (RFC 6376 §3.5): when the signer says it signed.
    package var timestamp: Date?
    /// The first characters of `b=`, as RFC 6008 `header.b` uses to tell signatures apart.
    package var signatureFingerprint: String?

    /// True when `l=` leaves part of the body unsigned.
    package var hasUnsignedTail: Bool {
        guard let signed = signedBodyBytes else { return false }
        return signed < bodyBytes
    }
}

/// The verdict on a whole message.
package struct DKIMVerification: Sendable, Hashable {
    /// `pass` if any signature passes; otherwise the result of the first (topmost) signature;
    /// `none` if there is no signature.
    package var result: DKIMResult
    /// One result per DKIM-Signature field, top first.
    package var signatures: [DKIMSignatureResult]

    package init(signatures: [DKIMSignatureResult]) {
        self.signatures = signatures
        if signatures.contains(where: { $0.result == .pass }) {
            result = .pass
        } else {
            result = signatures.first?.result ?? .none
        }
    }

    /// The passing signatures, top first.
    package var passing: [DKIMSignatureResult] { signatures.filter { $0.result == .pass } }
}
