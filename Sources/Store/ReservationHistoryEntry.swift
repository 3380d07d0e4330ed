package import Foundation

/// One version of a reservation record, earlier or current (``ReservationStore/history(of:)``).
package struct ReservationHistoryEntry: Codable, Hashable, Sendable {
    /// The ``StoredReservation/id`` this version belongs to.
    package var reservationID: Int64
    package var version: Int
    package var containerReference: String
    package var status: StoredReservation.Status
    package var isMinimalCancellation: Bool
    package var modifiedTime: Date?
    package var kind: String
    package var payload: Data
    package var flags: [String]
    package var source: String
    /// When this version was written.
    package var recordedAt: Date
    package var cancelledAt: Date?

    package init(
        reservationID: Int64,
        version: Int,
        containerReference: String,
        status: StoredReservation.Status,
        isMinimalCancellation: Bool,
        modifiedTime: Date?,
        kind: String,
        payload: Data,
        flags: [String],
        source: String,
        recordedAt: Date,
        cancelledAt: Date?
    ) {
        self.reservationID = reservationID
        self.version = version
        self.containerReference = containerReference
        self.status = status
        self.isMinimalCancellation = isMinimalCancellation
        self.modifiedTime = modifiedTime
        self.kind = kind
        self.payload = payload
        self.flags = flags
        self.source = source
        self.recordedAt = recordedAt
        self.cancelledAt = cancelledAt
    }

    /// The current version of `reservation`, as a history entry.
    package init(current reservation: StoredReservation) {
        self.init(
            reservationID: reservation.id,
            version: reservation.version,
            containerReference: reservation.containerReference,
            status: reservation.status,
            isMinimalCancellation: reservation.isMinimalCancellation,
            modifiedTime: reservation.modifiedTime,
            kind: reservation.kind,
            payload: reservation.payload,
            flags: reservation.flags,
            source: reservation.source,
            recordedAt: reservation.updatedAt,
            cancelledAt: reservation.cancelledAt
        )
    }
}
