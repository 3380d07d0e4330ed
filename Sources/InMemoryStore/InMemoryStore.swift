package import Foundation
package import Store
import Synchronization

/// A ``ManagedStore`` in this process's memory, for unit tests of the other targets (and the conformance suite):
/// it executes the same ``LifecyclePlan``s as the database backends, over plain arrays, under one lock, so a batch is
/// atomic and writers never interleave. Nothing survives the process. Not a backend `--store` can name.
package final class InMemoryStore: ManagedStore {
    /// Everything the store holds: a value, so a batch works on a copy and commits it whole, or not at all.
    struct State: Sendable {
        var reservations: [StoredReservation] = []
        var history: [ReservationHistoryEntry] = []
        var log: [DecisionLogEntry] = []
        var domains: [String: RegisteredDomain] = [:]
        var domainChanges: [DomainChange] = []
        var flags: [String: DeveloperFlagState] = [:]
        var flagChanges: [FlagChange] = []
        var spool: [SpooledMessage] = []
        var tokens: [StoredToken] = []
        var leases: [String: JobLease] = [:]
        var senderPreferences: [SenderPreference] = []
        var profiles: [OwnerAddress: OwnerProfile] = [:]
        /// Spooled messages' claims by id: holder and end.
        var claims: [Int64: (holder: String, until: Date)] = [:]
        /// Bumped by every transaction that changes an area (as the SQL backends' triggers do).
        var generations: [ChangeArea: Int64] = [:]
        var quotaCounters: [QuotaKey: QuotaCounter] = [:]
        var secrets: [String: Data] = [:]
        /// The outbox, in position order, and the last position handed out.
        var changes: [ChangeEvent] = []
        var lastPosition: Int64 = 0
        var webhooks: [StoredWebhook] = []
        var deliveries: [WebhookDelivery] = []
        /// The last identifier handed out, per table (never reused, like AUTOINCREMENT and identity columns).
        var lastID: [StoreTable: Int64] = [:]

        mutating func nextID(_ table: StoreTable) -> Int64 {
            let next = (lastID[table] ?? 0) + 1
            lastID[table] = next
            return next
        }
    }

    let state = Mutex(State())
    let limits: StoreLimits
    let now: @Sendable () -> Date
    package let changeSignal = ChangeSignal()

    package init(limits: StoreLimits = StoreLimits(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.limits = limits
        self.now = now
    }

    /// Runs `body` on a copy of the state and keeps the copy only when `body` returns.
    func transaction<T>(_ body: (inout State) throws -> T) throws -> T {
        try state.withLock { state in
            var copy = state
            let result = try body(&copy)
            if copy.domains != state.domains { copy.generations[.registry, default: 0] += 1 }
            if copy.flags != state.flags { copy.generations[.flags, default: 0] += 1 }
            if copy.tokens != state.tokens { copy.generations[.tokens, default: 0] += 1 }
            state = copy
            return result
        }
    }

    func read<T>(_ body: (State) throws -> T) rethrows -> T {
        try state.withLock { try body($0) }
    }

    // MARK: - ManagedStore

    package func run() async throws {
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }

    package func close() async throws {}

    package func status() async throws -> StoreStatus {
        let counts = read { state -> [StoreTable: Int] in
            [
                .reservations: state.reservations.count, .reservationHistory: state.history.count,
                .decisionLog: state.log.count, .registeredDomains: state.domains.count,
                .domainChanges: state.domainChanges.count, .flags: state.flags.count,
                .flagChanges: state.flagChanges.count, .spooledMessages: state.spool.count, .tokens: state.tokens.count,
                .senderPreferences: state.senderPreferences.count, .ownerProfiles: state.profiles.count,
                .changeEvents: state.changes.count, .webhooks: state.webhooks.count,
                .webhookDeliveries: state.deliveries.count,
            ]
        }
        return StoreStatus(
            backend: "memory", location: "memory", schemaVersion: StoreSchema.current,
            knownSchemaVersion: StoreSchema.current, pendingMigrations: [], counts: counts)
    }

    package func migrate() async throws -> [String] { [] }

    // MARK: - Reservations

    package func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome] {
        try limits.validate(reservations)
        let now = self.now()
        let plans = try transaction { state in
            try reservations.map { try Self.apply($0, now: now, channel: nil, to: &state) }
        }
        if plans.contains(where: \.recordsChanges) { changeSignal.notify() }
        return plans.map(\.outcome)
    }

    /// Plans `item` over what the state holds and executes the plan. - Returns: The plan executed.
    static func apply(_ item: IncomingReservation, now: Date, channel: IngestionChannel?, to state: inout State) throws
        -> LifecyclePlan
    {
        let reads = ReservationLifecycle.reads(for: item)
        let records = state.reservations.filter {
            $0.owner == reads.owner && $0.sourceDomain == reads.sourceDomain
                && reads.wants(
                    itemReference: $0.itemReference, containerReference: $0.containerReference,
                    isMinimalCancellation: $0.isMinimalCancellation)
        }.map {
            StoredVersion(
                id: $0.id, itemReference: $0.itemReference, version: $0.version, content: $0.content,
                cancelledAt: $0.cancelledAt, consent: $0.consent.state)
        }
        let domains = reads.senderDomains
        let owner = OwnerContext(
            senderDomains: domains,
            preferences: state.senderPreferences.filter { $0.owner == reads.owner && domains.contains($0.domain) },
            profile: reads.ownerNames ? state.profiles[reads.owner] : nil)
        let plan = ReservationLifecycle.plan(
            for: item, state: reads.state(from: records, owner: owner), now: now, channel: channel)
        for write in plan.writes { try execute(write, on: &state) }
        return plan
    }

    static func execute(_ write: LifecycleWrite, on state: inout State) throws {
        switch write {
        case .create(let key, let content, let at, let cancelledAt, let consent):
            guard !state.reservations.contains(where: { $0.key == key }) else {
                throw StoreError(code: .conflict, reason: "a record at this key exists already")
            }
            state.reservations.append(
                StoredReservation(
                    id: state.nextID(.reservations), key: key, content: content, version: 1, createdAt: at,
                    updatedAt: at, cancelledAt: cancelledAt, consent: consent))
        case .archive(let recordID):
            guard let record = state.reservations.first(where: { $0.id == recordID }) else {
                throw StoreError(code: .conflict, reason: "reservation \(recordID) to archive is gone")
            }
            state.history.append(ReservationHistoryEntry(current: record))
        case .overwrite(let recordID, let version, let content, let at, let cancelledAt):
            guard let index = state.reservations.firstIndex(where: { $0.id == recordID && $0.version == version - 1 })
            else {
                throw StoreError(
                    code: .conflict, reason: "reservation \(recordID) was not at version \(version - 1) when overwritten")
            }
            state.reservations[index].content = content
            state.reservations[index].version = version
            state.reservations[index].updatedAt = at
            state.reservations[index].cancelledAt = cancelledAt
        case .advanceSenderTime(let recordID, let time):
            guard let index = state.reservations.firstIndex(where: { $0.id == recordID }) else { return }
            state.reservations[index].content.senderTime = time
        case .recordChange(let key, let kind, let at, let channel):
            guard let record = state.reservations.first(where: { $0.key == key }) else {
                throw StoreError(code: .conflict, reason: "the record of a change to record is gone")
            }
            state.lastPosition += 1
            state.changes.append(
                ChangeEvent(position: state.lastPosition, kind: kind, recordedAt: at, channel: channel, reservation: record))
        }
    }

    package func reservation(id: Int64) async throws -> StoredReservation? {
        read { $0.reservations.first { $0.id == id } }
    }

    package func lookup(
        containerReference: String, itemReferences: [String], owner: OwnerAddress, sourceDomain: String?
    ) async throws -> [StoredReservation] {
        try limits.validateLookup(itemReferences)
        let domain = sourceDomain.map(StoreNames.domain)
        return read { state in
            state.reservations.filter {
                $0.owner == owner && $0.containerReference == containerReference
                    && (domain == nil || $0.sourceDomain == domain)
                    && (itemReferences.isEmpty || itemReferences.contains($0.itemReference))
            }.sorted { ($0.itemReference, $0.sourceDomain, $0.id) < ($1.itemReference, $1.sourceDomain, $1.id) }
        }
    }

    package func list(owner: OwnerAddress) async throws -> [StoredReservation] {
        read { $0.reservations.filter { $0.owner == owner } }
    }

    package func listAll(limit: Int) async throws -> [StoredReservation] {
        read { Array($0.reservations.prefix(max(0, limit))) }
    }

    package func history(of id: Int64) async throws -> [ReservationHistoryEntry] {
        read { state in
            guard let current = state.reservations.first(where: { $0.id == id }) else { return [] }
            return state.history.filter { $0.reservationID == id }.sorted { $0.version < $1.version }
                + [ReservationHistoryEntry(current: current)]
        }
    }

    // MARK: - Decision log

    package func append(_ entry: DecisionLogEntry) async throws -> DecisionLogEntry {
        try limits.validate(entry)
        return try transaction { state in Self.append(entry, to: &state) }
    }

    static func append(_ entry: DecisionLogEntry, to state: inout State) -> DecisionLogEntry {
        var stored = entry
        stored.id = state.nextID(.decisionLog)
        stored.time = StoreTime.truncated(entry.time)
        stored.sourceDomain = entry.sourceDomain.map(StoreNames.domain)
        state.log.append(stored)
        return stored
    }

    package func entries(domain: String?, since: Date?, afterID: Int64?, limit: Int) async throws -> [DecisionLogEntry] {
        // Follow mode pages forward from `afterID`; otherwise the tail, read newest first and reversed.
        let entries = try await entries(
            matching: DecisionLogQuery(domain: domain, since: since, afterID: afterID, limit: limit))
        return afterID == nil ? entries.reversed() : entries
    }

    package func entries(matching query: DecisionLogQuery) async throws -> [DecisionLogEntry] {
        let domain = query.domain.map(StoreNames.domain)
        let limit = StoreLimits.clamp(query.limit)
        return read { state in
            let matching = state.log.filter { entry in
                if let domain {
                    guard let source = entry.sourceDomain, source == domain || source.hasSuffix("." + domain) else {
                        return false
                    }
                }
                if let channel = query.channel, entry.channel != channel { return false }
                if let verdict = query.verdict, entry.verdict != verdict { return false }
                if let code = query.code, !entry.codes.contains(code), !entry.reservations.contains(where: { $0.codes.contains(code) }) {
                    return false
                }
                if let since = query.since, entry.time < StoreTime.truncated(since) { return false }
                if let until = query.until, entry.time >= StoreTime.truncated(until) { return false }
                if let before = query.beforeID, (entry.id ?? 0) >= before { return false }
                if let after = query.afterID, (entry.id ?? 0) <= after { return false }
                return true
            }
            return query.afterID == nil ? Array(matching.suffix(limit).reversed()) : Array(matching.prefix(limit))
        }
    }

    package func entry(id: Int64) async throws -> DecisionLogEntry? {
        read { state in state.log.first { $0.id == id } }
    }

    package func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry, removingSpooledMessage spoolID: Int64?
    ) async throws -> DecisionLogEntry {
        try limits.validate(reservations)
        try limits.validate(decision)
        let now = self.now()
        let (stored, recordsChanges) = try transaction { state in
            // First: a message another process decided meanwhile writes nothing (SpoolLease: exactly once).
            if let spoolID {
                guard state.spool.contains(where: { $0.id == spoolID }) else { throw StoreError.spoolEntryGone(spoolID) }
                state.spool.removeAll { $0.id == spoolID }
                state.claims[spoolID] = nil
            }
            let plans = try reservations.map { try Self.apply($0, now: now, channel: decision.channel, to: &state) }
            let stored = Self.append(decision.recording(plans, of: reservations), to: &state)
            return (stored, plans.contains(where: \.recordsChanges))
        }
        if recordsChanges { changeSignal.notify() }
        return stored
    }

    // MARK: - Registry

    package func registeredDomain(_ domain: String) async throws -> RegisteredDomain? {
        read { $0.domains[StoreNames.domain(domain)] }
    }

    package func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain] {
        read { $0.domains.values.filter { status == nil || $0.status == status }.sorted { $0.domain < $1.domain } }
    }

    package func updateDomain(
        _ domain: String, by actor: String,
        _ change: @escaping @Sendable (RegisteredDomain?, Date) throws -> DomainUpdate?
    ) async throws -> RegisteredDomain? {
        let name = StoreNames.domain(domain)
        try limits.validateDomainChange(domain: name, contact: nil, actor: actor)
        let now = StoreTime.truncated(self.now())
        let limits = self.limits
        return try transaction { state in
            let current = state.domains[name]
            guard let update = try change(current, now) else { return current }
            let entry = DomainUpdate.stamped(update, name: name, current: current, now: now, actor: actor)
            try limits.validateRegistration(entry, reason: update.reason)
            state.domains[name] = entry
            if update.recordsChange {
                state.domainChanges.append(
                    DomainChange(
                        id: state.nextID(.domainChanges), domain: name, status: entry.status, contact: entry.contact,
                        changedAt: now, changedBy: actor, reason: update.reason))
            }
            return entry
        }
    }

    package func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange] {
        let name = domain.map(StoreNames.domain)
        return read { state in
            Array(state.domainChanges.filter { name == nil || $0.domain == name }.suffix(StoreLimits.clamp(limit)))
        }
    }

    // MARK: - Flags

    package func flag(_ name: String) async throws -> DeveloperFlagState? {
        read { $0.flags[name] }
    }

    package func flags() async throws -> [DeveloperFlagState] {
        read { $0.flags.values.sorted { $0.name < $1.name } }
    }

    package func setFlag(_ name: String, enabled: Bool, expiresAt: Date?, by actor: String) async throws
        -> DeveloperFlagState
    {
        try limits.validateFlagChange(name: name, actor: actor)
        let flag = DeveloperFlagState(
            name: name, enabled: enabled, expiresAt: expiresAt.map(StoreTime.truncated), setBy: actor,
            setAt: StoreTime.truncated(self.now()))
        return try transaction { state in
            state.flags[name] = flag
            state.flagChanges.append(
                FlagChange(
                    id: state.nextID(.flagChanges), name: name, enabled: enabled, expiresAt: flag.expiresAt,
                    setBy: actor, setAt: flag.setAt))
            return flag
        }
    }

    package func flagChanges(name: String?, limit: Int) async throws -> [FlagChange] {
        read { state in
            Array(state.flagChanges.filter { name == nil || $0.name == name }.suffix(StoreLimits.clamp(limit)))
        }
    }

    // MARK: - Job leases

    package func acquireLease(
        _ name: String, holder: String, for duration: TimeInterval, ifLastStartedBefore: Date?
    ) async throws -> Bool {
        try limits.validateLease(name: name, holder: holder, duration: duration)
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            let stored =
                state.leases[name]
                ?? JobLease(name: name, holder: "", leasedUntil: .distantPast, lastStartedAt: .distantPast)
            guard let granted = stored.granted(to: holder, at: now, for: duration, ifLastStartedBefore: ifLastStartedBefore)
            else { return false }
            state.leases[name] = granted
            return true
        }
    }

    package func releaseLease(_ name: String, holder: String) async throws {
        let now = StoreTime.truncated(self.now())
        try transaction { state in
            if let lease = state.leases[name], lease.holder == holder, lease.leasedUntil > now {
                state.leases[name]?.leasedUntil = now
            }
        }
    }

    package func leases() async throws -> [JobLease] {
        read { state in state.leases.values.sorted { $0.name < $1.name } }
    }

    // MARK: - Spool

    package func spool(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date,
        claimedUnder lease: SpoolLease?
    ) async throws -> SpooledMessage {
        try limits.validateSpooled(message.count, reasonCode: reasonCode)
        if let lease { try limits.validateSpoolLease(lease) }
        let instant = self.now()
        let now = StoreTime.truncated(instant)
        return try transaction { state in
            let spooled = SpooledMessage(
                id: state.nextID(.spooledMessages), bytes: message, channel: channel, owner: owner,
                reasonCode: reasonCode, attempts: 0, nextAttemptAt: StoreTime.truncated(nextAttemptAt), createdAt: now,
                updatedAt: now)
            state.spool.append(spooled)
            if let lease {
                state.claims[spooled.id] = (lease.holder, StoreTime.truncated(instant.addingTimeInterval(lease.duration)))
            }
            return spooled
        }
    }

    package func claimSpooledMessages(under lease: SpoolLease, dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        try limits.validateSpoolLease(lease)
        let instant = self.now()
        let now = StoreTime.truncated(instant)
        let until = StoreTime.truncated(instant.addingTimeInterval(lease.duration))
        let due = dueBy.map(StoreTime.truncated)
        return try transaction { state in
            let claimable = state.spool.filter { message in
                SpoolLease.isClaimable(
                    claimedUntil: state.claims[message.id]?.until, nextAttemptAt: message.nextAttemptAt, now: now,
                    dueBy: due)
            }
            let claimed = Array(
                claimable.sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }.prefix(StoreLimits.clamp(limit)))
            for message in claimed { state.claims[message.id] = (lease.holder, until) }
            return claimed
        }
    }

    package func renewSpoolClaims(_ ids: [Int64], under lease: SpoolLease) async throws -> [Int64] {
        try limits.validateSpoolLease(lease)
        let until = StoreTime.truncated(self.now().addingTimeInterval(lease.duration))
        return try transaction { state in
            ids.filter { id in
                guard state.claims[id]?.holder == lease.holder, state.spool.contains(where: { $0.id == id }) else {
                    return false
                }
                state.claims[id] = (lease.holder, until)
                return true
            }
        }
    }

    package func spoolClaimHolders() async throws -> [String] {
        let now = StoreTime.truncated(self.now())
        return read { state in Set(state.claims.values.filter { $0.until > now }.map(\.holder)).sorted() }
    }

    package func releaseSpoolClaims(heldBy holder: String) async throws -> Int {
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            var released = 0
            for (id, claim) in state.claims where claim.holder == holder && claim.until > now {
                state.claims[id] = (holder, now)
                released += 1
            }
            return released
        }
    }

    package func nextSpoolClaimableAt() async throws -> Date? {
        read { state in
            state.spool.map {
                SpoolLease.claimableAt(claimedUntil: state.claims[$0.id]?.until, nextAttemptAt: $0.nextAttemptAt)
            }.min()
        }
    }

    package func spooledMessage(id: Int64) async throws -> SpooledMessage? {
        read { $0.spool.first { $0.id == id } }
    }

    package func spooledMessages(dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        read { state in
            let due = state.spool.filter { dueBy == nil || $0.nextAttemptAt <= StoreTime.truncated(dueBy!) }
            return Array(
                due.sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }.prefix(StoreLimits.clamp(limit)))
        }
    }

    package func recordAttempt(id: Int64, reasonCode: String, nextAttemptAt: Date) async throws -> SpooledMessage? {
        try limits.checkField(reasonCode, "reasonCode")
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            guard let index = state.spool.firstIndex(where: { $0.id == id }) else { return nil }
            state.spool[index].attempts += 1
            state.spool[index].reasonCode = reasonCode
            state.spool[index].nextAttemptAt = StoreTime.truncated(nextAttemptAt)
            state.spool[index].updatedAt = now
            state.claims[id] = nil
            return state.spool[index]
        }
    }

    package func spooledMessages(afterID: Int64, limit: Int) async throws -> [SpooledMessage] {
        read { Array($0.spool.filter { $0.id > afterID }.sorted { $0.id < $1.id }.prefix(StoreLimits.clamp(limit))) }
    }

    package func spooledMessageCount() async throws -> Int {
        read { $0.spool.count }
    }

    package func removeSpooledMessage(id: Int64) async throws -> Bool {
        try transaction { state in
            let before = state.spool.count
            state.spool.removeAll { $0.id == id }
            state.claims[id] = nil
            return state.spool.count < before
        }
    }

    // MARK: - Tokens

    package func addToken(
        role: AccessToken.Role, subject: String, label: String, secretHash: String, by actor: String
    ) async throws -> AccessToken {
        try limits.validateToken(subject: subject, label: label, secretHash: secretHash, actor: actor)
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            guard !state.tokens.contains(where: { $0.secretHash == secretHash }) else {
                throw StoreError(code: .invalidArgument, reason: "a token with this secret is already stored")
            }
            let token = AccessToken(
                id: state.nextID(.tokens), role: role, subject: subject, label: label, createdAt: now, createdBy: actor,
                revokedAt: nil)
            state.tokens.append(StoredToken(token: token, secretHash: secretHash))
            return token
        }
    }

    package func token(secretHash: String) async throws -> AccessToken? {
        read { $0.tokens.first { $0.secretHash == secretHash && $0.token.revokedAt == nil }?.token }
    }

    package func token(id: Int64) async throws -> AccessToken? {
        read { $0.tokens.first { $0.token.id == id }?.token }
    }

    package func tokens(role: AccessToken.Role?) async throws -> [AccessToken] {
        read { $0.tokens.map(\.token).filter { role == nil || $0.role == role } }
    }

    package func revokeToken(id: Int64) async throws -> Bool {
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            guard let index = state.tokens.firstIndex(where: { $0.token.id == id && $0.token.revokedAt == nil }) else {
                return false
            }
            state.tokens[index].token.revokedAt = now
            return true
        }
    }

    // MARK: - Quotas and secrets

    package func chargeQuotas(_ charges: [QuotaCharge]) async throws -> QuotaRefusal? {
        try limits.validateQuotaCharges(charges)
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            switch charges.applied(to: state.quotaCounters, at: now) {
            case .failure(let refusal): return refusal
            case .success(let written):
                for counter in written { state.quotaCounters[counter.key] = counter }
                return nil
            }
        }
    }

    package func quotaCounters(scope: QuotaKey.Scope, subject: String) async throws -> [QuotaCounter] {
        read { state in
            state.quotaCounters.values.filter { $0.key.scope == scope && $0.key.subject == subject }
                .sorted { $0.key.metric.rawValue < $1.key.metric.rawValue }
        }
    }

    package func removeQuotaCounters(endedBefore instant: Date) async throws -> Int {
        try transaction { state in
            let ended = state.quotaCounters.filter { $0.value.windowEnd < instant }.map(\.key)
            for key in ended { state.quotaCounters[key] = nil }
            return ended.count
        }
    }

    package func secret(_ name: String, orMake make: @escaping @Sendable () -> Data) async throws -> Data {
        try limits.checkField(name, "name")
        return try transaction { state in
            if let stored = state.secrets[name] { return stored }
            let made = make()
            state.secrets[name] = made
            return made
        }
    }

    // MARK: - Change signals

    package func changeGenerations() async throws -> [ChangeArea: Int64] {
        read { state in Dictionary(uniqueKeysWithValues: ChangeArea.allCases.map { ($0, state.generations[$0, default: 0]) }) }
    }

    /// Nothing to listen to: readers poll ``changeGenerations()``.
    package func notifications(channel: String) -> AsyncStream<StoreNotification> {
        AsyncStream { $0.finish() }
    }
}
