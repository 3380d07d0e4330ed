/// One schema.org item found in a document, as written: the output of extraction and the input
/// of resolution. `Codable` because extraction runs in a separate sandboxed process.
///
/// Type and property names are kept as the sender wrote them (`FlightReservation`,
/// `http://schema.org/FlightReservation`, `reservationNumber`); folding aliases and IRIs into the
/// normal form is the `Reservations` stage's job, so it can report every alias it applied.
package struct SchemaNode: Codable, Sendable, Hashable {
    /// Which syntax the item was written in.
    package enum Syntax: String, Codable, Sendable, Hashable {
        case jsonLD = "json-ld"
        case microdata
    }

    /// `@type` (JSON-LD, possibly several) or the `itemtype` tokens (Microdata).
    package var types: [String]
    /// `@id` (JSON-LD) or `itemid` (Microdata).
    package var id: String?
    /// Properties in document order; a name appears once, with every value given for it.
    package var properties: [SchemaProperty]
    package var syntax: Syntax

    package init(types: [String], id: String? = nil, properties: [SchemaProperty] = [], syntax: Syntax) {
        self.types = types
        self.id = id
        self.properties = properties
        self.syntax = syntax
    }

    /// The values of the property `name` (exact match), or an empty array.
    package func values(_ name: String) -> [SchemaValue] {
        properties.first { $0.name == name }?.values ?? []
    }

    /// Appends `value` under `name`, keeping document order.
    package mutating func append(_ value: SchemaValue, for name: String) {
        if let index = properties.firstIndex(where: { $0.name == name }) {
            properties[index].values.append(value)
        } else {
            properties.append(SchemaProperty(name: name, values: [value]))
        }
    }
}

/// A property of a `SchemaNode` and its values in document order.
package struct SchemaProperty: Codable, Sendable, Hashable {
    package var name: String
    package var values: [SchemaValue]

    package init(name: String, values: [SchemaValue]) {
        self.name = name
        self.values = values
    }
}

/// A property value: text (JSON strings, numbers and booleans as their literal text; Microdata
/// values per element) or a nested item.
package enum SchemaValue: Codable, Sendable, Hashable {
    case text(String)
    indirect case node(SchemaNode)

    package var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    package var node: SchemaNode? {
        if case .node(let value) = self { return value }
        return nil
    }
}

/// Everything extraction found in one document: the top-level items and what went wrong.
package struct MarkupGraph: Codable, Sendable, Hashable {
    /// Top-level items in document order (JSON-LD blocks first in their order, then Microdata).
    package var nodes: [SchemaNode]
    package var diagnostics: [Diagnostic]

    package init(nodes: [SchemaNode] = [], diagnostics: [Diagnostic] = []) {
        self.nodes = nodes
        self.diagnostics = diagnostics
    }
}
