package import Foundation

/// Whether the owner wants a reservation in their calendar (DESIGN.md, "The owner decides"): one per stored
/// reservation, so one per reservation and owner. Calendars show accepted reservations as confirmed, suggested ones
/// as tentative (or not at all, by the owner's choice) and never declined ones.
///
/// The rules that set it live once: ``ReservationLifecycle`` decides a new reservation's consent (and what an update of
/// a declined one does), ``ConsentRules`` what an owner's decision changes. Backends store what they are told.
package struct Consent: Codable, Hashable, Sendable {
    package enum State: String, Codable, Hashable, Sendable, CaseIterable {
        /// Waiting for the owner: shown as tentative, or hidden.
        case suggested
        /// The owner accepted it, or trusts its sender: shown as confirmed.
        case accepted
        /// The owner declined it: never shown; later updates are not stored, a cancellation is.
        case declined
    }

    /// Why a reservation is in its state. Stable: these appear in the API, the export and the command line.
    package enum Reason: String, Codable, Hashable, Sendable, CaseIterable {
        /// New, waiting for the owner.
        case new
        /// The name on the booking (`underName`) is clearly not one of the owner's names: never accepted
        /// automatically, whatever the sender's trust.
        case nameMismatch = "name-mismatch"
        /// Accepted automatically: the owner trusts its sender domain.
        case trustedSender = "trusted-sender"
        /// The owner decided (accept or decline).
        case owner
        /// Stored before the gateway asked owners (schema `v5-consent`): kept as it was shown, accepted.
        case beforeConsent = "before-consent"
    }

    package var state: State
    package var reason: Reason
    /// When the state was last set: the reservation's creation, or the owner's decision.
    package var changedAt: Date

    package init(_ state: State, reason: Reason, changedAt: Date) {
        self.state = state
        self.reason = reason
        self.changedAt = StoreTime.truncated(changedAt)
    }
}

/// What an owner can decide about one of their reservations.
package enum ConsentDecision: String, Codable, Hashable, Sendable, CaseIterable {
    case accept
    case decline

    /// The state the decision leads to.
    package var state: Consent.State { self == .accept ? .accepted : .declined }
}

/// What an owner's decision did (``OwnerStore/decide(_:reservation:owner:)``).
package struct ConsentChange: Codable, Hashable, Sendable {
    package var reservationID: Int64
    package var owner: OwnerAddress
    /// The consent before the decision.
    package var previous: Consent
    /// The consent after it (the same as ``previous`` when nothing changed).
    package var current: Consent
    /// A name the owner's acceptance taught the gateway (the booking's `underName`), so that later bookings under it
    /// are not taken for someone else's; nil when none was new.
    package var learnedName: String?

    package init(reservationID: Int64, owner: OwnerAddress, previous: Consent, current: Consent, learnedName: String?) {
        self.reservationID = reservationID
        self.owner = owner
        self.previous = previous
        self.current = current
        self.learnedName = learnedName
    }

    /// Whether the decision changed the state (deciding the same twice changes nothing and publishes nothing).
    package var changed: Bool { previous.state != current.state }
}

/// The writes an owner's decision needs, made by ``ConsentRules/plan(_:record:profile:now:)`` and executed by a
/// backend in one transaction, deciding nothing itself.
package enum ConsentWrite: Hashable, Sendable {
    /// Set record `recordID`'s consent.
    case setConsent(recordID: Int64, consent: Consent)
    /// Add `name` to the names `owner` has accepted bookings under (creating the owner's profile when needed).
    case learnName(owner: OwnerAddress, names: [String], at: Date)
    /// Append a `reservation.consent-changed` event to the outbox: the record at `key` as the consent left it
    /// (``LifecycleWrite/recordChange(key:kind:at:channel:)``, executed the same way).
    case recordChange(key: ReservationKey, at: Date)

    /// The lifecycle write a backend executes for ``recordChange(key:at:)``, so that both record changes alike.
    package var lifecycleWrite: LifecycleWrite? {
        guard case .recordChange(let key, let at) = self else { return nil }
        return .recordChange(key: key, kind: .consentChanged, at: at, channel: nil)
    }
}

extension Array where Element == ConsentWrite {
    /// Whether executing these appends change events (the feed's readers are then woken once they commit).
    package var recordsChanges: Bool { contains { $0.lifecycleWrite != nil } }
}

/// The rules of an owner's decision, once for every backend.
package enum ConsentRules {
    /// At most this many learned names are kept per owner (the oldest go first).
    package static let maximumLearnedNames = 32

    /// What `decision` on `record` writes, and the change to report.
    /// - Parameters:
    ///   - record: The reservation as stored (its consent and payload, for the name on the booking).
    ///   - profile: The owner's profile as stored, or nil when the owner has none yet.
    ///   - now: The store's clock.
    package static func plan(
        _ decision: ConsentDecision, record: StoredReservation, profile: OwnerProfile?, now: Date
    ) -> (writes: [ConsentWrite], change: ConsentChange) {
        let now = StoreTime.truncated(now)
        let previous = record.consent
        guard previous.state != decision.state else {
            return ([], ConsentChange(reservationID: record.id, owner: record.owner, previous: previous, current: previous, learnedName: nil))
        }
        let current = Consent(decision.state, reason: .owner, changedAt: now)
        // A consent change is a change like any other: the change feed and the webhooks carry it.
        var writes: [ConsentWrite] = [
            .setConsent(recordID: record.id, consent: current), .recordChange(key: record.key, at: now),
        ]
        var learned: String? = nil
        // Accepting a booking under a name the gateway did not know as the owner's teaches it that name.
        if decision == .accept, let name = record.underName, let names = profile?.knownNames ?? Optional([]),
            OwnerName.isClearlyNot(name, anyOf: names) || names.isEmpty
        {
            var learnedNames = profile?.learnedNames ?? []
            learnedNames.append(OwnerName.trimmed(name))
            learnedNames = Array(learnedNames.suffix(maximumLearnedNames))
            writes.append(.learnName(owner: record.owner, names: learnedNames, at: now))
            learned = OwnerName.trimmed(name)
        }
        return (
            writes,
            ConsentChange(reservationID: record.id, owner: record.owner, previous: previous, current: current, learnedName: learned)
        )
    }
}
