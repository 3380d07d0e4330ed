package import Foundation
package import Store
internal import Reservations

/// A change as it leaves the gateway: a CloudEvents 1.0 event (https://cloudevents.io, structured JSON mode), the
/// same JSON in the change feed (`GET /v1/changes`, `gateway changes --json`) and in a webhook delivery's body.
///
/// ```json
/// {"data":{"change":"reservation.updated","cursor":"AQAAAAAAAAAH","provenance":{...},"reservation":{...},
///  "version":2},"datacontenttype":"application/json","id":"change-7","source":"/v1/changes",
///  "specversion":"1.0","subject":"reservations/3","time":"2026-11-21T10:50:15.123Z",
///  "type":"gateway.reservation.updated"}
/// ```
package struct ChangeMessage: Codable, Hashable, Sendable {
    /// The change itself: the reservation view the API returns for the record as the change left it, its version,
    /// the kind of change, the cursor to resume after it, and where the version came from.
    package struct Payload: Codable, Hashable, Sendable {
        /// `reservation.created`, `reservation.updated`, `reservation.cancelled`, ...
        package var change: String
        /// Pass as `after` to read the changes after this one.
        package var cursor: String
        package var version: Int
        package var reservation: ReservationView
        package var provenance: Provenance
    }

    /// How the version arrived.
    package struct Provenance: Codable, Hashable, Sendable {
        /// `email`, `web`, `http` or `lmtp`; absent for a change made without an ingestion.
        package var channel: String?
        /// The registered domain it was authenticated for.
        package var sourceDomain: String
        /// The email's Message-ID or the page's URL.
        package var source: String
        /// The developer flags that admitted it.
        package var flags: [String]
    }

    /// CloudEvents 1.0.
    package var specversion = "1.0"
    /// Unique per change: the same on every delivery and retry of it (a receiver drops duplicates by it).
    package var id: String
    /// The feed the event comes from.
    package var source: String
    /// `gateway.reservation.updated`: `gateway.` and the kind of change.
    package var type: String
    /// When the change was made: RFC 3339 in UTC, to the millisecond (`2026-11-21T10:50:15.123Z`), so that a
    /// receiver can order and time changes closer than a second apart.
    package var time: String
    /// The reservation, `reservations/ID`.
    package var subject: String
    package var datacontenttype = "application/json"
    package var data: Payload

    /// The CloudEvents `source` of every change: the feed's path.
    package static let source = "/v1/changes"
    /// What precedes a change's kind in the CloudEvents `type`.
    package static let typePrefix = "gateway."
    /// The media type of one event in structured mode (CloudEvents JSON format §3).
    package static let mediaType = "application/cloudevents+json; charset=utf-8"

    package init(_ event: ChangeEvent) {
        let reservation = event.reservation
        id = "change-\(event.position)"
        source = Self.source
        type = Self.typePrefix + event.kind.rawValue
        time = event.recordedAt.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        subject = "reservations/\(reservation.id)"
        data = Payload(
            change: event.kind.rawValue, cursor: ChangeCursor(position: event.position).description,
            version: reservation.version, reservation: ReservationView(reservation),
            provenance: Provenance(
                channel: event.channel?.rawValue, sourceDomain: reservation.sourceDomain, source: reservation.source,
                flags: reservation.flags))
    }

    /// The JSON the gateway sends: sorted keys, RFC 3339 times, slashes not escaped. The bytes a webhook signature
    /// covers.
    package func encoded() throws -> [UInt8] {
        try CanonicalJSONEncoder(dateEncoding: .iso8601).encode(self)
    }

    /// The gateway's JSON (the API's: sorted keys, ISO 8601 times).
    package static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// One line for a terminal: the cursor, the time, the kind and the reservation.
    package var line: String {
        "\(data.cursor) \(time) \(data.change.padding(toLength: 21, withPad: " ", startingAt: 0)) "
            + data.reservation.line
    }
}
