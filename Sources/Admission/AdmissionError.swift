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
