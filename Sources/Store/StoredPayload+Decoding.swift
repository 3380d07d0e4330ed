package import Foundation
package import Reservations

extension StoredPayload {
    /// The payload `data` read back, as `JSONDecoder` reads it, nil where that fails. The markup (most of the bytes)
    /// is read by ``JSONValue/init(parsing:)`` and only the typed reservation and the warnings by `JSONDecoder`:
    /// `JSONValue`'s `Decodable` conformance tries each shape in turn and pays for a `DecodingError` at every miss.
    package init?(stored data: Data) {
        guard let members = try? JSONValue.memberRanges(of: data), let markup = members["markup"],
            let reservation = Self.reservation(in: data, members: members),
            let markupValue = try? JSONValue(parsing: Self.slice(data, markup))
        else { return nil }
        self.reservation = reservation
        self.markup = markupValue
        if let warnings = members["warnings"] {
            guard let decoded = try? JSONDecoder().decode([Warning]?.self, from: Self.slice(data, warnings)) else {
                return nil
            }
            self.warnings = decoded
        } else {
            warnings = nil
        }
    }

    /// Only the typed reservation of the payload `data` (what the lifecycle compares parts by), without reading the
    /// markup beyond its syntax; nil when the payload is no JSON object with a markup and a reservation that decodes.
    package static func reservation(stored data: Data) -> Reservation? {
        guard let members = try? JSONValue.memberRanges(of: data), members["markup"] != nil else { return nil }
        return reservation(in: data, members: members)
    }

    private static func reservation(in data: Data, members: [String: Range<Int>]) -> Reservation? {
        guard let range = members["reservation"] else { return nil }
        return try? JSONDecoder().decode(Reservation.self, from: slice(data, range))
    }

    private static func slice(_ data: Data, _ range: Range<Int>) -> Data {
        data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)]
    }
}
