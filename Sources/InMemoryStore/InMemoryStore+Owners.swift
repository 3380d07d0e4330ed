internal import Foundation
package import Store

/// What owners decide, export and erase (issue 16), in memory: the same rules as the database backends.
extension InMemoryStore {
    package func decide(_ decision: ConsentDecision, reservation id: Int64, owner: OwnerAddress) async throws
        -> ConsentChange?
    {
        let now = self.now()
        let change = try transaction { state -> ConsentChange? in
            guard let record = state.reservations.first(where: { $0.id == id && $0.owner == owner }) else { return nil }
            let (writes, change) = ConsentRules.plan(decision, record: record, profile: state.profiles[owner], now: now)
            for write in writes { try Self.execute(write, on: &state) }
            return change
        }
        if change?.changed == true { changeSignal.notify() }
        return change
    }

    static func execute(_ write: ConsentWrite, on state: inout State) throws {
        switch write {
        case .setConsent(let recordID, let consent):
            guard let index = state.reservations.firstIndex(where: { $0.id == recordID }) else { return }
            state.reservations[index].consent = consent
        case .learnName(let owner, let names, let at):
            var profile = state.profiles[owner] ?? OwnerProfile(owner: owner)
            profile.learnedNames = names
            profile.updatedAt = StoreTime.truncated(at)
            state.profiles[owner] = profile
        case .recordChange:
            if let change = write.lifecycleWrite { try execute(change, on: &state) }
        }
    }

    package func setSenderDecision(_ decision: SenderDecision, domain: String, owner: OwnerAddress) async throws
        -> SenderPreferenceResult
    {
        try limits.validateSenderDomain(domain)
        let preference = SenderPreference(owner: owner, domain: domain, decision: decision, updatedAt: self.now())
        return try transaction { state in
            let accepted = state.reservations.contains {
                $0.owner == owner && $0.consent.state == .accepted
                    && ($0.sourceDomain == preference.domain || $0.sourceDomain.hasSuffix("." + preference.domain))
            }
            if let refusal = SenderRules.check(decision, domain: preference.domain, acceptedFromDomain: accepted) {
                return .refused(code: refusal.code, reason: refusal.reason)
            }
            state.senderPreferences.removeAll { $0.owner == owner && $0.domain == preference.domain }
            state.senderPreferences.append(preference)
            return .set(preference)
        }
    }

    package func senderPreferences(owner: OwnerAddress) async throws -> [SenderPreference] {
        read { state in state.senderPreferences.filter { $0.owner == owner }.sorted { $0.domain < $1.domain } }
    }

    package func profile(owner: OwnerAddress) async throws -> OwnerProfile? {
        read { $0.profiles[owner] }
    }

    package func updateProfile(_ update: OwnerProfileUpdate, owner: OwnerAddress) async throws -> OwnerProfile {
        try limits.validateProfile(update)
        let now = self.now()
        return try transaction { state in
            let profile = update.applied(to: state.profiles[owner], owner: owner, now: now)
            state.profiles[owner] = profile
            return profile
        }
    }

    package func records(of owner: OwnerAddress) async throws -> OwnerRecords {
        read { state in
            let reservations = state.reservations.filter { $0.owner == owner }.sorted { $0.id < $1.id }
            let history = reservations.flatMap { reservation in
                state.history.filter { $0.reservationID == reservation.id }.sorted { $0.version < $1.version }
                    + [ReservationHistoryEntry(current: reservation)]
            }
            return OwnerRecords(
                owner: owner, profile: state.profiles[owner],
                senderPreferences: state.senderPreferences.filter { $0.owner == owner }.sorted { $0.domain < $1.domain },
                reservations: reservations, history: history, decisionLog: state.log.filter { $0.names(owner) },
                spooledMessages: state.spool.filter { $0.mentions(owner) }.sorted { $0.id < $1.id },
                tokens: state.tokens.map(\.token).filter { $0.role == .owner && $0.subject == owner.address },
                changes: state.changes.filter { $0.reservation.owner == owner },
                webhooks: state.webhooks.map(\.webhook).filter { $0.owner == owner })
        }
    }

    package func forget(_ owner: OwnerAddress) async throws -> ForgetReport {
        try transaction { state in
            var report = ForgetReport(owner: owner)
            let ids = Set(state.reservations.filter { $0.owner == owner }.map(\.id))
            // The outbox's copies of their reservations, and what was queued to deliver them; subscriptions for them
            // alone.
            let changed = ids.union(state.changes.filter { $0.reservation.owner == owner }.map(\.reservation.id))
            let hooks = Set(state.webhooks.filter { $0.webhook.owner == owner }.map(\.webhook.id))
            let isTheirs: (WebhookDelivery) -> Bool = { changed.contains($0.reservationID) || hooks.contains($0.webhookID) }
            report.webhookDeliveries = state.deliveries.filter(isTheirs).count
            state.deliveries.removeAll(where: isTheirs)
            report.webhooks = hooks.count
            state.webhooks.removeAll { hooks.contains($0.webhook.id) }
            report.changeEvents = state.changes.filter { $0.reservation.owner == owner }.count
            state.changes.removeAll { $0.reservation.owner == owner }
            report.versions = state.history.filter { ids.contains($0.reservationID) }.count
            state.history.removeAll { ids.contains($0.reservationID) }
            report.reservations = ids.count
            state.reservations.removeAll { ids.contains($0.id) }
            report.senderPreferences = state.senderPreferences.filter { $0.owner == owner }.count
            state.senderPreferences.removeAll { $0.owner == owner }
            report.profiles = state.profiles.removeValue(forKey: owner) == nil ? 0 : 1
            report.tokens = state.tokens.filter { $0.token.role == .owner && $0.token.subject == owner.address }.count
            state.tokens.removeAll { $0.token.role == .owner && $0.token.subject == owner.address }
            var log: [DecisionLogEntry] = []
            for entry in state.log {
                guard entry.names(owner) else {
                    log.append(entry)
                    continue
                }
                if let kept = entry.forgetting(owner) {
                    log.append(kept)
                    report.decisionLogEntriesRedacted += 1
                } else {
                    report.decisionLogEntries += 1
                }
            }
            state.log = log
            report.spooledMessages = state.spool.filter { $0.mentions(owner) }.count
            state.spool.removeAll { $0.mentions(owner) }
            report.compacted = true
            return report
        }
    }

    package func prune(_ cutoffs: RetentionCutoffs) async throws -> PruneReport {
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            var report = PruneReport()
            let due = Set(
                state.reservations.filter { cutoffs.reservationIsDue(endsAt: $0.content.endsAt, updatedAt: $0.updatedAt) }
                    .map(\.id))
            report.versions = state.history.filter { due.contains($0.reservationID) }.count
            state.history.removeAll { due.contains($0.reservationID) }
            state.deliveries.removeAll { due.contains($0.reservationID) }
            report.changeEvents = state.changes.filter { due.contains($0.reservation.id) }.count
            state.changes.removeAll { due.contains($0.reservation.id) }
            report.reservations = due.count
            state.reservations.removeAll { due.contains($0.id) }
            if let cutoff = cutoffs.spooledBefore {
                let expired = state.spool.filter { $0.createdAt < cutoff }
                for message in expired {
                    _ = Self.append(RetentionCutoffs.expiryEntry(for: message, at: now), to: &state)
                }
                state.spool.removeAll { $0.createdAt < cutoff }
                report.spooledMessages = expired.count
            }
            if let cutoff = cutoffs.decisionsBefore {
                report.decisionLogEntries = state.log.filter { $0.time < cutoff }.count
                state.log.removeAll { $0.time < cutoff }
            }
            return report
        }
    }
}
