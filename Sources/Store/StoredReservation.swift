package import Foundation

/// The current version of one reservation item, as the store keeps it and calendars read it.
package struct StoredReservation: Codable, Hashable, Sendable, Identifiable {
    package typealias Status = IncomingReservation.Status

    /// The store's own identifier, stable over the record's life (never reused).
    package var id: Int64
    package var owner: String
    package var sourceDomain: String
    package var containerReference: String
    package var itemReference: String
    /// Authoritative: a minimal cancellation marks items cancelled without rewriting their ``payload``.
    package var status: Status
    /// True when the record is a cancellation that arrived before any item of its reservation.
    package var isMinimalCancellation: Bool
    package var modifiedTime: Date?
    package var kind: String
    package var payload: Data
    /// The developer flags in force when this version was admitted.
    package var flags: [String]
    /// Where this version came from (Message-ID or URL).
    package var source: String
    /// 1 when created, + 1 on every change of content or status.
    package var version: Int
    package var createdAt: Date
    package var updatedAt: Date
    /// When the record was first marked cancelled; nil while it is live.
    package var cancelledAt: Date?

    package init(
        id: Int64,
        owner: String,
        sourceDomain: String,
        containerReference: String,
        itemReference: String,
        status: Status,
        isMinimalCancellation: Bool,
        modifiedTime: Date?,
        kind: String,
        payload: Data,
        flags: [String],
        source: String,
        version: Int,
        createdAt: Date,
        updatedAt: Date,
        cancelledAt: Date?
    ) {
        self.id = id
        self.owner = owner
        self.sourceDomain = sourceDomain
        self.containerReference = containerReference
        self.itemReference = itemReference
        self.status = status
        self.isMinimalCancellation = isMinimalCancellation
        self.modifiedTime = modifiedTime
        self.kind = kind
        self.payload = payload
        self.flags = flags
        self.source = source
        self.version = version
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.cancelledAt = cancelledAt
    }
}
