internal import CLibXML2

/// An HTML document parsed by libxml2's HTML parser, kept as a flat index of its elements in tree
/// order with only what extraction reads: a few attributes and the text.
///
/// libxml2 parses (`htmlParseDocument` with RECOVER, NONET, NOERROR, NOWARNING, IGNORE_ENC) and
/// reports elements and text through SAX callbacks; the tree it describes is the one libxml2's own
/// tree builder would make, but building libxml2's `xmlDoc` (a node and a copy per element, attribute
/// and text run) took half the time here, so the index is built straight from the callbacks:
///
/// - `elements` is pre-order; an element's descendants are `index + 1 ..< end`, so walking the tree
///   needs neither recursion nor pointers, whatever its depth.
/// - `text` holds every text run in document order, so an element's `textContent` is the slice
///   `textStart ..< textEnd`, read in constant time however often items ask for it.
/// - Attribute values are copied only for names extraction reads (`id`, `itemprop`, `itemref`,
///   `itemtype`, `itemid`, and the one value attribute of a property element's kind).
///
/// libxml2's tree builder refuses to nest more than 256 elements and halts the parser; without it,
/// libxml2 2.9's own name stack would grow without bound, and each end tag searches it. The same
/// limit (`maxElementDepth`) is enforced here with `xmlStopParser`. The parser context is created
/// and freed within `init`, on every path; nothing of libxml2 outlives it. The callbacks reach the
/// index being built through a raw pointer (the context's `userData`), not a class reference, which
/// spares them Swift's dynamic exclusivity checks (a sixth of the time).
struct HTMLDocument {
    /// What an element carries that extraction cares about.
    struct Flags: OptionSet {
        let rawValue: UInt8
        static let itemscope = Flags(rawValue: 1 << 0)
        static let itemprop = Flags(rawValue: 1 << 1)
        static let itemref = Flags(rawValue: 1 << 2)
        static let id = Flags(rawValue: 1 << 3)
        static let jsonLDScript = Flags(rawValue: 1 << 4)
    }

    /// Where a Microdata property's value comes from (WHATWG HTML §5.2.4), by element name.
    enum Kind: UInt8 {
        case meta, source, link, object, value, time, other
    }

    /// Attributes whose values are kept.
    enum AttributeName: UInt8 {
        case id, itemprop, itemref, itemtype, itemid
        /// The attribute that holds the element's property value: `content`, `src`, `href`, `data`,
        /// `value` or `datetime`, by `Kind`.
        case value
    }

    /// An element in tree order.
    struct Element {
        /// One past its last descendant.
        var end: Int32
        var textStart: Int32
        var textEnd: Int32
        var attributeStart: Int32
        var attributeCount: UInt8
        var flags: Flags
        var kind: Kind
    }

    struct StoredAttribute {
        var name: AttributeName
        var start: Int32
        var count: Int32
    }

    /// Why libxml2 stopped before the end of the input.
    enum Stop: Equatable {
        case tooDeep
        case other(code: Int32)
    }

    let elements: [Element]
    /// All text, in document order.
    let text: [UInt8]
    private let attributes: [StoredAttribute]
    private let attributeBytes: [UInt8]
    /// Indices of the `<script type="application/ld+json">` elements, in tree order.
    let jsonLDScripts: [Int]
    let hasItemscope: Bool
    /// Set when libxml2 stopped early: the index holds only what came before.
    let stop: Stop?

    /// libxml2 must be initialized once before threads use it (the documentation of `xmlInitParser`).
    private static let libxml2Initialized: Bool = {
        xmlInitParser()
        return true
    }()

    /// RECOVER, NONET, NOERROR and NOWARNING as usual; IGNORE_ENC because `HTMLInput` has made the
    /// input UTF-8 already; NODEFDTD because there is no tree to add a doctype to.
    private static let options: Int32 = {
        let options: [htmlParserOption] = [
            HTML_PARSE_RECOVER, HTML_PARSE_NONET, HTML_PARSE_NOERROR, HTML_PARSE_NOWARNING, HTML_PARSE_IGNORE_ENC,
            HTML_PARSE_NODEFDTD,
        ]
        return Int32(options.reduce(0) { $0 | $1.rawValue })
    }()

    /// Parses `utf8` (valid UTF-8 without NUL: see `HTMLInput`) and indexes it; nil for empty input.
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>, maxElementDepth: Int) {
        _ = Self.libxml2Initialized
        guard let base = bytes.baseAddress, !bytes.isEmpty, bytes.count < Int(Int32.max) else { return nil }
        let created = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            htmlCreateMemoryParserCtxt($0, Int32(bytes.count))
        }
        guard let context = created, let sax = context.pointee.sax else {
            if let created { htmlFreeParserCtxt(created) }
            return nil
        }
        let builder = UnsafeMutablePointer<Builder>.allocate(capacity: 1)
        builder.initialize(to: Builder(context: context, maxElementDepth: maxElementDepth))
        defer {
            builder.deinitialize(count: 1)
            builder.deallocate()
            if let document = context.pointee.myDoc {  // not made without a startDocument handler
                xmlFreeDoc(document)
                context.pointee.myDoc = nil
            }
            htmlFreeParserCtxt(context)
        }
        // The input is UTF-8; without this the HTML parser reads it as ISO-8859-1 at the first non-ASCII byte.
        _ = clibxml2_declare_utf8(context)
        builder.pointee.elements.reserveCapacity(bytes.count / 64)
        builder.pointee.text.reserveCapacity(bytes.count / 2)
        sax.pointee = Self.handler
        context.pointee.userData = UnsafeMutableRawPointer(builder)
        _ = htmlCtxtUseOptions(context, Self.options)
        _ = htmlParseDocument(context)
        if builder.pointee.stop == nil, context.pointee.disableSAX != 0 {
            builder.pointee.stop = .other(code: context.pointee.errNo)
        }
        // A halted parse leaves elements open; they end where the input was left.
        while let index = builder.pointee.open.popLast() { builder.pointee.close(index) }
        elements = builder.pointee.elements
        text = builder.pointee.text
        attributes = builder.pointee.attributes
        attributeBytes = builder.pointee.attributeBytes
        jsonLDScripts = builder.pointee.jsonLDScripts
        hasItemscope = builder.pointee.hasItemscope
        stop = builder.pointee.stop
    }

    // MARK: SAX

    /// The callbacks; `context` points to the `Builder` (the parser context's `userData`).
    private static var handler: htmlSAXHandler {
        var handler = htmlSAXHandler()
        handler.initialized = 1
        handler.startElement = { context, name, attributes in
            guard let context, let name else { return }
            context.assumingMemoryBound(to: Builder.self).pointee.start(name, attributes)
        }
        handler.endElement = { context, _ in
            guard let context else { return }
            let builder = context.assumingMemoryBound(to: Builder.self)
            if let index = builder.pointee.open.popLast() { builder.pointee.close(index) }
        }
        let characters: charactersSAXFunc = { context, bytes, count in
            guard let context, let bytes, count > 0 else { return }
            context.assumingMemoryBound(to: Builder.self).pointee.text
                .append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
        }
        handler.characters = characters
        handler.cdataBlock = characters  // script and style content
        handler.ignorableWhitespace = characters  // whitespace is text in the DOM
        return handler
    }

}

/// The index while libxml2 reports it.
private struct Builder {
    typealias Element = HTMLDocument.Element
    typealias Flags = HTMLDocument.Flags

    let context: htmlParserCtxtPtr
    let maxElementDepth: Int
    var elements: [Element] = []
    var text: [UInt8] = []
    var attributes: [HTMLDocument.StoredAttribute] = []
    var attributeBytes: [UInt8] = []
    var jsonLDScripts: [Int] = []
    var hasItemscope = false
    var stop: HTMLDocument.Stop?
    var open: [Int] = []

    init(context: htmlParserCtxtPtr, maxElementDepth: Int) {
        self.context = context
        self.maxElementDepth = maxElementDepth
    }

    mutating func close(_ index: Int) {
        elements[index].end = Int32(truncatingIfNeeded: elements.count)
        elements[index].textEnd = Int32(truncatingIfNeeded: text.count)
    }

    mutating func start(_ name: UnsafePointer<xmlChar>, _ pairs: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard open.count < maxElementDepth else {
            stop = .tooDeep
            xmlStopParser(context)
            return
        }
        let kind = HTMLDocument.kind(name)
        let isScript = name[0] == UInt8(ascii: "s") && HTMLDocument.equals(name, "script")
        var flags: Flags = []
        // A value pointer is nil for an attribute written without a value (`itemscope`): empty.
        var id: UnsafePointer<xmlChar>?
        var itemprop: UnsafePointer<xmlChar>?
        var itemref: UnsafePointer<xmlChar>?
        var itemtype: UnsafePointer<xmlChar>?
        var itemid: UnsafePointer<xmlChar>?
        var value: UnsafePointer<xmlChar>?
        var has: (itemtype: Bool, itemid: Bool, value: Bool) = (false, false, false)
        if let pairs {
            var index = 0
            while let attribute = pairs[index] {
                let attributeValue = pairs[index + 1]
                index += 2
                switch attribute[0] {
                case UInt8(ascii: "i"):
                    if attribute[1] == UInt8(ascii: "d"), attribute[2] == 0 {
                        if let attributeValue, attributeValue[0] != 0 {
                            flags.insert(.id)
                            id = attributeValue
                        }
                    } else if attribute[1] == UInt8(ascii: "t"), attribute[2] == UInt8(ascii: "e"),
                        attribute[3] == UInt8(ascii: "m")
                    {
                        if HTMLDocument.equals(attribute, "itemscope") {
                            flags.insert(.itemscope)
                        } else if HTMLDocument.equals(attribute, "itemprop") {
                            flags.insert(.itemprop)
                            itemprop = attributeValue
                        } else if HTMLDocument.equals(attribute, "itemref") {
                            flags.insert(.itemref)
                            itemref = attributeValue
                        } else if HTMLDocument.equals(attribute, "itemtype") {
                            itemtype = attributeValue
                            has.itemtype = true
                        } else if HTMLDocument.equals(attribute, "itemid") {
                            itemid = attributeValue
                            has.itemid = true
                        }
                    }
                case UInt8(ascii: "t"):
                    if isScript, HTMLDocument.equals(attribute, "type"), let attributeValue,
                        HTMLDocument.isJSONLD(attributeValue)
                    {
                        flags.insert(.jsonLDScript)
                    }
                default:
                    if kind != .other, !has.value, HTMLDocument.isValueAttribute(attribute, of: kind) {
                        value = attributeValue
                        has.value = true
                    }
                }
            }
        }
        let index = elements.count
        let attributeStart = attributes.count
        if flags.contains(.id) { store(.id, id) }
        if flags.contains(.itemprop) { store(.itemprop, itemprop) }
        if flags.contains(.itemscope) || flags.contains(.itemprop) {
            if flags.contains(.itemref) { store(.itemref, itemref) }
            if has.itemtype { store(.itemtype, itemtype) }
            if has.itemid { store(.itemid, itemid) }
            if has.value { store(.value, value) }
        }
        elements.append(
            Element(
                end: Int32(truncatingIfNeeded: index + 1), textStart: Int32(truncatingIfNeeded: text.count),
                textEnd: Int32(truncatingIfNeeded: text.count),
                attributeStart: Int32(truncatingIfNeeded: attributeStart),
                attributeCount: UInt8(attributes.count - attributeStart), flags: flags, kind: kind))
        open.append(index)
        if flags.contains(.jsonLDScript) { jsonLDScripts.append(index) }
        if flags.contains(.itemscope) { hasItemscope = true }
    }

    private mutating func store(_ name: HTMLDocument.AttributeName, _ value: UnsafePointer<xmlChar>?) {
        let start = attributeBytes.count
        var length = 0
        if let value {
            length = Int(xmlStrlen(value))
            attributeBytes.append(contentsOf: UnsafeBufferPointer(start: value, count: length))
        }
        attributes.append(
            HTMLDocument.StoredAttribute(
                name: name, start: Int32(truncatingIfNeeded: start), count: Int32(truncatingIfNeeded: length)))
    }

}

extension HTMLDocument {
    // MARK: Names

    /// Whether the NUL-terminated `name` is `literal`.
    @inline(__always)
    static func equals(_ name: UnsafePointer<xmlChar>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        let bytes = literal.utf8Start
        for offset in 0..<count where name[offset] != bytes[offset] { return false }
        return name[count] == 0
    }

    /// `type` is `application/ld+json`, compared ASCII case-insensitively, trimmed, parameters ignored.
    static func isJSONLD(_ value: UnsafePointer<xmlChar>) -> Bool {
        var start = 0
        while value[start].isASCIIWhitespace { start += 1 }
        let expected: StaticString = "application/ld+json"
        for offset in 0..<expected.utf8CodeUnitCount {
            var byte = value[start + offset]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if byte != expected.utf8Start[offset] { return false }  // also stops at the NUL
        }
        var end = start + expected.utf8CodeUnitCount
        while value[end].isASCIIWhitespace { end += 1 }
        return value[end] == 0 || value[end] == UInt8(ascii: ";")
    }

    /// libxml2's HTML parser lowercases element and attribute names.
    static func kind(_ name: UnsafePointer<xmlChar>) -> Kind {
        switch name[0] {
        case UInt8(ascii: "m"):
            return equals(name, "meta") ? .meta : equals(name, "meter") ? .value : .other
        case UInt8(ascii: "a"):
            return equals(name, "a") || equals(name, "area") ? .link : equals(name, "audio") ? .source : .other
        case UInt8(ascii: "l"):
            return equals(name, "link") ? .link : .other
        case UInt8(ascii: "i"):
            return equals(name, "img") || equals(name, "iframe") ? .source : .other
        case UInt8(ascii: "e"):
            return equals(name, "embed") ? .source : .other
        case UInt8(ascii: "s"):
            return equals(name, "source") ? .source : .other
        case UInt8(ascii: "t"):
            return equals(name, "track") ? .source : equals(name, "time") ? .time : .other
        case UInt8(ascii: "v"):
            return equals(name, "video") ? .source : .other
        case UInt8(ascii: "o"):
            return equals(name, "object") ? .object : .other
        case UInt8(ascii: "d"):
            return equals(name, "data") ? .value : .other
        default:
            return .other
        }
    }

    static func isValueAttribute(_ name: UnsafePointer<xmlChar>, of kind: Kind) -> Bool {
        switch kind {
        case .meta: return equals(name, "content")
        case .source: return equals(name, "src")
        case .link: return equals(name, "href")
        case .object: return equals(name, "data")
        case .value: return equals(name, "value")
        case .time: return equals(name, "datetime")
        case .other: return false
        }
    }

    // MARK: Reading

    /// The kept attribute `name` of element `index`, or nil when it has none.
    func attribute(_ index: Int, _ name: AttributeName) -> ArraySlice<UInt8>? {
        let element = elements[index]
        let start = Int(element.attributeStart)
        for stored in attributes[start..<start + Int(element.attributeCount)] where stored.name == name {
            return attributeBytes[Int(stored.start)..<Int(stored.start) + Int(stored.count)]
        }
        return nil
    }

    /// The element's `textContent`: all descendant text in tree order.
    func textContent(_ index: Int) -> ArraySlice<UInt8> {
        let element = elements[index]
        return text[Int(element.textStart)..<Int(element.textEnd)]
    }

    /// The element's child text content (DOM): its own text runs, without its descendants' text.
    func childText(_ index: Int) -> [UInt8] {
        let element = elements[index]
        var result: [UInt8] = []
        var position = Int(element.textStart)
        var child = index + 1
        while child < Int(element.end) {
            let childElement = elements[child]
            result += text[position..<Int(childElement.textStart)]
            position = Int(childElement.textEnd)
            child = Int(childElement.end)
        }
        result += text[position..<Int(element.textEnd)]
        return result
    }
}
