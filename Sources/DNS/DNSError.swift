/// Why a lookup produced no records. Definitive answers (NXDOMAIN, NODATA) are told apart from
/// conditions that may clear (SERVFAIL, REFUSED, timeouts, network errors).
package struct DNSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable: codes appear in logs and in DKIM results.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }
        /// NXDOMAIN (RCODE 3): the name does not exist.
        package static let nameNotFound = Code("dns.nxdomain")
        /// NOERROR with no record of the asked type: the name exists, the TXT record does not.
        package static let noData = Code("dns.nodata")
        /// SERVFAIL (RCODE 2).
        package static let serverFailure = Code("dns.servfail")
        /// REFUSED (RCODE 5).
        package static let refused = Code("dns.refused")
        /// No answer from any nameserver within the deadline, after retries.
        package static let timeout = Code("dns.timeout")
        /// A socket error (unreachable, connection refused, ...).
        package static let network = Code("dns.network")
        /// An answer that could not be parsed, or another RCODE.
        package static let malformedResponse = Code("dns.malformed-response")
        /// The query itself is not a valid domain name.
        package static let invalidName = Code("dns.invalid-name")
        /// The caller's task was cancelled before an answer arrived.
        package static let cancelled = Code("dns.cancelled")
        /// A nameserver given in configuration (`--nameserver`, resolv.conf) is not a usable IP address and port.
        package static let invalidNameserver = Code("dns.invalid-nameserver")
    }

    package var code: Code
    /// What was asked, of whom, and what happened; never carries record contents.
    package var reason: String

    package init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// True when asking again later may give an answer (RFC 6376 §6.1.2: TEMPFAIL). An answer that could not be read
    /// is one: a broken or spoofed packet says nothing about the name, and the next answer may be fine.
    package var isTemporary: Bool {
        code == .serverFailure || code == .refused || code == .timeout || code == .network || code == .cancelled
            || code == .malformedResponse
    }

    package var description: String { "\(code): \(reason)" }
}
