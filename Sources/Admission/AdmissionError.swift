/// Why a registration, a flag change or a policy could not be used. Stable codes.
package struct AdmissionError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }

        package static let domainInvalid = Code("registry.domain-invalid")
        package static let ipLiteral = Code("registry.ip-literal")
        package static let publicSuffix = Code("registry.public-suffix")
        package static let mixedScripts = Code("registry.mixed-scripts")
        package static let domainNotRegistered = Code("registry.domain-not-registered")
        /// Control of the domain is not proved: its challenge record was never found (or it is suspended for a
        /// missing record).
        package static let domainNotVerified = Code("registry.domain-not-verified")
        /// Proved, but not approved for production.
        package static let domainNotApproved = Code("registry.domain-not-approved")
        /// Suspended: revoked by an operator, or its challenge record gone for several checks.
        package static let domainSuspended = Code("registry.domain-suspended")
        /// The policy does not let anyone register a domain without an admin token.
        package static let registrationClosed = Code("registry.registration-closed")
        /// A self-service registration of a domain someone registered already.
        package static let domainTaken = Code("registry.domain-taken")
        /// A host a registration lists for its links is not a domain name (or is a public suffix).
        package static let hostInvalid = Code("registry.host-invalid")
        /// The policy does not allow test mode.
        package static let testModeLocked = Code("test-mode.locked")
        /// Test mode asked to stay on for longer than the policy allows (or for no time at all).
        package static let testModeDurationOutOfRange = Code("test-mode.duration-out-of-range")
        /// Test mode lists no owner, too many, or something that is not an address.
        package static let testModeOwnersInvalid = Code("test-mode.owners-invalid")
        package static let flagsLocked = Code("flags.locked")
        /// A flag asked to stay on for longer than the policy allows (or for no time at all).
        package static let flagDurationOutOfRange = Code("flags.duration-out-of-range")
        package static let unknownFlag = Code("flags.unknown")
        package static let policyNotFound = Code("policy.not-found")
        package static let policyInvalid = Code("policy.invalid")
        package static let publicSuffixListUnavailable = Code("registry.psl-unavailable")
    }

    package var code: Code
    package var reason: String

    package init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    package var description: String { "\(code): \(reason)" }
}
