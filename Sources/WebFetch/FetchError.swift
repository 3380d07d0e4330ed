/// Why a page could not be fetched, or why it was refused. Stable codes: they appear in the
/// decision log, in the command line's JSON and in API responses. Reasons name the origin
/// (scheme, host, port) but never a path or query, which may carry booking tokens.
package struct FetchError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }

        // The URL (RFC 3986) and the scheme rule.
        /// Not an absolute http(s) URL with a host, or it carries credentials, or it is too long.
        package static let invalidURL = Code("web.invalid-url")
        /// `http:` while unverified sources are not allowed: only HTTPS proves where a page came from.
        package static let notHTTPS = Code("web.not-https")

        // Where the connection goes.
        /// The host resolved (or was written as) a loopback, private, link-local or other
        /// special-purpose address the address policy does not allow.
        package static let addressNotPublic = Code("web.address-not-public")
        /// The host name did not resolve.
        package static let dnsFailed = Code("web.dns-failed")
        /// No TCP connection, or it broke before the response was complete.
        package static let connectionFailed = Code("web.connection-failed")

        // TLS (RFC 8446, RFC 5246) and the certificate (RFC 5280, RFC 6125).
        /// The chain does not lead to a trusted root (unknown or self-signed CA, bad signature,
        /// not a CA, wrong purpose).
        package static let certificateUntrusted = Code("web.certificate-untrusted")
        /// A certificate of the chain is outside its validity period (expired or not yet valid).
        package static let certificateExpired = Code("web.certificate-expired")
        /// The certificate is valid but not for the host that was asked for.
        package static let hostnameMismatch = Code("web.hostname-mismatch")
        /// The TLS handshake failed for another reason (protocol version below TLS 1.2, no common
        /// cipher, not TLS at all).
        package static let tlsFailed = Code("web.tls-failed")
        /// A trust bundle named by the configuration could not be read or holds no certificate.
        package static let trustBundleInvalid = Code("web.trust-bundle-invalid")

        // Redirects (RFC 9110 §15.4).
        package static let redirectNotHTTPS = Code("web.redirect-not-https")
        /// The redirect target's host is not allowed by the caller (not a registered domain).
        package static let redirectNotAllowed = Code("web.redirect-not-allowed")
        package static let tooManyRedirects = Code("web.too-many-redirects")

        // The response.
        package static let tooLarge = Code("web.too-large")
        /// Time to first byte or total time exceeded; the reason says which.
        package static let timeout = Code("web.timeout")
        /// The Content-Type is not one of the accepted HTML types.
        package static let notHTML = Code("web.not-html")
        /// A status other than 200 or 203, or a redirect without a usable Location.
        package static let httpStatus = Code("web.http-status")
        /// A Content-Encoding other than identity, although none was asked for.
        package static let contentEncodingUnsupported = Code("web.content-encoding-unsupported")
        /// Not HTTP/1.1: the response could not be parsed.
        package static let responseMalformed = Code("web.response-malformed")
    }

    package var code: Code
    /// What was wrong, where, and what to do.
    package var reason: String

    package init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    package var description: String { "\(code): \(reason)" }
}
