/// Why a DKIM signature did not pass, or why signing failed. Stable codes: they appear in the
/// decision log, in `gateway dkim verify --json` and in API responses.
package struct DKIMError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }

        // Signature field syntax (RFC 6376 §3.2, §3.5, §6.1.1): permerror.
        package static let signatureMalformed = Code("dkim.signature-malformed")
        package static let duplicateTag = Code("dkim.tag-duplicate")
        package static let missingTag = Code("dkim.tag-missing")
        package static let invalidTag = Code("dkim.tag-invalid")
        package static let unsupportedVersion = Code("dkim.version-unsupported")
        package static let unknownAlgorithm = Code("dkim.algorithm-unknown")
        package static let unknownCanonicalization = Code("dkim.canonicalization-unknown")
        package static let unsupportedQueryMethod = Code("dkim.query-method-unsupported")
        package static let fromNotSigned = Code("dkim.from-not-signed")
        package static let identityMismatch = Code("dkim.identity-mismatch")
        package static let signatureExpired = Code("dkim.signature-expired")
        package static let signatureInFuture = Code("dkim.signature-in-future")
        package static let bodyLengthExceeded = Code("dkim.body-length-exceeded")
        package static let tooManySignatures = Code("dkim.too-many-signatures")

        // RFC 8301: refused outright, policy.
        package static let algorithmRefused = Code("dkim.algorithm-refused")
        package static let keyTooShort = Code("dkim.key-too-short")
        /// The key is in testing mode (`t=y`, RFC 6376 §3.6.1): not to be trusted over unsigned mail.
        package static let keyTesting = Code("dkim.key-testing")

        // Key retrieval (RFC 6376 §6.1.2): permerror unless marked temperror.
        package static let keyNotFound = Code("dkim.key-not-found")
        package static let dnsTimeout = Code("dkim.dns-timeout")  // temperror
        package static let dnsServerFailure = Code("dkim.dns-servfail")  // temperror
        package static let dnsRefused = Code("dkim.dns-refused")  // temperror
        package static let dnsUnreachable = Code("dkim.dns-unreachable")  // temperror
        /// An answer that could not be read (a compression loop, an RDLENGTH past the message, an unexpected
        /// RCODE): the next answer, or another server's, may be fine.
        package static let dnsMalformed = Code("dkim.dns-malformed")  // temperror
        /// The lookup could not be made at all (cancelled, no usable nameserver configured).
        package static let dnsError = Code("dkim.dns-error")  // temperror
        package static let keyMalformed = Code("dkim.key-malformed")
        package static let keyRevoked = Code("dkim.key-revoked")
        package static let keyTypeMismatch = Code("dkim.key-type-mismatch")
        package static let keyHashNotAllowed = Code("dkim.key-hash-not-allowed")
        package static let keyServiceMismatch = Code("dkim.key-service-mismatch")
        package static let keyStrictIdentity = Code("dkim.key-strict-identity")

        // Verification (RFC 6376 §6.1.3): fail.
        package static let bodyHashMismatch = Code("dkim.body-hash-mismatch")
        package static let signatureMismatch = Code("dkim.signature-mismatch")

        // Local failures.
        package static let openSSLFailure = Code("dkim.openssl-failure")
        package static let privateKeyInvalid = Code("dkim.private-key-invalid")
        package static let messageInvalid = Code("dkim.message-invalid")
    }

    package var code: Code
    /// What was wrong, where, and what to do. Never carries message bodies or keys.
    package var reason: String

    package init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    package var description: String { "\(code): \(reason)" }

    static func weakKey(bits: Int, selector: String, domain: String) -> DKIMError {
        DKIMError(
            code: .keyTooShort,
            reason: "\(selector)._domainkey.\(domain) is a \(bits)-bit RSA key; RFC 8301 requires 1024 bits or more (publish a 2048-bit key)"
        )
    }
}
