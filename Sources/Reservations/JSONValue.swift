package import Foundation

/// A JSON value, as `gateway extract --json` prints it: the normalized schema.org object of a
/// reservation and the fields added beside it. Objects encode with sorted keys (see `jsonData`),
/// so the output is stable from run to run.
package enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else if let value = try? container.decode(Double.self) {
            // Numbers are kept as their text, as extraction keeps them.
            self = .string(Self.numberText(value))
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value's UTF-8 JSON text with sorted keys and unescaped slashes.
    package func jsonData(prettyPrinted: Bool = false) -> Data {
        // Encoding strings, booleans, arrays and string-keyed objects cannot fail.
        guard prettyPrinted else { return (try? CanonicalJSONEncoder().encodeData(self)) ?? Data("null".utf8) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return (try? encoder.encode(self)) ?? Data("null".utf8)
    }

    /// The member `key` of an object, or nil.
    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The text of a string value, or nil.
    package var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
