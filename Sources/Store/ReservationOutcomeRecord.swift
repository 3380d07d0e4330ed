/// What happened to one reservation item during an ingestion attempt, as written in the decision log.
package struct ReservationOutcomeRecord: Codable, Hashable, Sendable {
    package var itemReference: String
    /// What the store did with it; nil when the item was refused before it reached the store.
    package var outcome: LifecycleOutcome?
    /// Why it was refused (or, with an outcome, the warnings worth a sender's attention).
    package var codes: [String]

    package init(itemReference: String, outcome: LifecycleOutcome?, codes: [String] = []) {
        self.itemReference = itemReference
        self.outcome = outcome
        self.codes = codes
    }

    private enum CodingKeys: String, CodingKey { case itemReference, outcome, codes }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        itemReference = try container.decode(String.self, forKey: .itemReference)
        outcome = try container.decodeIfPresent(LifecycleOutcome.self, forKey: .outcome)
        codes = try container.decodeIfPresent([String].self, forKey: .codes) ?? []
    }
}
