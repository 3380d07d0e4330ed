/// What happened to one reservation item for one owner during an ingestion attempt, as written in the decision log.
package struct ReservationOutcomeRecord: Codable, Hashable, Sendable {
    package var itemReference: String
    /// Whose record it is; nil when the item was refused before it was admitted for anyone.
    package var owner: OwnerAddress?
    /// What the store did with it; nil when the item was refused before it reached the store.
    package var outcome: LifecycleOutcome?
    /// Why it was refused (or, with an outcome, the warnings worth a sender's attention).
    package var codes: [String]

    package init(itemReference: String, owner: OwnerAddress? = nil, outcome: LifecycleOutcome?, codes: [String] = []) {
        self.itemReference = itemReference
        self.owner = owner
        self.outcome = outcome
        self.codes = codes
    }

    /// The item reference logged for an item the owner's block kept out: the log says so without its content.
    package static let withheld = "withheld"
    /// The code of an item the owner's block kept out.
    package static let senderBlocked = "consent.sender-blocked"

    private enum CodingKeys: String, CodingKey { case itemReference, owner, outcome, codes }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        itemReference = try container.decode(String.self, forKey: .itemReference)
        owner = try container.decodeIfPresent(OwnerAddress.self, forKey: .owner)
        outcome = try container.decodeIfPresent(LifecycleOutcome.self, forKey: .outcome)
        codes = try container.decodeIfPresent([String].self, forKey: .codes) ?? []
    }
}
