import Foundation
import Markup

/// Whether a reservation meets the bars other consumers of the same markup publish, so a sender fixes everything
/// once (issue 20): Apple's required properties (Siri Event Suggestions Markup, the bar the gateway itself holds
/// every item to, MARKUP.md "Required properties") and Gmail's (the "(Required)" rows of
/// developers.google.com/gmail/markup/reference/types/…).
///
/// Both are read on the normalized object (aliases folded), so `reservationNumber` counts as `reservationId` and
/// `airline` as `provider`, as each consumer reads its own dialect.
package struct PublishedRequirement: Codable, Sendable, Hashable {
    /// `Apple` or `Gmail`.
    package var consumer: String
    /// True when every property the consumer requires is there (and, for Apple, the gateway found no error).
    package var meets: Bool
    /// False when the consumer does not read this kind at all (Gmail has no boat reservation).
    package var handlesKind: Bool
    /// The property paths missing, in the normal form's names (`reservationFor.departureAirport.name`).
    package var missing: [String]
    /// Where the consumer publishes its bar.
    package var reference: String
}

extension Resolution {
    /// Apple's and Gmail's verdicts on this item, in that order; empty for a type the gateway does not handle.
    package var publishedRequirements: [PublishedRequirement] {
        guard let reservation else { return [] }
        if reservation.isMinimalCancellation {
            // A cancellation needs its reservation id and status only, for every consumer.
            return [
                PublishedRequirement(
                    consumer: "Apple", meets: true, handlesKind: true, missing: [], reference: Self.appleReference),
                PublishedRequirement(
                    consumer: "Gmail", meets: true, handlesKind: reservation.kind != .boat, missing: [],
                    reference: Self.gmailReference(reservation.kind)),
            ]
        }
        // Apple's bar is the gateway's: every error names the property path it concerns.
        let appleMissing = diagnostics.filter { $0.severity == .error }.map { $0.path.isEmpty ? $0.code.rawValue : $0.path }
        let apple = PublishedRequirement(
            consumer: "Apple", meets: admissible, handlesKind: true, missing: Self.unique(appleMissing),
            reference: Self.appleReference)
        guard let required = Self.gmailRequired[reservation.kind] else {
            return [
                apple,
                PublishedRequirement(
                    consumer: "Gmail", meets: false, handlesKind: false, missing: [],
                    reference: Self.gmailReference(reservation.kind)),
            ]
        }
        let gmailMissing = required.filter { alternatives in
            !alternatives.contains { normalized.hasValue(at: $0) }
        }.map { $0[0] }
        let gmail = PublishedRequirement(
            consumer: "Gmail", meets: gmailMissing.isEmpty, handlesKind: true, missing: gmailMissing,
            reference: Self.gmailReference(reservation.kind))
        return [apple, gmail]
    }

    static let appleReference = "https://developer.apple.com/documentation/sirieventsuggestionsmarkup"

    static func gmailReference(_ kind: Reservation.Kind) -> String {
        "https://developers.google.com/gmail/markup/reference/types/\(kind.schemaType)"
    }

    private static func unique(_ paths: [String]) -> [String] {
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }

    private static let address = ["streetAddress", "addressLocality", "addressRegion", "postalCode", "addressCountry"]

    /// Gmail's required properties per kind, in the normal form's names; each entry lists the paths any one of
    /// which satisfies it (the first is the one reported). Boat reservations are not a Gmail type.
    static let gmailRequired: [Reservation.Kind: [[String]]] = {
        let common: [[String]] = [["reservationId"], ["underName.name"]]
        func place(_ path: String, address withAddress: Bool) -> [[String]] {
            [[path + ".name"]] + (withAddress ? address.map { [path + ".address." + $0] } : [])
        }
        return [
            .flight: common + [
                ["reservationFor.flightNumber"],
                ["reservationFor.provider.name", "reservationFor.airline.name"],
                ["reservationFor.provider.iataCode", "reservationFor.airline.iataCode"],
                ["reservationFor.departureAirport.name"], ["reservationFor.departureAirport.iataCode"],
                ["reservationFor.departureTime"],
                ["reservationFor.arrivalAirport.name"], ["reservationFor.arrivalAirport.iataCode"],
            ],
            .restaurant: common + [["reservationStatus"], ["startTime"], ["partySize"]]
                + place("reservationFor", address: true),
            .lodging: common + [["reservationStatus"], ["checkinTime"], ["checkoutTime"], ["reservationFor.telephone"]]
                + place("reservationFor", address: true),
            .rentalCar: common + [
                ["reservationStatus"], ["reservationFor.name"], ["reservationFor.model"], ["reservationFor.brand.name"],
                ["provider.name", "reservationFor.provider.name", "reservationFor.rentalCompany.name"],
                ["pickupTime"], ["dropoffTime"],
            ] + place("pickupLocation", address: true) + place("dropoffLocation", address: true),
            .train: common + [
                ["reservationStatus"], ["reservationFor.departureTime"], ["reservationFor.arrivalTime"],
            ] + place("reservationFor.departureStation", address: false)
                + place("reservationFor.arrivalStation", address: false),
            .bus: common + [
                ["reservationFor.departureTime"], ["reservationFor.arrivalTime"],
            ] + place("reservationFor.departureBusStop", address: false)
                + place("reservationFor.arrivalBusStop", address: false),
            .event: common + [
                ["reservationStatus"], ["reservationFor.name"], ["reservationFor.startDate"],
            ] + place("reservationFor.location", address: true),
        ]
    }()
}

extension JSONValue {
    /// True when the dotted `path` leads to a non-empty value (in an array, its first element is followed, as the
    /// resolver reads the first of several values).
    func hasValue(at path: String) -> Bool {
        var current: JSONValue? = self
        for key in path.split(separator: ".") {
            if case .array(let elements) = current { current = elements.first }
            current = current?[String(key)]
        }
        switch current {
        case .none, .null: return false
        case .string(let text): return !text.trimmingCharacters(in: .whitespaces).isEmpty
        case .array(let elements): return !elements.isEmpty
        case .object(let members): return !members.isEmpty
        case .bool: return true
        }
    }
}
