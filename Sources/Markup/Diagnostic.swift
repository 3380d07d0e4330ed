/// A problem found in markup, with a stable code, where it is and what to do about it.
/// Shared by extraction (`Markup`) and resolution (`Reservations`).
package struct Diagnostic: Codable, Sendable, Hashable, CustomStringConvertible {
    package enum Severity: String, Codable, Sendable, Hashable, Comparable {
        case warning
        case error

        package static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .warning && rhs == .error }
    }

    /// A stable code (`markup.jsonld-repaired`, `markup.missing-property`). Each target declares its
    /// own codes as static members in an extension; tests compare codes, never message text.
    package struct Code: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        package init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    package var severity: Severity
    package var code: Code
    /// Where: a property path (`reservationFor.departureAirport.iataCode`), or a place in the
    /// document (`script[2]`, `mime[1.2]`). Empty when it concerns the whole document.
    package var path: String
    /// What was wrong and what to do; never carries personal data beyond the property's name.
    package var message: String

    package init(_ severity: Severity, _ code: Code, path: String = "", _ message: String) {
        self.severity = severity
        self.code = code
        self.path = path
        self.message = message
    }

    package var description: String {
        "\(severity.rawValue) \(code)\(path.isEmpty ? "" : " at \(path)"): \(message)"
    }
}
