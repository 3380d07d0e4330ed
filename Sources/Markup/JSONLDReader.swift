/// Turns one JSON-LD block into schema.org nodes, as written (JSON-LD 1.1 §9 "JSON-LD Grammar",
/// read leniently, without expanding IRIs or applying the context).
///
/// - A block holds one node object, an array of them, or an object with `@graph` (§9.4); arrays at
///   the top level are read element by element.
/// - In a node, `@type` (a string or an array of strings) gives the types, `@id` the id; `@context`
///   and other keywords are skipped. Every other member is a property, in document order; a name
///   given twice keeps its last value (`markup.jsonld-duplicate-key`), as JSON parsers do.
/// - A block that is not valid JSON is cleaned (`JSONLDRepair`) and read as far as it can be
///   (`JSONLDRecovery`): one `markup.jsonld-repaired` warning lists every repair with its position,
///   one `markup.jsonld-dropped` error names each part that could not be read. Several values in one
///   block have the paths `script[N]/1`, `script[N]/2`, …
/// - A value that is an object is a nested node, unless it is a value object (`{"@value": …}`, §9.7:
///   its value) or a list or set object (`@list`/`@set`, §9.8: its items). Strings are text, numbers
///   and booleans their literal text, `null` is skipped, arrays give several values.
struct JSONLDReader {
    /// One step of a path: a member name or an array index.
    private enum PathStep {
        case member(String)
        case index(Int)
    }

    private var state: ExtractionState
    private var root: String
    /// The path of the member being read, turned into text only when a diagnostic needs it.
    private var path: [PathStep] = []

    private init(state: ExtractionState, path: String) {
        self.state = state
        self.root = path
    }

    /// Reads the block `text` found at `path` (`script[2]`), reporting into `state`.
    static func read(_ text: [UInt8], path: String, state: inout ExtractionState) -> [SchemaNode] {
        let configuration = state.configuration
        guard text.count <= configuration.maxJSONLDBlockBytes else {
            state.error(
                .jsonLDTooLarge, path: path,
                "the JSON-LD block has \(text.count) bytes, more than the limit of "
                    + "\(configuration.maxJSONLDBlockBytes); it was skipped"
            )
            return []
        }
        guard text.contains(where: { !$0.isASCIIWhitespace }) else {
            state.warning(.jsonLDNoNode, path: path, "the JSON-LD block is empty")
            return []
        }
        let parser = JSONParser(maxDepth: configuration.maxJSONDepth, maxStringLength: configuration.maxStringLength)
        let values: [JSONValue]
        switch parser.parse(text) {
        case .success(let parsed):
            values = [parsed]
        case .failure(let failure) where failure.kind == .tooDeep:
            state.error(
                .jsonTooDeep, path: path,
                "the JSON-LD block nests deeper than \(configuration.maxJSONDepth) at \(position(failure.offset, in: text)); "
                    + "it was skipped"
            )
            return []
        case .failure(let failure):
            let cleaned = JSONLDRepair.clean(text)
            let outcome = JSONLDRecovery.recover(cleaned, parser: parser)
            guard !outcome.values.isEmpty else {
                if outcome.tooDeep {
                    state.error(
                        .jsonTooDeep, path: path,
                        "the JSON-LD block nests deeper than \(configuration.maxJSONDepth); it was skipped")
                } else {
                    state.error(.jsonLDInvalid, path: path, invalidMessage(failure, text))
                }
                return []
            }
            values = outcome.values
            let positions = cleaned.decodedEntities ? "; positions are in the block after its entities were decoded" : ""
            state.warning(
                .jsonLDRepaired, path: path,
                "the JSON-LD block is not valid JSON (\(position(failure.offset, in: text)): \(failure.reason)); "
                    + "read after repair: \(repairSummary(outcome.repairs, in: cleaned.text))\(positions). Publish valid JSON"
            )
            for span in outcome.dropped.prefix(ExtractionState.maxDiagnosticsPerCode) {
                state.error(
                    .jsonLDDropped, path: path,
                    "the JSON-LD block's text from \(position(span.lowerBound, in: cleaned.text)) to "
                        + "\(position(span.upperBound, in: cleaned.text)) is not a complete JSON value"
                        + (outcome.tooDeep ? " (or nests deeper than \(configuration.maxJSONDepth))" : "")
                        + " and was not read; the rest of the block was\(positions). Publish valid JSON"
                )
            }
            if outcome.droppedCount > ExtractionState.maxDiagnosticsPerCode {
                state.error(
                    .jsonLDDropped, path: path,
                    "\(outcome.droppedCount - ExtractionState.maxDiagnosticsPerCode) more parts of the JSON-LD block "
                        + "were not read")
            }
        }
        var reader = JSONLDReader(state: state, path: path)
        var nodes: [SchemaNode] = []
        for (number, value) in values.enumerated() where !reader.state.isFull {
            // Several values in one block: the Nth (from 1) is `script[2]/N`.
            reader.root = values.count == 1 ? path : "\(path)/\(number + 1)"
            nodes += reader.topLevel(value)
        }
        state = reader.state
        return nodes
    }

    /// The repairs, grouped by kind, each with up to five positions (`line 3, column 14 (byte 57)`).
    private static func repairSummary(_ repairs: [JSONLDRecovery.Repair], in text: [UInt8]) -> String {
        var order: [String] = []
        var offsets: [String: [Int]] = [:]
        var others: [String] = []
        for repair in repairs {
            let kind: String
            let offset: Int
            switch repair {
            case .cleaned(.wrapper(let at)): (kind, offset) = ("stripped a comment or CDATA wrapper", at)
            case .cleaned(.comment(let at)): (kind, offset) = ("removed a comment", at)
            case .cleaned(.entities):
                others.append("decoded the HTML entities of the whole block")
                continue
            case .lenient(let leniency):
                offset = leniency.offset
                switch leniency.kind {
                case .missingComma: kind = "read a missing comma"
                case .extraComma: kind = "skipped an extra comma"
                case .trailingComma: kind = "skipped a comma before a closing bracket"
                case .controlCharacter: kind = "kept a raw control character in a string"
                }
            case .separator(let at): (kind, offset) = ("skipped a ';' or ',' after a value", at)
            case .anotherValue(let at): (kind, offset) = ("read one more value", at)
            case .droppedText(let span): (kind, offset) = ("dropped text that is not JSON", span.lowerBound)
            }
            if offsets[kind] == nil { order.append(kind) }
            offsets[kind, default: []].append(offset)
        }
        let described = order.map { kind -> String in
            let all = offsets[kind] ?? []
            let shown = all.prefix(5).map { position($0, in: text) }.joined(separator: "; ")
            return "\(kind) at \(shown)" + (all.count > 5 ? " (\(all.count) in all)" : "")
        }
        let summary = (others + described).joined(separator: ", ")
        return summary.isEmpty ? "nothing needed changing" : summary
    }

    private static func invalidMessage(_ failure: JSONParser.Failure, _ text: [UInt8]) -> String {
        "the JSON-LD block is not valid JSON at \(position(failure.offset, in: text)): \(failure.reason); "
            + "the repair step did not help, so it was skipped"
    }

    /// `line 3, column 14 (byte 57)`, counted in the block, lines and columns from 1, columns in bytes.
    static func position(_ offset: Int, in text: [UInt8]) -> String {
        let offset = min(max(offset, 0), text.count)
        var line = 1
        var lineStart = 0
        for index in 0..<offset where text[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return "line \(line), column \(offset - lineStart + 1) (byte \(offset))"
    }

    // MARK: Reading values

    private var currentPath: String { Self.text(of: path, from: root) }

    private static func text(of path: [PathStep], from root: String) -> String {
        path.reduce(into: root) { text, step in
            switch step {
            case .member(let name): text += "." + name
            case .index(let index): text += "[\(index)]"
            }
        }
    }

    /// The nodes of a top-level value: a node object, an array of them, or a `@graph` container.
    private mutating func topLevel(_ value: JSONValue) -> [SchemaNode] {
        switch value {
        case .array(let items):
            var nodes: [SchemaNode] = []
            for (index, item) in items.enumerated() where !state.isFull {
                path.append(.index(index))
                nodes += topLevel(item)
                path.removeLast()
            }
            return nodes
        case .object(let members):
            var nodes: [SchemaNode] = []
            if let graph = value.member("@graph") {
                path.append(.member("@graph"))
                nodes += topLevel(graph)
                path.removeLast()
                // A graph container that is also a typed node is an item of its own.
                guard value.member("@type") != nil else { return nodes }
            }
            let (root, path) = (root, path)  // the path is made into text only if a limit is reached
            guard state.admitTopLevelItem(path: Self.text(of: path, from: root)) else { return nodes }
            nodes.append(node(members))
            return nodes
        case .oversizedString(let count):
            state.error(.stringTooLong, path: currentPath, tooLong(count))
            return []
        case .string, .number, .bool, .null:
            state.warning(.jsonLDNoNode, path: currentPath, "a JSON-LD block must hold objects; this value was skipped")
            return []
        }
    }

    /// A node object (nested nodes are admitted by `values(_:)` before this is called). A name given
    /// twice keeps its last value, as `JSON.parse` in browsers and Python's `json` (extruct) do, with a
    /// `markup.jsonld-duplicate-key` warning.
    private mutating func node(_ members: [JSONMember]) -> SchemaNode {
        var node = SchemaNode(types: [], syntax: .jsonLD)
        node.properties.reserveCapacity(members.count)
        // Name → index in `node.properties`: a linear search per member is quadratic in an object
        // with many names (150,000 in a 2 MiB block took minutes).
        var positions: [String: Int] = [:]
        var hasType = false
        var emptied = false
        for member in members {
            guard let name = member.name else {
                if case .oversizedString(let count) = member.key {
                    state.error(.stringTooLong, path: currentPath, "a property name " + tooLong(count))
                }
                continue
            }
            if name.utf8.first == UInt8(ascii: "@") {
                switch name {
                case "@type":
                    if hasType {
                        duplicate(name)
                        node.types = []
                    }
                    hasType = true
                    appendTypes(member.value, to: &node.types)
                case "@id":
                    if node.id != nil { duplicate(name) }
                    if case .string(let id) = member.value { node.id = id }
                default: break  // @context, @graph inside a node, @language, @reverse, …
                }
                continue
            }
            path.append(.member(name))
            var values: [SchemaValue] = []
            appendValues(member.value, to: &values)
            path.removeLast()
            if let index = positions[name] {
                duplicate(name)
                node.properties[index].values = values  // the last value wins
                emptied = emptied || values.isEmpty
            } else {
                // Registered even when empty (`null`), so that a later value of the name is still a duplicate.
                positions[name] = node.properties.count
                node.properties.append(SchemaProperty(name: name, values: values))
                emptied = emptied || values.isEmpty
            }
            if state.isFull { break }
        }
        if emptied { node.properties.removeAll { $0.values.isEmpty } }
        return node
    }

    private mutating func duplicate(_ name: String) {
        let (root, path) = (root, path)
        state.warning(
            .jsonLDDuplicateKey, path: Self.text(of: path + [.member(name)], from: root),
            "\(name) is given more than once in this object; the last value was read, as browsers and other "
                + "consumers do. Give each name once")
    }

    private mutating func appendTypes(_ value: JSONValue, to types: inout [String]) {
        switch value {
        case .string(let type):
            types.append(type)
        case .array(let items):
            for item in items { appendTypes(item, to: &types) }
        case .oversizedString(let count):
            state.error(.stringTooLong, path: currentPath + ".@type", tooLong(count))
        default:
            break
        }
    }

    /// Appends the values one property value gives.
    private mutating func appendValues(_ value: JSONValue, to values: inout [SchemaValue]) {
        switch value {
        case .string(let text): values.append(.text(text))
        case .number(let literal): values.append(.text(literal))
        case .bool(let flag): values.append(.text(flag ? "true" : "false"))
        case .null: break
        case .oversizedString(let count):
            state.error(.stringTooLong, path: currentPath, tooLong(count))
        case .array(let items):
            for item in items where !state.isFull {
                appendValues(item, to: &values)
            }
        case .object(let members):
            if let inner = value.member("@value") {
                // A value object is text; an object or array as @value is not a JSON-LD value.
                switch inner {
                case .object, .array: break
                default: appendValues(inner, to: &values)
                }
                return
            }
            if let items = value.member("@list") ?? value.member("@set") {
                appendValues(items, to: &values)
                return
            }
            let (root, path) = (root, path)
            guard state.admitNode(path: Self.text(of: path, from: root)) else { return }
            values.append(.node(node(members)))
        }
    }

    private func tooLong(_ count: Int) -> String {
        "has \(count) bytes, more than the limit of \(state.configuration.maxStringLength); it was left out"
    }
}
