import Foundation
import Markup

/// Builds schema.org graphs by hand for tests, the way the extractor would: from JSON-LD text
/// (objects are items, arrays are several values, `@graph` lists items), optionally as Microdata
/// (full `http://schema.org/` item types, every value as text, no `@id`).
enum GraphBuilder {
    enum BuildError: Error { case notJSON }

    static func graph(_ json: String, syntax: SchemaNode.Syntax = .jsonLD) throws -> MarkupGraph {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        return MarkupGraph(nodes: topLevel(object, syntax: syntax))
    }

    static func graph(_ object: Any, syntax: SchemaNode.Syntax = .jsonLD) -> MarkupGraph {
        MarkupGraph(nodes: topLevel(object, syntax: syntax))
    }

    /// Parses JSON text to a mutable dictionary, for tests that remove a property first.
    static func object(_ json: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw BuildError.notJSON
        }
        return object
    }

    /// Removes the property at a dotted path (`reservationFor.departureAirport.iataCode`).
    static func removing(_ path: String, from object: [String: Any]) -> [String: Any] {
        var parts = path.split(separator: ".").map(String.init)
        var result = object
        let first = parts.removeFirst()
        if parts.isEmpty {
            result[first] = nil
        } else if let child = result[first] as? [String: Any] {
            result[first] = removing(parts.joined(separator: "."), from: child)
        }
        return result
    }

    /// Sets the value at a dotted path.
    static func setting(_ path: String, to value: Any, in object: [String: Any]) -> [String: Any] {
        var parts = path.split(separator: ".").map(String.init)
        var result = object
        let first = parts.removeFirst()
        if parts.isEmpty {
            result[first] = value
        } else {
            result[first] = setting(parts.joined(separator: "."), to: value, in: result[first] as? [String: Any] ?? [:])
        }
        return result
    }

    static func topLevel(_ object: Any, syntax: SchemaNode.Syntax) -> [SchemaNode] {
        if let array = object as? [Any] { return array.flatMap { topLevel($0, syntax: syntax) } }
        guard let dictionary = object as? [String: Any] else { return [] }
        if let items = dictionary["@graph"] { return topLevel(items, syntax: syntax) }
        return [node(dictionary, syntax: syntax)]
    }

    static func node(_ dictionary: [String: Any], syntax: SchemaNode.Syntax) -> SchemaNode {
        var types: [String] = []
        if let type = dictionary["@type"] as? String { types = [type] }
        if let list = dictionary["@type"] as? [String] { types = list }
        if syntax == .microdata {
            types = types.map { $0.hasPrefix("http") ? $0 : "http://schema.org/" + $0 }
        }
        var result = SchemaNode(
            types: types, id: syntax == .jsonLD ? dictionary["@id"] as? String : nil, syntax: syntax)
        for key in dictionary.keys.sorted() where !key.hasPrefix("@") {
            let raw = dictionary[key] as Any
            let values = (raw as? [Any]) ?? [raw]
            for value in values {
                if let child = value as? [String: Any] {
                    result.append(.node(node(child, syntax: syntax)), for: key)
                } else if let text = value as? String {
                    result.append(.text(text), for: key)
                } else if let number = value as? NSNumber {
                    result.append(.text(number.stringValue), for: key)
                }
            }
        }
        return result
    }
}
