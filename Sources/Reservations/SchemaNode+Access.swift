import Markup

/// Reading and rewriting properties of an item during resolution, by canonical name.
extension SchemaNode {
    /// The first nested item of `name`, if any.
    func child(_ name: String) -> SchemaNode? {
        for value in values(name) {
            if let node = value.node { return node }
        }
        return nil
    }

    /// Whether `name` has at least one value.
    func has(_ name: String) -> Bool { !values(name).isEmpty }

    /// The nested items of `name`, in order.
    func children(_ name: String) -> [SchemaNode] { values(name).compactMap(\.node) }

    /// The first text of `name`, or the `name` of its first item: lenient, for summaries and tickets.
    func looseText(_ name: String) -> String? {
        for value in values(name) {
            switch value {
            case .text(let text): if !text.isEmpty { return text }
            case .node(let node): if let text = node.looseText("name") { return text }
            }
        }
        return nil
    }

    /// Replaces the values of `name` (appends the property when absent; removes it for `[]`).
    mutating func set(_ name: String, _ newValues: [SchemaValue]) {
        if let index = properties.firstIndex(where: { $0.name == name }) {
            if newValues.isEmpty {
                properties.remove(at: index)
            } else {
                properties[index].values = newValues
            }
        } else if !newValues.isEmpty {
            properties.append(SchemaProperty(name: name, values: newValues))
        }
    }

    /// Removes `name` and returns its values.
    @discardableResult
    mutating func remove(_ name: String) -> [SchemaValue] {
        guard let index = properties.firstIndex(where: { $0.name == name }) else { return [] }
        return properties.remove(at: index).values
    }

    /// Applies `body` to the first item of `name`, in place. Returns false when there is none.
    @discardableResult
    mutating func updateChild(_ name: String, _ body: (inout SchemaNode) -> Void) -> Bool {
        guard let propertyIndex = properties.firstIndex(where: { $0.name == name }),
            let valueIndex = properties[propertyIndex].values.firstIndex(where: { $0.node != nil }),
            var node = properties[propertyIndex].values[valueIndex].node
        else { return false }
        body(&node)
        properties[propertyIndex].values[valueIndex] = .node(node)
        return true
    }

    /// Sets the text at a property path (`["reservationFor", "departureTime"]`); intermediate
    /// items must exist. The path is a fixed, short list of names, never input-driven.
    mutating func setText(_ text: String, at path: ArraySlice<String>) {
        guard let first = path.first else { return }
        if path.count == 1 {
            set(first, [.text(text)])
        } else {
            updateChild(first) { $0.setText(text, at: path.dropFirst()) }
        }
    }
}
