/// A JSON value as written (RFC 8259), the intermediate form between a JSON-LD block and its nodes.
///
/// Numbers keep their literal text (`2.50` stays `2.50`, RFC 8259 §6 leaves precision to the reader),
/// and object members keep their order and any duplicate names, so nothing the sender wrote is lost.
enum JSONValue: Hashable, Sendable {
    case object([JSONMember])
    case array([JSONValue])
    case string(String)
    /// The number's literal text, already checked against the RFC 8259 §6 grammar.
    case number(String)
    case bool(Bool)
    case null
    /// A string longer than the parser's limit: only its length in bytes is kept.
    case oversizedString(byteCount: Int)

    /// The value of the first member named `name`, if this is an object that has one.
    func member(_ name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for member in members where member.name == name { return member.value }
        return nil
    }
}

/// One `name: value` pair of a JSON object. The name is a `.string`, or `.oversizedString` when too long.
struct JSONMember: Hashable, Sendable {
    var key: JSONValue
    var value: JSONValue

    /// The member's name, or nil when it was too long to keep.
    var name: String? {
        if case .string(let name) = key { return name }
        return nil
    }
}
