import Markup

/// The graph frame's payload: a `MarkupGraph` in a compact binary form, written by the worker and read
/// by the gateway for every document.
///
/// JSON (JSONEncoder/JSONDecoder over the synthesized `Codable`) cost the gateway more CPU per email
/// than DKIM verification; this form is read in one pass with no intermediate values. It is private to
/// one build (worker and gateway ship together), so it carries a version byte and nothing else.
///
/// The reader treats the bytes as hostile (a compromised worker writes them): every length and count
/// is checked against what is left, strings must be valid UTF-8, nesting is bounded, and any
/// violation is an error, never a crash.
///
///     graph      version:u8(1) count:varint node* count:varint diagnostic*
///     node       count:varint string* hasID:u8 [id:string] syntax:u8 count:varint property*
///     property   name:string count:varint value*
///     value      tag:u8 (0: text:string, 1: node)
///     diagnostic severity:u8 code:string path:string message:string
///     string     length:varint utf8
///     varint     unsigned LEB128, at most 10 bytes
enum GraphWire {
    static let version: UInt8 = 1
    /// Deepest nesting of nodes the reader accepts: extraction nests items at most 64 deep
    /// (`maxItemDepth`, `maxJSONDepth`), so anything much deeper comes from a compromised worker.
    static let maximumDepth = 96

    struct Malformed: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: - Writing

    static func encode(_ graph: MarkupGraph) -> [UInt8] { encode(graph, after: []) }

    /// `prefix`, then the graph: a frame's header and fields go first without a copy of the graph.
    static func encode(_ graph: MarkupGraph, after prefix: [UInt8]) -> [UInt8] {
        var writer = Writer(capacity: 4096)
        defer { writer.free() }
        writer.append(prefix)
        writer.byte(version)
        writer.count(graph.nodes.count)
        for node in graph.nodes { writer.node(node) }
        writer.count(graph.diagnostics.count)
        for diagnostic in graph.diagnostics {
            writer.byte(diagnostic.severity == .error ? 1 : 0)
            writer.string(diagnostic.code.rawValue)
            writer.string(diagnostic.path)
            writer.string(diagnostic.message)
        }
        return writer.bytes
    }

    /// Writes into a buffer of its own that grows by doubling, copied into an array once at the end: appending to an
    /// array byte by byte (a uniqueness and capacity check each) was a third of the worker's encoding time in perf.
    private struct Writer {
        private var base: UnsafeMutablePointer<UInt8>
        private var capacity: Int
        private var used = 0

        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: capacity)
        }

        var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }

        func free() { base.deallocate() }

        private mutating func reserve(_ extra: Int) {
            guard extra > capacity - used else { return }
            let grown = max(capacity * 2, used + extra)
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            moved.update(from: base, count: used)
            base.deallocate()
            base = moved
            capacity = grown
        }

        mutating func byte(_ value: UInt8) {
            reserve(1)
            base[used] = value
            used += 1
        }

        mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
            guard let start = buffer.baseAddress, !buffer.isEmpty else { return }
            reserve(buffer.count)
            (base + used).update(from: start, count: buffer.count)
            used += buffer.count
        }

        mutating func append(_ bytes: [UInt8]) {
            bytes.withUnsafeBufferPointer { append($0) }
        }

        mutating func count(_ value: Int) {
            reserve(10)
            var rest = UInt64(value)
            while rest >= 0x80 {
                base[used] = UInt8(truncatingIfNeeded: rest) | 0x80
                used += 1
                rest >>= 7
            }
            base[used] = UInt8(rest)
            used += 1
        }

        /// A string: its UTF-8 read in place (no copy of the string, as `withUTF8` on a `var` would make).
        mutating func string(_ value: String) {
            if value.utf8.withContiguousStorageIfAvailable({ lengthPrefixed($0) }) != nil { return }
            var value = value  // not contiguous UTF-8 (a foreign string): made so, once
            value.withUTF8 { lengthPrefixed($0) }
        }

        private mutating func lengthPrefixed(_ utf8: UnsafeBufferPointer<UInt8>) {
            count(utf8.count)
            append(utf8)
        }

        // Recursion follows the graph, whose depth extraction bounds (ExtractionRequest.Limits.maxDepth). The arrays are
        // read in place (through their buffers), not element by element copied: the copies' retains and releases were
        // half of the worker's encoding time in perf.
        mutating func node(_ node: borrowing SchemaNode) {
            node.types.withUnsafeBufferPointer { types in
                count(types.count)
                for index in types.indices { string(types[index]) }
            }
            if let id = node.id {
                byte(1)
                string(id)
            } else {
                byte(0)
            }
            byte(node.syntax == .microdata ? 1 : 0)
            node.properties.withUnsafeBufferPointer { properties in
                count(properties.count)
                for index in properties.indices {
                    string(properties[index].name)
                    properties[index].values.withUnsafeBufferPointer { values in
                        count(values.count)
                        for position in values.indices {
                            switch values[position] {
                            case .text(let text):
                                byte(0)
                                string(text)
                            case .node(let nested):
                                byte(1)
                                self.node(nested)
                            }
                        }
                    }
                }
            }
        }
    }

    // MARK: - Reading

    static func decode(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> MarkupGraph {
        try bytes.withUnsafeBufferPointer { buffer throws(Malformed) -> MarkupGraph in
            var reader = Reader(buffer: buffer)
            guard try reader.byte() == version else { throw Malformed("unknown graph encoding version") }
            var nodes: [SchemaNode] = []
            let nodeCount = try reader.count()
            nodes.reserveCapacity(nodeCount)
            for _ in 0..<nodeCount { nodes.append(try reader.node(depth: 1)) }
            var diagnostics: [Diagnostic] = []
            let diagnosticCount = try reader.count()
            diagnostics.reserveCapacity(diagnosticCount)
            for _ in 0..<diagnosticCount {
                let severity: Diagnostic.Severity
                switch try reader.byte() {
                case 0: severity = .warning
                case 1: severity = .error
                default: throw Malformed("unknown diagnostic severity")
                }
                let code = try reader.string()
                let path = try reader.string()
                let message = try reader.string()
                diagnostics.append(Diagnostic(severity, Diagnostic.Code(code), path: path, message))
            }
            guard reader.isAtEnd else { throw Malformed("bytes left after the graph") }
            return MarkupGraph(nodes: nodes, diagnostics: diagnostics)
        }
    }

    private struct Reader {
        let buffer: UnsafeBufferPointer<UInt8>
        var offset = 0

        var isAtEnd: Bool { offset == buffer.count }

        mutating func byte() throws(Malformed) -> UInt8 {
            guard offset < buffer.count else { throw Malformed("the graph ends early") }
            defer { offset += 1 }
            return buffer[offset]
        }

        /// A count or length: each element takes at least one byte, so it cannot exceed what is left.
        mutating func count() throws(Malformed) -> Int {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                value |= UInt64(next & 0x7F) << shift
                if next & 0x80 == 0 { break }
                shift += 7
                guard shift <= 63 else { throw Malformed("a length is too long") }
            }
            guard value <= UInt64(buffer.count - offset) else { throw Malformed("a length runs past the end") }
            return Int(value)
        }

        mutating func string() throws(Malformed) -> String {
            let length = try count()
            let slice = UnsafeBufferPointer(rebasing: buffer[offset..<(offset + length)])
            offset += length
            // UTF8Span rather than String(validating:as:), whose generic path looked up type metadata for every
            // string (a tenth of the gateway's decoding time in perf).
            guard let text = try? UTF8Span(validating: slice.span) else { throw Malformed("a string is not UTF-8") }
            return String(copying: text)
        }

        mutating func node(depth: Int) throws(Malformed) -> SchemaNode {
            guard depth <= GraphWire.maximumDepth else {
                throw Malformed("nodes nest deeper than \(GraphWire.maximumDepth)")
            }
            let typeCount = try count()
            var types: [String] = []
            types.reserveCapacity(typeCount)
            for _ in 0..<typeCount { types.append(try string()) }
            let id: String?
            switch try byte() {
            case 0: id = nil
            case 1: id = try string()
            default: throw Malformed("bad id marker")
            }
            let syntax: SchemaNode.Syntax
            switch try byte() {
            case 0: syntax = .jsonLD
            case 1: syntax = .microdata
            default: throw Malformed("unknown syntax")
            }
            let propertyCount = try count()
            var properties: [SchemaProperty] = []
            properties.reserveCapacity(propertyCount)
            for _ in 0..<propertyCount {
                let name = try string()
                let valueCount = try count()
                var values: [SchemaValue] = []
                values.reserveCapacity(valueCount)
                for _ in 0..<valueCount {
                    switch try byte() {
                    case 0: values.append(.text(try string()))
                    case 1: values.append(.node(try node(depth: depth + 1)))
                    default: throw Malformed("unknown value tag")
                    }
                }
                properties.append(SchemaProperty(name: name, values: values))
            }
            return SchemaNode(types: types, id: id, properties: properties, syntax: syntax)
        }
    }
}
