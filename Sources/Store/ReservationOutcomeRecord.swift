/// What happened to one reservation item during an ingestion attempt, as written in the decision log.
package struct ReservationOutcomeRecord: Codable, Hashable, Sendable {
    package var itemReference: String
    package var outcome: LifecycleOutcome

    package init(itemReference: String, outcome: LifecycleOutcome) {
        self.itemReference = itemReference
        self.outcome = outcome
    }
}
