internal import Foundation
internal import GRDB

/// Decoding rows and encoding list columns. A row that does not decode is `store.corrupt`, never a crash.
extension SQLiteStore {
    /// The value at `index`, or `store.corrupt` when it is NULL or of another type.
    static func column<Value: DatabaseValueConvertible>(_ row: Row, _ index: Int) throws -> Value {
        do {
            return try row.decode(Value.self, atIndex: index)
        } catch {
            throw StoreError(
                code: .corrupt,
                reason: "a stored row has an unreadable column \(index); restore the database from a backup")
        }
    }

    /// The optional value at `index`, or `store.corrupt` when it is of another type.
    static func optionalColumn<Value: DatabaseValueConvertible>(_ row: Row, _ index: Int) throws -> Value? {
        do {
            return try row.decode(Value?.self, atIndex: index)
        } catch {
            throw StoreError(
                code: .corrupt,
                reason: "a stored row has an unreadable column \(index); restore the database from a backup")
        }
    }

    /// A list of strings as a JSON array.
    static func encodeList(_ values: [String]) throws -> String {
        if values.isEmpty { return "[]" }
        return try encodeJSON(values)
    }

    static func decodeList(_ text: String) throws -> [String] {
        if text == "[]" { return [] }
        return try decodeJSON([String].self, text)
    }

    static func encodeJSON<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw StoreError(code: .invalidArgument, reason: "a \(Value.self) could not be encoded as JSON: \(error)")
        }
    }

    static func decodeJSON<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError(
                code: .corrupt, reason: "a stored \(Value.self) is not valid JSON; restore the database from a backup")
        }
    }

    /// A domain name as the store keys it: ASCII lowercase, without a trailing dot.
    static func normalizedDomain(_ domain: String) -> String {
        var bytes = Array(domain.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for index in bytes.indices where bytes[index] >= UInt8(ascii: "A") && bytes[index] <= UInt8(ascii: "Z") {
            bytes[index] += 32
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
