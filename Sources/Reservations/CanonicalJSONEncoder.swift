package import Foundation

/// The gateway's canonical JSON, written fast: byte for byte what Foundation's `JSONEncoder` writes with
/// `outputFormatting = [.sortedKeys, .withoutEscapingSlashes]` and the chosen date strategy, for any `Encodable`.
///
/// The form matters where the bytes are kept or signed: a stored payload is compared byte for byte to tell an
/// unchanged re-sent email, and a webhook's signature covers its body. `CanonicalJSONEncoderTests` compare the
/// two encoders over generated values.
///
/// Foundation builds a tree of boxed values for every document, then sorts and writes it. This writes each value
/// once into one buffer as the `Encodable` hands it over; an object's members are re-ordered in place when its
/// `encode(to:)` returns, only when they did not come sorted. ``JSONValue`` (a reservation's markup, most of a
/// payload) is written directly, without the `Encoder` protocol. What the fast path does not handle the way
/// Foundation does (`Data`, `URL`, `Decimal`, nested containers, `superEncoder`) makes it hand the whole value to
/// Foundation's encoder, so the output is the same either way.
package struct CanonicalJSONEncoder: Sendable {
    /// How a `Date` is written: as `JSONEncoder.DateEncodingStrategy`'s case of the same name.
    package enum DateEncoding: Sendable {
        /// `Date`'s own encoding: seconds since 2001-01-01 as a number (what `JSONEncoder` does by default).
        case deferredToDate
        /// Milliseconds since 1970 as a number.
        case millisecondsSince1970
        /// ISO 8601 in UTC, to the second (`2026-11-21T10:50:15Z`).
        case iso8601
    }

    package var dateEncoding: DateEncoding

    package init(dateEncoding: DateEncoding = .deferredToDate) {
        self.dateEncoding = dateEncoding
    }

    /// `value`'s canonical JSON.
    /// - Throws: `EncodingError.invalidValue` as `JSONEncoder` does: a non-finite number, a value that encodes
    ///   nothing.
    package func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let writer = CanonicalJSONWriter(dateEncoding: dateEncoding)
        try writer.writeTopLevel(value)
        if !writer.needsFoundation { return writer.bytes }
        return Array(try foundationEncoder.encode(value))
    }

    /// `value`'s canonical JSON as `Data`.
    package func encodeData<Value: Encodable>(_ value: Value) throws -> Data {
        Data(try encode(value))
    }

    /// The Foundation encoder this one writes the same bytes as (the reference, and the way out for what the fast
    /// path does not handle).
    package var foundationEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch dateEncoding {
        case .deferredToDate: encoder.dateEncodingStrategy = .deferredToDate
        case .millisecondsSince1970: encoder.dateEncodingStrategy = .millisecondsSince1970
        case .iso8601: encoder.dateEncodingStrategy = .iso8601
        }
        return encoder
    }
}

/// The buffer one encoding writes into, and the writing of scalars, strings and ``JSONValue``s.
final class CanonicalJSONWriter {
    // Unchecked: the writer belongs to one encoding on one thread, and the checks were a fifth of its time.
    @exclusivity(unchecked) var bytes: [UInt8] = []
    /// Where an object's members are put in order before they go back.
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    let dateEncoding: CanonicalJSONEncoder.DateEncoding
    /// Set when the value used something the fast path leaves to Foundation; the caller then encodes it there.
    var needsFoundation = false

    init(dateEncoding: CanonicalJSONEncoder.DateEncoding) {
        self.dateEncoding = dateEncoding
        bytes.reserveCapacity(1024)
    }

    func writeTopLevel<Value: Encodable>(_ value: Value) throws {
        if try writeDirectly(value, codingPath: { [] }) { return }
        let encoder = CanonicalJSONNodeEncoder(writer: self, parent: nil, key: nil)
        try value.encode(to: encoder)
        if encoder.state == .empty {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "Top-level \(Value.self) did not encode any values."))
        }
        encoder.finish()
    }

    /// Writes `value` under `parent` (an object's member or an array's element).
    func write<Value: Encodable>(_ value: Value, parent: CanonicalJSONNodeEncoder, key: (any CodingKey)?) throws {
        if try writeDirectly(value, codingPath: { parent.codingPath + (key.map { [$0] } ?? []) }) { return }
        let encoder = CanonicalJSONNodeEncoder(writer: self, parent: parent, key: key)
        try value.encode(to: encoder)
        encoder.finish()
    }

    /// Writes the values the writer knows without the `Encoder` protocol; false for any other.
    private func writeDirectly<Value: Encodable>(_ value: Value, codingPath: () -> [any CodingKey]) throws -> Bool {
        if Value.self == String.self {
            writeString(unsafeBitCast(value, to: String.self))
        } else if Value.self == JSONValue.self {
            write(unsafeBitCast(value, to: JSONValue.self))
        } else if Value.self == Int.self {
            writeInteger(unsafeBitCast(value, to: Int.self))
        } else if Value.self == Bool.self {
            writeBool(unsafeBitCast(value, to: Bool.self))
        } else if Value.self == Double.self {
            try writeFloat(unsafeBitCast(value, to: Double.self), codingPath: codingPath)
        } else if Value.self == Date.self {
            try writeDate(unsafeBitCast(value, to: Date.self), codingPath: codingPath)
        } else if Value.self == Int64.self {
            writeInteger(unsafeBitCast(value, to: Int64.self))
        } else if Value.self == Data.self || Value.self == URL.self || Value.self == Decimal.self {
            // Foundation writes these its own way (base64, the URL's text, the decimal's digits).
            needsFoundation = true
            writeNull()
        } else {
            return false
        }
        return true
    }

    func writeDate(_ date: Date, codingPath: () -> [any CodingKey]) throws {
        switch dateEncoding {
        case .deferredToDate: try writeFloat(date.timeIntervalSinceReferenceDate, codingPath: codingPath)
        case .millisecondsSince1970: try writeFloat(1000.0 * date.timeIntervalSince1970, codingPath: codingPath)
        case .iso8601: writeString(date.formatted(.iso8601))
        }
    }

    func write(_ value: JSONValue) {
        switch value {
        case .null: writeNull()
        case .bool(let flag): writeBool(flag)
        case .string(let text): writeString(text)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in members.sorted(by: { Self.precedes($0.key, $1.key) }) {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                write(member)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Foundation's order of sorted keys: by their UTF-8 bytes.
    static func precedes(_ first: String, _ second: String) -> Bool {
        var first = first
        var second = second
        return first.withUTF8 { a in
            second.withUTF8 { b in
                let common = min(a.count, b.count)
                if common > 0, let x = a.baseAddress, let y = b.baseAddress {
                    let order = memcmp(x, y, common)
                    if order != 0 { return order < 0 }
                }
                return a.count < b.count
            }
        }
    }

    func writeNull() {
        bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
    }

    func writeBool(_ flag: Bool) {
        if flag {
            bytes.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        } else {
            bytes.append(
                contentsOf: [UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e")])
        }
    }

    /// An integer's decimal digits, as its `description`.
    func writeInteger<Integer: FixedWidthInteger>(_ value: Integer) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        // Negative values count down, so that `Integer.min` needs no negation.
        var remaining = value
        let negative = value < 0
        if negative { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        while remaining != 0 {
            let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: negative ? 0 &- digit : digit))
            remaining = quotient
        }
        bytes[start...].reverse()
    }

    /// A number as Foundation writes it: its `description` without a trailing `.0`; a non-finite one cannot be
    /// written.
    func writeFloat<Float: BinaryFloatingPoint & CustomStringConvertible>(
        _ value: Float, codingPath: () -> [any CodingKey]
    ) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: codingPath(), debugDescription: "Unable to encode \(Float.self).\(value) directly in JSON."))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\b \f \n \r \t` or `\u00xx`, everything else
    /// (`/`, non-ASCII) as its UTF-8 bytes.
    /// - Returns: Whether anything was escaped (else the bytes between the quotes are the text's UTF-8).
    @discardableResult
    func writeString(_ text: String) -> Bool {
        bytes.append(UInt8(ascii: "\""))
        var escaped = false
        var text = text
        text.withUTF8 { utf8 in
            var mark = 0
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                if index > mark { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index])) }
                escaped = true
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    bytes.append(Self.hexDigit(byte >> 4))
                    bytes.append(Self.hexDigit(byte & 0x0F))
                }
                index += 1
                mark = index
            }
            if utf8.count > mark { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...])) }
        }
        bytes.append(UInt8(ascii: "\""))
        return escaped
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Puts an object's members, written from `members[0].start` to the end of the buffer (before its closing
    /// brace), in key order; of members with the same key, the last written is kept (as Foundation keeps it).
    func sortMembers(_ members: [CanonicalJSONNodeEncoder.Member]) {
        let end = bytes.count
        let order: [Int]? = bytes.withUnsafeBufferPointer { buffer in
            // Keys are compared where they were written, unless one of the two had to be escaped.
            func precedes(_ first: Int, _ second: Int) -> Bool {
                let a = members[first]
                let b = members[second]
                guard a.isPlain && b.isPlain else { return Self.precedes(a.key, b.key) }
                let common = min(a.keyLength, b.keyLength)
                if common > 0 {
                    let order = memcmp(buffer.baseAddress! + a.start + 1, buffer.baseAddress! + b.start + 1, common)
                    if order != 0 { return order < 0 }
                }
                return a.keyLength < b.keyLength
            }
            var sorted = true
            for index in members.indices.dropFirst() where !precedes(index - 1, index) {
                sorted = false
                break
            }
            if sorted { return nil }
            // Stable: among equal keys the later member comes last, and is the one kept.
            return members.indices.sorted { precedes($0, $1) || (!precedes($1, $0) && $0 < $1) }
        }
        guard let order else { return }
        scratch.removeAll(keepingCapacity: true)
        for (position, index) in order.enumerated() {
            if position + 1 < order.count, members[order[position + 1]].key == members[index].key { continue }
            if !scratch.isEmpty { scratch.append(UInt8(ascii: ",")) }
            // A member runs to the comma before the next one written, or to the end.
            let upper = index + 1 < members.count ? members[index + 1].start - 1 : end
            scratch.append(contentsOf: bytes[members[index].start..<upper])
        }
        bytes.removeSubrange(members[0].start...)
        bytes.append(contentsOf: scratch)
    }
}

/// The `Encoder` of one value being written: its containers append to the writer's buffer.
final class CanonicalJSONNodeEncoder: Encoder {
    enum State { case empty, object, array, single }
    /// A member of an object: its key and where its `"key":` begins in the buffer.
    struct Member {
        var key: String
        var start: Int
        /// The key's UTF-8 length, when it is written unescaped.
        var keyLength: Int
        var isPlain: Bool
    }

    let writer: CanonicalJSONWriter
    let parent: CanonicalJSONNodeEncoder?
    let key: (any CodingKey)?
    @exclusivity(unchecked) var state = State.empty
    @exclusivity(unchecked) var members: [Member] = []
    @exclusivity(unchecked) var count = 0

    init(writer: CanonicalJSONWriter, parent: CanonicalJSONNodeEncoder?, key: (any CodingKey)?) {
        self.writer = writer
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var node: CanonicalJSONNodeEncoder? = self
        while let current = node {
            if let key = current.key { path.append(key) }
            node = current.parent
        }
        return path.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch state {
        case .empty:
            state = .object
            writer.bytes.append(UInt8(ascii: "{"))
        case .object: break
        case .array, .single: writer.needsFoundation = true
        }
        return KeyedEncodingContainer(CanonicalJSONKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch state {
        case .empty:
            state = .array
            writer.bytes.append(UInt8(ascii: "["))
        case .array: break
        case .object, .single: writer.needsFoundation = true
        }
        return CanonicalJSONUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        CanonicalJSONSingleValueContainer(encoder: self)
    }

    /// Closes the value once its `encode(to:)` has returned: an object's members go in key order.
    func finish() {
        switch state {
        case .empty: writer.bytes.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])
        case .single: break
        case .array: writer.bytes.append(UInt8(ascii: "]"))
        case .object:
            if members.count > 1 { writer.sortMembers(members) }
            writer.bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Starts a member: the comma before it, its key.
    func beginMember(_ key: some CodingKey) {
        if !members.isEmpty { writer.bytes.append(UInt8(ascii: ",")) }
        let name = key.stringValue
        let start = writer.bytes.count
        let escaped = writer.writeString(name)
        members.append(Member(key: name, start: start, keyLength: writer.bytes.count - start - 2, isPlain: !escaped))
        writer.bytes.append(UInt8(ascii: ":"))
    }

    /// Starts an element: the comma before it.
    func beginElement() {
        if count > 0 { writer.bytes.append(UInt8(ascii: ",")) }
        count += 1
    }

    /// Starts the one value of a single value container.
    func beginSingleValue() {
        if state != .empty { writer.needsFoundation = true }
        state = .single
    }

    /// A container nested in another, or a super encoder: the fast path leaves these to Foundation (the gateway's
    /// types use none). What is written to it goes to a writer nobody reads.
    func detached() -> CanonicalJSONNodeEncoder {
        writer.needsFoundation = true
        return CanonicalJSONNodeEncoder(
            writer: CanonicalJSONWriter(dateEncoding: writer.dateEncoding), parent: nil, key: nil)
    }
}

struct CanonicalJSONKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: CanonicalJSONNodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var writer: CanonicalJSONWriter { encoder.writer }

    func encodeNil(forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeNull()
    }

    func encode(_ value: Bool, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeBool(value)
    }

    func encode(_ value: String, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeString(value)
    }

    func encode(_ value: Double, forKey key: Key) throws {
        encoder.beginMember(key)
        try writer.writeFloat(value) { encoder.codingPath + [key] }
    }

    func encode(_ value: Float, forKey key: Key) throws {
        encoder.beginMember(key)
        try writer.writeFloat(value) { encoder.codingPath + [key] }
    }

    func encode(_ value: Int, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: Int8, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: Int16, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: Int32, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: Int64, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: UInt, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: UInt8, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: UInt16, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: UInt32, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode(_ value: UInt64, forKey key: Key) throws {
        encoder.beginMember(key)
        writer.writeInteger(value)
    }

    func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        encoder.beginMember(key)
        try writer.write(value, parent: encoder, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.detached().container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.detached().unkeyedContainer()
    }

    func superEncoder() -> any Encoder { encoder.detached() }

    func superEncoder(forKey key: Key) -> any Encoder { encoder.detached() }
}

struct CanonicalJSONUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: CanonicalJSONNodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.count }
    private var writer: CanonicalJSONWriter { encoder.writer }

    /// The key of the element about to be written, for an error's coding path.
    private var elementKey: any CodingKey { IndexKey(intValue: encoder.count - 1) }

    func encodeNil() throws {
        encoder.beginElement()
        writer.writeNull()
    }

    func encode(_ value: Bool) throws {
        encoder.beginElement()
        writer.writeBool(value)
    }

    func encode(_ value: String) throws {
        encoder.beginElement()
        writer.writeString(value)
    }

    func encode(_ value: Double) throws {
        encoder.beginElement()
        try writer.writeFloat(value) { encoder.codingPath + [elementKey] }
    }

    func encode(_ value: Float) throws {
        encoder.beginElement()
        try writer.writeFloat(value) { encoder.codingPath + [elementKey] }
    }

    func encode(_ value: Int) throws {
        encoder.beginElement()
        writer.writeInteger(value)
    }

    func encode(_ value: Int64) throws {
        encoder.beginElement()
        writer.writeInteger(value)
    }

    func encode<Value: Encodable>(_ value: Value) throws {
        encoder.beginElement()
        try writer.write(value, parent: encoder, key: elementKey)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        encoder.detached().container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { encoder.detached().unkeyedContainer() }

    func superEncoder() -> any Encoder { encoder.detached() }
}

struct CanonicalJSONSingleValueContainer: SingleValueEncodingContainer {
    let encoder: CanonicalJSONNodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var writer: CanonicalJSONWriter { encoder.writer }

    func encodeNil() throws {
        encoder.beginSingleValue()
        writer.writeNull()
    }

    func encode(_ value: Bool) throws {
        encoder.beginSingleValue()
        writer.writeBool(value)
    }

    func encode(_ value: String) throws {
        encoder.beginSingleValue()
        writer.writeString(value)
    }

    func encode(_ value: Double) throws {
        encoder.beginSingleValue()
        try writer.writeFloat(value) { encoder.codingPath }
    }

    func encode(_ value: Float) throws {
        encoder.beginSingleValue()
        try writer.writeFloat(value) { encoder.codingPath }
    }

    func encode(_ value: Int) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: Int8) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: Int16) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: Int32) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: Int64) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: UInt) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: UInt8) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: UInt16) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: UInt32) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode(_ value: UInt64) throws {
        encoder.beginSingleValue()
        writer.writeInteger(value)
    }

    func encode<Value: Encodable>(_ value: Value) throws {
        encoder.beginSingleValue()
        try writer.write(value, parent: encoder, key: nil)
    }
}

/// An array element's place in a coding path.
private struct IndexKey: CodingKey {
    var stringValue: String { "Index \(intValue ?? 0)" }
    var intValue: Int?
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// Canonical JSON written member by member, without the `Encoder` protocol, for the few types the store writes with
/// every ingestion (a version's provenance, the log's outcomes): the same bytes ``CanonicalJSONEncoder`` writes for
/// the same value, provided the caller hands an object's members over in sorted key order (by their UTF-8 bytes) and
/// leaves out what `encodeIfPresent` would. Each type's test compares the two over generated values.
package struct CanonicalJSONBuilder {
    private let writer: CanonicalJSONWriter
    /// Whether the next value or key follows another in its container.
    private var follows = false

    package init(dateEncoding: CanonicalJSONEncoder.DateEncoding = .deferredToDate) {
        writer = CanonicalJSONWriter(dateEncoding: dateEncoding)
    }

    /// What was written.
    package var bytes: [UInt8] { writer.bytes }

    package mutating func beginObject() { open(UInt8(ascii: "{")) }
    package mutating func endObject() { close(UInt8(ascii: "}")) }
    package mutating func beginArray() { open(UInt8(ascii: "[")) }
    package mutating func endArray() { close(UInt8(ascii: "]")) }

    /// An object member's key; its value is written next.
    package mutating func key(_ name: String) {
        separate()
        writer.writeString(name)
        writer.bytes.append(UInt8(ascii: ":"))
        follows = false
    }

    package mutating func string(_ text: String) {
        separate()
        writer.writeString(text)
        follows = true
    }

    package mutating func integer(_ value: Int) {
        separate()
        writer.writeInteger(value)
        follows = true
    }

    package mutating func bool(_ flag: Bool) {
        separate()
        writer.writeBool(flag)
        follows = true
    }

    /// A date, in the builder's date encoding. - Throws: `EncodingError.invalidValue` for a non-finite one.
    package mutating func date(_ date: Date) throws {
        separate()
        try writer.writeDate(date, codingPath: { [] })
        follows = true
    }

    /// An array of strings.
    package mutating func strings(_ texts: [String]) {
        beginArray()
        for text in texts { string(text) }
        endArray()
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        writer.bytes.append(bracket)
        follows = false
    }

    private mutating func close(_ bracket: UInt8) {
        writer.bytes.append(bracket)
        follows = true
    }

    private mutating func separate() {
        if follows { writer.bytes.append(UInt8(ascii: ",")) }
    }
}
