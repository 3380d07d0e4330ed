internal import Reservations

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

extension ReservationOutcomeRecord {
    /// `records` as the decision log stores them (`reservations`): the bytes `CanonicalJSONEncoder` writes for the
    /// list, written member by member (every log entry has one), which `ProvenanceJSONTests` check.
    package static func storedJSON(_ records: [ReservationOutcomeRecord]) -> String {
        if records.isEmpty { return "[]" }
        var json = CanonicalJSONBuilder()
        json.beginArray()
        for record in records {
            json.beginObject()
            json.key("codes")
            json.strings(record.codes)
            json.key("itemReference")
            json.string(record.itemReference)
            if let outcome = record.outcome {
                json.key("outcome")
                json.beginObject()
                switch outcome {
                case .cancelled(let count):
                    json.key("count")
                    json.integer(count)
                    json.key("outcome")
                    json.string(outcome.code)
                case .updated(let version):
                    json.key("outcome")
                    json.string(outcome.code)
                    json.key("version")
                    json.integer(version)
                case .created, .unchanged, .stale, .blocked, .declined:
                    json.key("outcome")
                    json.string(outcome.code)
                }
                json.endObject()
            }
            if let owner = record.owner {
                json.key("owner")
                json.string(owner.address)
            }
            json.endObject()
        }
        json.endArray()
        return String(decoding: json.bytes, as: UTF8.self)
    }
}
