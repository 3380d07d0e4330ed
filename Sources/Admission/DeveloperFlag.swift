package import Foundation
package import Store

/// The two developer overrides (off by default), each loosening one check for testing.
package enum DeveloperFlag: String, CaseIterable, Sendable, Codable, Hashable {
    /// Skip the registry check; authentication still applies.
    case allowAnyDomain = "allow-any-domain"
    /// Skip DKIM (email) and HTTPS verification (web); everything else still applies.
    case allowUnverifiedSources = "allow-unverified-sources"
}

/// The flags in force at one instant.
package struct ActiveFlags: Sendable, Hashable {
    package var flags: Set<DeveloperFlag>

    package init(_ flags: Set<DeveloperFlag> = []) { self.flags = flags }

    package func contains(_ flag: DeveloperFlag) -> Bool { flags.contains(flag) }
}

/// A flag's state as `gateway flags` shows it.
package struct FlagStatus: Sendable, Hashable, Codable {
    package var name: String
    package var enabled: Bool
    package var expiresAt: Date?
    /// True when the flag was turned on but its time ran out.
    package var expired: Bool
    package var setBy: String?
    package var setAt: Date?
}

/// Reads and changes the developer flags under a policy: a flag turns itself off when it
/// expires, and a policy can lock them off.
package struct FlagController: Sendable {
    private let store: any FlagStore
    private let policy: Policy
    private let now: @Sendable () -> Date

    package init(store: any FlagStore, policy: Policy, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.policy = policy
        self.now = now
    }

    /// The flags on right now. Under a policy that locks the flags, none are, whatever the store says.
    package func active() async throws -> ActiveFlags {
        guard policy.flags.mayEnable else { return ActiveFlags() }
        return ActiveFlags(Set(try await statuses().filter(\.enabled).compactMap { DeveloperFlag(rawValue: $0.name) }))
    }

    package func statuses() async throws -> [FlagStatus] {
        let stored = Dictionary(try await store.flags().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let instant = now()
        return DeveloperFlag.allCases.map { flag in
            guard let state = stored[flag.rawValue] else {
                return FlagStatus(name: flag.rawValue, enabled: false, expiresAt: nil, expired: false, setBy: nil, setAt: nil)
            }
            let expired = state.enabled && (state.expiresAt.map { $0 <= instant } ?? false)
            return FlagStatus(
                name: flag.rawValue, enabled: state.enabled && !expired && policy.flags.mayEnable,
                expiresAt: state.expiresAt, expired: expired, setBy: state.setBy, setAt: state.setAt)
        }
    }

    /// Turns a flag on (for `duration`, the policy's default when nil) or off, recording who did it.
    /// - Throws: `flags.locked` when the policy forbids turning flags on; `flags.duration-out-of-range` when
    ///   `duration` is not within the policy's maximum.
    package func set(_ flag: DeveloperFlag, enabled: Bool, for duration: TimeInterval?, by actor: String) async throws -> DeveloperFlagState {
        if enabled {
            guard policy.flags.mayEnable else {
                throw AdmissionError(code: .flagsLocked, reason: "the \(policy.name) policy does not allow developer flags; \(flag.rawValue) stays off (use the development or test policy on a developer's machine)")
            }
            let seconds = duration ?? policy.flags.defaultDurationSeconds
            guard seconds > 0, seconds <= policy.flags.maximumDurationSeconds else {
                throw AdmissionError(code: .flagDurationOutOfRange, reason: "a flag stays on for more than 0 seconds and at most \(Int(policy.flags.maximumDurationSeconds / 3600)) hours under the \(policy.name) policy; give a duration in that range (30m, 24h)")
            }
            return try await store.setFlag(flag.rawValue, enabled: true, expiresAt: now().addingTimeInterval(seconds), by: actor)
        }
        return try await store.setFlag(flag.rawValue, enabled: false, expiresAt: nil, by: actor)
    }
}
