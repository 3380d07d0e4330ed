package import Foundation

/// What an owner chose for reservations from one sender domain (`PUT /v1/owners/{o}/senders/{domain}`).
package enum SenderDecision: String, Codable, Hashable, Sendable, CaseIterable {
    /// New reservations from it are accepted automatically (unless the name on the booking is not the owner's).
    case trust
    /// Nothing new from it is stored for this owner; the decision log says so without the content.
    case block
    /// The default: new reservations from it are suggested until the owner decides.
    case ask
}

/// One owner's decision about one sender domain, as stored.
package struct SenderPreference: Codable, Hashable, Sendable {
    package var owner: OwnerAddress
    /// The sender's domain, as the store keys reservations (lower case, no trailing dot); it covers its subdomains.
    package var domain: String
    package var decision: SenderDecision
    package var updatedAt: Date

    package init(owner: OwnerAddress, domain: String, decision: SenderDecision, updatedAt: Date) {
        self.owner = owner
        self.domain = StoreNames.domain(domain)
        self.decision = decision
        self.updatedAt = StoreTime.truncated(updatedAt)
    }

    /// The domains whose preferences apply to reservations from `domain`: itself, then each parent, most specific
    /// first (a decision about `skyways.example` covers `mail.skyways.example`).
    package static func candidateDomains(for domain: String) -> [String] {
        // Each suffix after a dot, the name itself first (what splitting at the dots and joining each tail gives,
        // without the joins: every email's lifecycle read asks for these).
        var candidates: [String] = []
        var rest = Substring(StoreNames.domain(domain))
        while !rest.isEmpty {
            candidates.append(String(rest))
            guard let dot = rest.firstIndex(of: ".") else { break }
            rest = rest[rest.index(after: dot)...]
        }
        return candidates
    }

    /// The decision that applies to reservations from `domain` among `preferences` (one owner's): the most specific
    /// domain's; `ask` when none applies.
    package static func decision(for domain: String, among preferences: [SenderPreference]) -> SenderDecision {
        decision(amongCandidates: candidateDomains(for: domain), preferences)
    }

    /// ``decision(for:among:)`` for the ``candidateDomains(for:)`` of a domain the caller has already.
    package static func decision(amongCandidates candidates: [String], _ preferences: [SenderPreference]) -> SenderDecision {
        for candidate in candidates {
            if let match = preferences.first(where: { $0.domain == candidate }) { return match.decision }
        }
        return .ask
    }
}

/// The answer to setting a sender decision: a refusal is a value, not an error.
package enum SenderPreferenceResult: Hashable, Sendable {
    case set(SenderPreference)
    /// `trust` needs a reservation from that domain the owner accepted (`consent.sender-not-accepted`).
    case refused(code: String, reason: String)
}

/// The rule for setting a sender decision, once for every backend.
package enum SenderRules {
    package static let notAcceptedCode = "consent.sender-not-accepted"

    /// Whether `decision` may be set for `domain`: trust only once the owner has accepted one of its reservations.
    /// - Parameter acceptedFromDomain: whether the owner has an accepted reservation from `domain` or a subdomain.
    package static func check(_ decision: SenderDecision, domain: String, acceptedFromDomain: Bool) -> (code: String, reason: String)? {
        guard decision == .trust, !acceptedFromDomain else { return nil }
        return (
            notAcceptedCode,
            "no reservation from \(StoreNames.domain(domain).prefix(253)) was accepted by this owner; accept one of its "
                + "reservations first, then trust the sender"
        )
    }
}

/// What the gateway knows about an owner beyond their reservations: the names bookings for them are made under, and
/// how their calendar shows suggestions.
package struct OwnerProfile: Codable, Hashable, Sendable {
    /// How the calendar feed shows suggested reservations.
    package enum SuggestedInCalendar: String, Codable, Hashable, Sendable, CaseIterable {
        /// As `STATUS:TENTATIVE` events (the default).
        case tentative
        /// Not at all, until accepted.
        case hidden
    }

    package var owner: OwnerAddress
    /// Names the owner set (`PUT /v1/owners/{o}/profile`).
    package var names: [String]
    /// Names learned from bookings the owner accepted.
    package var learnedNames: [String]
    package var suggestedInCalendar: SuggestedInCalendar
    package var updatedAt: Date

    package init(
        owner: OwnerAddress, names: [String] = [], learnedNames: [String] = [],
        suggestedInCalendar: SuggestedInCalendar = .tentative, updatedAt: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.owner = owner
        self.names = names
        self.learnedNames = learnedNames
        self.suggestedInCalendar = suggestedInCalendar
        self.updatedAt = StoreTime.truncated(updatedAt)
    }

    /// Every name known to be the owner's: the ones set, then the ones learned.
    package var knownNames: [String] { names + learnedNames }
}

/// What an owner (or an admin for them) changes in a profile; nil leaves a field as it is.
package struct OwnerProfileUpdate: Hashable, Sendable {
    package var names: [String]?
    package var suggestedInCalendar: OwnerProfile.SuggestedInCalendar?

    package init(names: [String]? = nil, suggestedInCalendar: OwnerProfile.SuggestedInCalendar? = nil) {
        self.names = names
        self.suggestedInCalendar = suggestedInCalendar
    }

    /// `profile` (or a new one) with this update applied at `now`.
    package func applied(to profile: OwnerProfile?, owner: OwnerAddress, now: Date) -> OwnerProfile {
        var result = profile ?? OwnerProfile(owner: owner)
        if let names { result.names = names.map(OwnerName.trimmed).filter { !$0.isEmpty } }
        if let suggestedInCalendar { result.suggestedInCalendar = suggestedInCalendar }
        result.updatedAt = StoreTime.truncated(now)
        return result
    }
}
