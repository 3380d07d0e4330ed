internal import Foundation
internal import Reservations
internal import GRDB
internal import Store

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

    /// An owner read back from a row, or `store.corrupt`.
    static func owner(_ text: String) throws -> OwnerAddress {
        guard let owner = OwnerAddress(text) else {
            throw StoreError(
                code: .corrupt, reason: "a stored row names an owner that is not an address; restore the database")
        }
        return owner
    }

    /// A sender time read back from its two columns (nil when the time is NULL), or `store.corrupt`.
    static func senderTime(_ milliseconds: Int64?, _ source: String?) throws -> SenderTime? {
        guard let milliseconds else { return nil }
        guard let source = source.flatMap(SenderTime.Source.init(rawValue:)) else {
            throw StoreError(
                code: .corrupt,
                reason: "a stored version has a sender time of unknown origin; upgrade the gateway or restore the database")
        }
        return SenderTime(StoreTime.date(milliseconds), source: source)
    }

    /// A list of strings as JSON text: what ``encodeJSON(_:)`` writes for it (every ingestion writes three or four,
    /// so without the `Encoder` protocol).
    static func encodeList(_ values: [String]) -> String {
        if values.isEmpty { return "[]" }
        var json = CanonicalJSONBuilder()
        json.strings(values)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    static func decodeList(_ text: String) throws -> [String] {
        if text == "[]" { return [] }
        return try decodeJSON([String].self, text)
    }

    static func encodeJSON<Value: Encodable>(_ value: Value) throws -> String {
        do {
            return String(decoding: try CanonicalJSONEncoder().encode(value), as: UTF8.self)
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
}
