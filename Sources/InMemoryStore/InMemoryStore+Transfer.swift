package import Store

/// Copying into and out of memory, so that the copy's own tests need no database.
extension InMemoryStore {
    package func isEmpty() async throws -> Bool {
        try await status().counts.values.allSatisfy { $0 == 0 }
    }

    package func exportRows(_ table: StoreTable, after cursor: TransferCursor?, limit: Int) async throws -> [TransferRecord] {
        read { state in
            let records: [TransferRecord]
            switch table {
            case .reservations: records = state.reservations.sorted { $0.id < $1.id }.map(TransferRecord.reservation)
            case .reservationHistory:
                records = state.history.sorted { ($0.reservationID, $0.version) < ($1.reservationID, $1.version) }
                    .map(TransferRecord.history)
            case .decisionLog: records = state.log.map(TransferRecord.decision)
            case .registeredDomains:
                records = state.domains.values.sorted { $0.domain < $1.domain }.map(TransferRecord.domain)
            case .domainChanges: records = state.domainChanges.map(TransferRecord.domainChange)
            case .flags: records = state.flags.values.sorted { $0.name < $1.name }.map(TransferRecord.flag)
            case .flagChanges: records = state.flagChanges.map(TransferRecord.flagChange)
            case .spooledMessages: records = state.spool.sorted { $0.id < $1.id }.map(TransferRecord.spooled)
            case .tokens: records = state.tokens.map(TransferRecord.token)
            case .senderPreferences:
                records = state.senderPreferences.sorted { ($0.owner.address, $0.domain) < ($1.owner.address, $1.domain) }
                    .map(TransferRecord.senderPreference)
            case .ownerProfiles:
                records = state.profiles.values.sorted { $0.owner.address < $1.owner.address }
                    .map(TransferRecord.ownerProfile)
            case .changeEvents: records = state.changes.map(TransferRecord.change)
            case .webhooks: records = state.webhooks.map(TransferRecord.webhook)
            case .webhookDeliveries: records = state.deliveries.sorted { $0.id < $1.id }.map(TransferRecord.delivery)
            }
            guard let cursor else { return Array(records.prefix(limit)) }
            return Array(records.filter { Self.isAfter($0.cursor, cursor) }.prefix(limit))
        }
    }

    static func isAfter(_ key: TransferCursor, _ cursor: TransferCursor) -> Bool {
        switch (key, cursor) {
        case (.id(let a), .id(let b)): a > b
        case (.version(let a, let v), .version(let b, let w)): (a, v) > (b, w)
        case (.name(let a), .name(let b)): a > b
        case (.pair(let a, let c), .pair(let b, let d)): (a, c) > (b, d)
        default: false
        }
    }

    package func importRows(_ records: [TransferRecord]) async throws {
        try transaction { state in
            for record in records {
                switch record {
                case .reservation(let stored):
                    state.reservations.append(stored)
                    state.lastID[.reservations] = max(state.lastID[.reservations] ?? 0, stored.id)
                case .history(let entry): state.history.append(entry)
                case .decision(let entry):
                    state.log.append(entry)
                    state.lastID[.decisionLog] = max(state.lastID[.decisionLog] ?? 0, entry.id ?? 0)
                case .domain(let domain): state.domains[domain.domain] = domain
                case .domainChange(let change):
                    state.domainChanges.append(change)
                    state.lastID[.domainChanges] = max(state.lastID[.domainChanges] ?? 0, change.id)
                case .flag(let flag): state.flags[flag.name] = flag
                case .flagChange(let change):
                    state.flagChanges.append(change)
                    state.lastID[.flagChanges] = max(state.lastID[.flagChanges] ?? 0, change.id)
                case .spooled(let message):
                    state.spool.append(message)
                    state.lastID[.spooledMessages] = max(state.lastID[.spooledMessages] ?? 0, message.id)
                case .token(let token):
                    state.tokens.append(token)
                    state.lastID[.tokens] = max(state.lastID[.tokens] ?? 0, token.token.id)
                case .senderPreference(let preference): state.senderPreferences.append(preference)
                case .ownerProfile(let profile): state.profiles[profile.owner] = profile
                case .change(let event):
                    state.changes.append(event)
                    state.lastPosition = max(state.lastPosition, event.position)
                case .webhook(let stored):
                    state.webhooks.append(stored)
                    state.lastID[.webhooks] = max(state.lastID[.webhooks] ?? 0, stored.webhook.id)
                case .delivery(let delivery):
                    state.deliveries.append(delivery)
                    state.lastID[.webhookDeliveries] = max(state.lastID[.webhookDeliveries] ?? 0, delivery.id)
                }
            }
        }
    }

    package func finishImport() async throws {}
}
