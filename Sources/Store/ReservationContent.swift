package import Foundation

/// What one version of a reservation item says: the one declaration of a reservation's content, shared by what comes
/// in (``IncomingReservation``), what is current (``StoredReservation``) and what was (``ReservationHistoryEntry``).
///
/// The store keeps ``payload`` opaque: it never parses it, and compares it byte for byte to decide whether content
/// changed, so it must be canonical JSON (sorted keys), as ``init(admitted:normalized:senderTime:flags:source:)`` makes it.
package struct ReservationContent: Codable, Hashable, Sendable {
    /// schema.org `reservationStatus` (https://schema.org/ReservationStatusType), reduced to what the store acts on.
    package enum Status: String, Codable, Hashable, Sendable, CaseIterable {
        /// `ReservationConfirmed`.
        case confirmed
        /// `ReservationCancelled`: the record is kept, marked cancelled, never deleted.
        case cancelled
        /// `ReservationPending`.
        case pending
        /// `ReservationHold`.
        case hold
    }

    /// The reservation number (`reservationId`) shared by every item of one booking.
    package var containerReference: String
    /// Authoritative: a minimal cancellation marks items cancelled without rewriting their ``payload``.
    package var status: Status
    /// True for a minimal cancellation (only `reservationId` and a cancelled status): it cancels every item of
    /// ``containerReference`` from the same source domain for the same owner. Stored, it is a cancellation that
    /// arrived before any item of its reservation.
    package var isMinimalCancellation: Bool
    /// When the sender wrote this version: what orders versions. Nil only for versions stored before sender times
    /// were kept, or where nothing vouched for a time; then arrival order decides.
    package var senderTime: SenderTime?
    /// The schema.org type, for example `FlightReservation`.
    package var kind: String
    /// The reservation as canonical JSON (a ``StoredPayload``).
    package var payload: Data
    /// The developer flags that admitted this version (empty when admitted without an override).
    package var flags: [String]
    /// Where this version came from: the email's Message-ID or the page's URL.
    package var source: String
    /// Where this version came from, in full: channel, domain, DKIM identity or certificate, flags, policy (issue 16).
    package var provenance: Provenance
    /// When the reservation ends (its end, else its start), as far as the payload says: what retention counts from.
    /// Nil when it states no time (a minimal cancellation).
    package var endsAt: Date?

    package init(
        containerReference: String, status: Status, isMinimalCancellation: Bool = false, senderTime: SenderTime? = nil,
        kind: String, payload: Data, flags: [String] = [], source: String, provenance: Provenance = Provenance(),
        endsAt: Date? = nil
    ) {
        self.containerReference = containerReference
        self.status = status
        self.isMinimalCancellation = isMinimalCancellation
        self.senderTime = senderTime
        self.kind = kind
        self.payload = payload
        self.flags = flags
        self.source = source
        self.provenance = provenance
        self.endsAt = endsAt.map(StoreTime.truncated)
    }

    /// True when `other` says the same thing: the same booking, status, kind and payload. The sender time, the
    /// flags, the source and the provenance say how a version arrived, not what it says, so a resent email is "the
    /// same content".
    package func says(theSameAs other: ReservationContent) -> Bool {
        containerReference == other.containerReference && status == other.status
            && isMinimalCancellation == other.isMinimalCancellation && kind == other.kind && payload == other.payload
    }
}

/// One reservation item as admitted, handed to a ``ReservationStore`` to create, update or cancel its record.
package struct IncomingReservation: Codable, Hashable, Sendable {
    package var key: ReservationKey
    package var content: ReservationContent
    /// The name the booking is under (schema.org `underName`), for the consent rules: a booking clearly made for
    /// someone else is never accepted automatically. Not stored apart from the payload.
    package var underName: String?
    /// Codes worth the sender's attention (a link dropped from the markup), written beside this item's outcome in the
    /// decision log; not part of the stored content.
    package var warnings: [String]
    /// Every part of this item's booking, when the document it came from evidently lists the whole booking
    /// (MARKUP.md, "Re-bookings"; `BookingListing`); nil otherwise. A confirmation that carries them supersedes the
    /// live records of its booking it no longer lists (``ReservationLifecycle``).
    package var bookingParts: BookingParts?
    /// Which part of its booking this is, whatever its item reference (nil where nothing tells parts apart): what
    /// finds the record of the same part when a later document names it differently (a one-leg check-in reminder
    /// for a leg a two-leg confirmation stored, ``ReservationLifecycle``).
    package var part: PartIdentity?

    package init(
        key: ReservationKey, content: ReservationContent, underName: String? = nil, warnings: [String] = [],
        bookingParts: BookingParts? = nil, part: PartIdentity? = nil
    ) {
        self.key = key
        self.content = content
        self.underName = underName
        self.warnings = warnings
        self.bookingParts = bookingParts
        self.part = part
    }

    private enum CodingKeys: String, CodingKey { case key, content, underName, warnings, bookingParts, part }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decode(ReservationKey.self, forKey: .key)
        content = try container.decode(ReservationContent.self, forKey: .content)
        underName = try container.decodeIfPresent(String.self, forKey: .underName)
        warnings = try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
        bookingParts = try container.decodeIfPresent(BookingParts.self, forKey: .bookingParts)
        part = try container.decodeIfPresent(PartIdentity.self, forKey: .part)
    }

    package var owner: OwnerAddress { key.owner }
    package var sourceDomain: String { key.sourceDomain }
    package var itemReference: String { key.itemReference }
}

/// The parts of a booking a document lists whole: what a re-booking supersedes the others by.
package struct BookingParts: Codable, Hashable, Sendable {
    /// The item reference of each part listed.
    package var itemReferences: [String]
    /// Whom the listed parts are for (`Reservation.passengerKey`: normalized names, empty for none). A record for
    /// someone else is not superseded: some senders write one email per passenger of a booking.
    package var passengers: [String]
    /// Each listed part as ``PartIdentity`` (where one tells it apart): a record of that part is listed even under
    /// another item reference.
    package var parts: [PartIdentity]

    package init(itemReferences: [String], passengers: [String], parts: [PartIdentity] = []) {
        self.itemReferences = itemReferences
        self.passengers = passengers
        self.parts = parts
    }
}

/// One part of a booking as it is told apart from the others whatever the document that names it: its kind, its
/// part key (`Reservation.partKey`: the leg, the stay, the ticket) and its passenger (`Reservation.passengerKey`).
package struct PartIdentity: Codable, Hashable, Sendable {
    package var kind: String
    package var partKey: String
    package var passenger: String

    package init(kind: String, partKey: String, passenger: String) {
        self.kind = kind
        self.partKey = partKey
        self.passenger = passenger
    }
}

/// The current version of one reservation item, as the store keeps it and calendars read it.
package struct StoredReservation: Codable, Hashable, Sendable, Identifiable {
    package typealias Status = ReservationContent.Status

    /// The store's own identifier, stable over the record's life (never reused).
    package var id: Int64
    package var key: ReservationKey
    package var content: ReservationContent
    /// 1 when created, + 1 on every change of content or status.
    package var version: Int
    package var createdAt: Date
    /// When the current version was written.
    package var updatedAt: Date
    /// When the record was first marked cancelled; nil while it is live.
    package var cancelledAt: Date?
    /// Whether the owner wants it in their calendar (not versioned: the owner's decision, not the sender's content).
    package var consent: Consent

    package init(
        id: Int64, key: ReservationKey, content: ReservationContent, version: Int, createdAt: Date, updatedAt: Date,
        cancelledAt: Date?, consent: Consent? = nil
    ) {
        self.id = id
        self.key = key
        self.content = content
        self.version = version
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.cancelledAt = cancelledAt
        self.consent = consent ?? Consent(.suggested, reason: .new, changedAt: createdAt)
    }

    /// When anything a calendar shows of it last changed: its content or the owner's consent.
    package var lastChangedAt: Date { max(updatedAt, consent.changedAt) }

    package var owner: OwnerAddress { key.owner }
    package var sourceDomain: String { key.sourceDomain }
    package var itemReference: String { key.itemReference }
    package var containerReference: String { content.containerReference }
    package var status: Status { content.status }
    package var kind: String { content.kind }
    package var payload: Data { content.payload }
    package var flags: [String] { content.flags }
    package var source: String { content.source }
    package var senderTime: SenderTime? { content.senderTime }
    package var isMinimalCancellation: Bool { content.isMinimalCancellation }
    package var provenance: Provenance { content.provenance }
}

/// One version of a reservation record, earlier or current (``ReservationStore/history(of:)``).
package struct ReservationHistoryEntry: Codable, Hashable, Sendable {
    /// The ``StoredReservation/id`` this version belongs to.
    package var reservationID: Int64
    package var version: Int
    package var content: ReservationContent
    /// When this version was written.
    package var recordedAt: Date
    package var cancelledAt: Date?

    package init(reservationID: Int64, version: Int, content: ReservationContent, recordedAt: Date, cancelledAt: Date?) {
        self.reservationID = reservationID
        self.version = version
        self.content = content
        self.recordedAt = recordedAt
        self.cancelledAt = cancelledAt
    }

    /// The current version of `reservation`, as a history entry.
    package init(current reservation: StoredReservation) {
        self.init(
            reservationID: reservation.id, version: reservation.version, content: reservation.content,
            recordedAt: reservation.updatedAt, cancelledAt: reservation.cancelledAt)
    }

    package var status: ReservationContent.Status { content.status }
    package var payload: Data { content.payload }
    package var flags: [String] { content.flags }
    package var source: String { content.source }
    package var senderTime: SenderTime? { content.senderTime }
    package var provenance: Provenance { content.provenance }
}
