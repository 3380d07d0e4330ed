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
/// - Elements in a quoted or forwarded part of a message are flagged `quoted` (`QuoteMarker`,
///   `ForwardSeparator`).
/// - Misnested items: where libxml2 ends an item's or a property's element at a start tag that may
///   not nest in it (`<p itemscope>…<div itemprop>`) and the sender's own end tag for it (`</p>`)
///   follows while its parent is still open, the element's extent runs to that end tag, over the
///   complete siblings written in between (`misnested`). libxml2 reports the end tag with no open
///   element as an error (`serror`); whether an element was ended by a start tag is read from the
///   parser's input cursor at the end callback. The rule follows what the sender wrote: without a
///   later end tag, libxml2's reading stands (the HTML standard lets `</p>` be left out before a
///   `<div>`). libxml2 does not foster-parent: what is written inside a `<table>` stays in it.
///
/// libxml2's tree builder refuses to nest more than 256 elements and halts the parser; without it,
/// libxml2 2.9's own name stack would grow without bound, and each end tag searches it. The same
/// limit (`maxElementDepth`) is enforced here with `xmlStopParser`. The parser context is created
/// and freed within `init`, on every path; nothing of libxml2 outlives it. The callbacks reach the
/// index being built through a raw pointer (the context's `userData`), not a class reference, which
/// spares them Swift's dynamic exclusivity checks (a sixth of the time).
struct HTMLDocument: Equatable {
    /// What an element carries that extraction cares about.
    struct Flags: OptionSet {
        let rawValue: UInt8
        static let itemscope = Flags(rawValue: 1 << 0)
        static let itemprop = Flags(rawValue: 1 << 1)
        static let itemref = Flags(rawValue: 1 << 2)
        static let id = Flags(rawValue: 1 << 3)
        static let jsonLDScript = Flags(rawValue: 1 << 4)
        /// Inside a quoted or forwarded part of a message (see `QuoteMarker`).
        static let quoted = Flags(rawValue: 1 << 5)
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
    struct Element: Equatable {
        /// One past its last descendant.
        var end: Int32
        var textStart: Int32
        var textEnd: Int32
        var attributeStart: Int32
        var attributeCount: UInt8
        var flags: Flags
        var kind: Kind
        /// What a start tag can end it as (`ImpliedEnd.endable`); `.other` for most elements.
        var endable: ImpliedEnd.Kind
    }

    struct StoredAttribute: Equatable {
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
    /// Items and properties whose extent was taken from the source rather than from libxml2's tree
    /// (see "Misnested items" below), in the order their end tags came.
    let misnested: [Int]

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
        let builder = UnsafeMutablePointer<HTMLDocumentBuilder>.allocate(capacity: 1)
        builder.initialize(to: HTMLDocumentBuilder(context: context, maxElementDepth: maxElementDepth))
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
        self.init(finishing: &builder.pointee)
    }

    /// The index `builder` holds, once the reading (libxml2's or `HTMLIndexScanner`'s) has ended.
    init(finishing builder: inout HTMLDocumentBuilder) {
        // A halted parse leaves elements open; they end where the input was left.
        while !builder.open.isEmpty { builder.close(builder.popOpen()) }
        text = builder.text
        attributes = builder.attributes
        attributeBytes = builder.attributeBytes
        jsonLDScripts = builder.jsonLDScripts
        hasItemscope = builder.hasItemscope
        stop = builder.stop
        misnested = builder.misnested
        if let separator = ForwardSeparator.firstEnd(in: builder.text) {
            // Everything after a "-----Original Message-----" line is the earlier message.
            let start = Int32(truncatingIfNeeded: separator)
            for index in builder.elements.indices where builder.elements[index].textStart >= start {
                builder.elements[index].flags.insert(.quoted)
            }
        }
        elements = builder.elements
    }

    // MARK: SAX

    /// The callbacks; `context` points to the `Builder` (the parser context's `userData`).
    private static var handler: htmlSAXHandler {
        var handler = htmlSAXHandler()
        // SAX2's magic makes libxml2 report errors to `serror` (the HTML parser still calls the
        // SAX1-style startElement/endElement).
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElement = { context, name, attributes in
            guard let context, let name else { return }
            context.assumingMemoryBound(to: HTMLDocumentBuilder.self).pointee.start(name, attributes)
        }
        handler.endElement = { context, name in
            guard let context else { return }
            context.assumingMemoryBound(to: HTMLDocumentBuilder.self).pointee.libxml2Ended(name)
        }
        handler.serror = { context, error in
            // "Unexpected end tag : p": an end tag for no open element (libxml2 2.9 htmlParseEndTag).
            guard let context, let error, error.pointee.code == XML_ERR_TAG_NAME_MISMATCH.rawValue,
                error.pointee.str2 == nil, let name = error.pointee.str1
            else { return }
            let bytes = UnsafeRawPointer(name).assumingMemoryBound(to: xmlChar.self)  // str1 is a C string
            context.assumingMemoryBound(to: HTMLDocumentBuilder.self).pointee.unmatchedEndTag(bytes)
        }
        let characters: charactersSAXFunc = { context, bytes, count in
            guard let context, let bytes, count > 0 else { return }
            context.assumingMemoryBound(to: HTMLDocumentBuilder.self).pointee.text
                .append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
        }
        handler.characters = characters
        handler.cdataBlock = characters  // script and style content
        handler.ignorableWhitespace = characters  // whitespace is text in the DOM
        return handler
    }

}

/// The index while libxml2 reports it, or `HTMLIndexScanner` reports what libxml2 would.
struct HTMLDocumentBuilder {
    typealias Element = HTMLDocument.Element
    typealias Flags = HTMLDocument.Flags

    /// libxml2's parser, whose input cursor tells where an element ended; nil when `HTMLIndexScanner` reads.
    let context: htmlParserCtxtPtr?
    /// `HTMLIndexScanner`'s input and where it stands in it, as libxml2's cursor would (`scanned` only).
    var scanned: UnsafeBufferPointer<UInt8>?
    var scanCursor = 0
    let maxElementDepth: Int
    var elements: [Element] = []
    var text: [UInt8] = []
    var attributes: [HTMLDocument.StoredAttribute] = []
    var attributeBytes: [UInt8] = []
    var jsonLDScripts: [Int] = []
    var hasItemscope = false
    var stop: HTMLDocument.Stop?
    /// The elements libxml2 has open, innermost last: its tree.
    var stack: [Int] = []
    /// The elements open in the index, innermost last: a subsequence of `stack`, less the elements the
    /// HTML standard has ended where libxml2 has not (`ImpliedEnd`).
    var open: [Int] = []
    /// The names of the elements in `open` (interned in the parser's dictionary, valid while it parses),
    /// for `ImpliedEnd`'s rare searches.
    var openNames: [UnsafePointer<xmlChar>] = []
    /// How many elements of each `ImpliedEnd.Kind` are open in the index: most start tags need no search.
    var openKinds = ImpliedEnd.OpenCounts()
    /// `open.count` when the element-level quote marker that is open began (its element is `open[quoteDepth]`).
    var quoteDepth: Int?
    /// Set at a marker after which everything is quoted (Outlook's reply header).
    var quotedFromHere = false
    /// Items and properties that libxml2 ended at a start tag, before their own end tag, innermost
    /// last, while their parent is open: `depth` is their place in `open`, `name` their element name.
    var ended: [(index: Int, depth: Int, name: [UInt8])] = []
    var misnested: [Int] = []

    init(context: htmlParserCtxtPtr, maxElementDepth: Int) {
        self.context = context
        self.maxElementDepth = maxElementDepth
    }

    init(scanning bytes: UnsafeBufferPointer<UInt8>, maxElementDepth: Int) {
        context = nil
        scanned = bytes
        self.maxElementDepth = maxElementDepth
    }

    /// The input being read: its start, the cursor, its end.
    private func input() -> (base: UnsafePointer<UInt8>, cursor: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>)? {
        if let context {
            guard let input = context.pointee.input, let base = input.pointee.base, let cursor = input.pointee.cur,
                let end = input.pointee.end
            else { return nil }
            return (base, cursor, end)
        }
        guard let scanned, let base = scanned.baseAddress else { return nil }
        return (base, base + scanCursor, base + scanned.count)
    }

    /// Removes the innermost element open in the index, and its name.
    mutating func popOpen() -> Int {
        openNames.removeLast()
        return open.removeLast()
    }

    mutating func close(_ index: Int) {
        elements[index].end = Int32(truncatingIfNeeded: elements.count)
        elements[index].textEnd = Int32(truncatingIfNeeded: text.count)
        openKinds.closed(elements[index].endable)
        if let depth = quoteDepth, open.count <= depth { quoteDepth = nil }
    }

    // MARK: Misnested items

    /// libxml2 ends the innermost element it has open. Where the index has it open too, it ends there;
    /// where the index ended it already (`ImpliedEnd`), this is the sender's own end tag or libxml2's
    /// implied one: the former extends it as `unmatchedEndTag` does.
    mutating func libxml2Ended(_ name: UnsafePointer<xmlChar>?) {
        guard let index = stack.popLast() else { return }
        if open.last == index {
            _ = popOpen()
            let flags = elements[index].flags
            guard flags.contains(.itemscope) || flags.contains(.itemprop) || !ended.isEmpty else {
                close(index)  // the common case: nothing to remember, nothing remembered
                return
            }
            let isItem = flags.contains(.itemscope) || flags.contains(.itemprop)  // only those are remembered
            end(index, name: name, byStartTag: isItem && name.map(isEndedByStartTag) ?? false)
        } else if let name, isAtOwnEndTag(name), let position = ended.lastIndex(where: { $0.index == index }) {
            adopt(position)
        }
    }

    /// Element `index` (`name`) has ended in the index, at a start tag (`byStartTag`: libxml2 2.9 ends
    /// a `<p>` at a `<div>`, a `<b>` at a `<p>`, as the HTML standard's tree builder does) or not. An item
    /// or property ended at a start tag is remembered: if the sender's own end tag for it comes while
    /// its parent is still open, what was written up to that end tag belongs to it.
    mutating func end(_ index: Int, name: UnsafePointer<xmlChar>?, byStartTag: Bool) {
        close(index)
        while let last = ended.last, last.depth > open.count { ended.removeLast() }  // the parent ended
        let flags = elements[index].flags
        guard byStartTag, flags.contains(.itemscope) || flags.contains(.itemprop), let name, !HTMLDocument.isVoid(name)
        else { return }
        ended.append((index, open.count, Array(UnsafeBufferPointer(start: name, count: Int(xmlStrlen(name))))))
    }

    /// Ends in the index the element a start tag of `kind` ends by the HTML standard and libxml2 has
    /// left open (`ImpliedEnd`), with what is open inside it. That element, when an item or property,
    /// is remembered as one ended at a start tag (what is inside it ends because it does).
    mutating func endImplied(by kind: ImpliedEnd) {
        guard let position = kind.endedElement(in: openNames) else { return }
        let outermost = open[position]
        let name = openNames[position]
        while open.count > position {
            end(popOpen(), name: nil, byStartTag: false)
        }
        let flags = elements[outermost].flags
        if flags.contains(.itemscope) || flags.contains(.itemprop) {
            ended.append((outermost, open.count, Array(UnsafeBufferPointer(start: name, count: Int(xmlStrlen(name))))))
        }
    }

    /// Whether the parser stands at a start tag it has not read yet (`<div`), and did not just read
    /// this element's own end tag (`</p>`, which can be followed by a start tag too).
    private func isEndedByStartTag(_ name: UnsafePointer<xmlChar>) -> Bool {
        guard let (_, cursor, end) = input(), end - cursor >= 2, cursor[0] == UInt8(ascii: "<"),
            (cursor[1] | 0x20) >= UInt8(ascii: "a"), (cursor[1] | 0x20) <= UInt8(ascii: "z")
        else { return false }
        return !isAtOwnEndTag(name)
    }

    /// Whether the parser has just read the end tag of `name` (`</p>`, `</P >`): the sender's own.
    private func isAtOwnEndTag(_ name: UnsafePointer<xmlChar>) -> Bool {
        guard let (base, cursor, _) = input(), cursor > base, cursor[-1] == UInt8(ascii: ">")
        else { return false }
        // Back to the `<` of the tag just read.
        var start = cursor - 1
        while start > base, start.pointee != UInt8(ascii: "<"), cursor - start < 4096 { start -= 1 }
        guard start.pointee == UInt8(ascii: "<"), start + 1 < cursor, start[1] == UInt8(ascii: "/") else {
            return false
        }
        var offset = 0
        while name[offset] != 0 {
            guard start + 2 + offset < cursor, start[2 + offset] | 0x20 == name[offset] | 0x20 else { return false }
            offset += 1
        }
        guard start + 2 + offset < cursor else { return false }
        let after = start[2 + offset]
        return after == UInt8(ascii: ">") || after.isASCIIWhitespace || after == UInt8(ascii: "/")
    }

    /// libxml2 found an end tag with no open element of its name. When it closes an item or property
    /// libxml2 ended early, that element is extended to here: over the siblings written after it that
    /// are complete (a sibling still open is left out with what follows, so the index stays a tree).
    mutating func unmatchedEndTag(_ name: UnsafePointer<xmlChar>) {
        guard !ended.isEmpty else { return }
        let length = Int(xmlStrlen(name))
        guard
            let position = ended.lastIndex(where: {
                $0.name.elementsEqual(UnsafeBufferPointer(start: name, count: length))
            })
        else { return }
        adopt(position)
    }

    /// Extends the ended element `ended[position]` over what was written after it, up to here.
    mutating func adopt(_ position: Int) {
        let (index, depth, _) = ended[position]
        ended.removeSubrange(position...)
        let limit = open.count > depth ? open[depth] : elements.count
        guard limit > Int(elements[index].end) else { return }
        elements[index].end = Int32(truncatingIfNeeded: limit)
        elements[index].textEnd = Int32(
            truncatingIfNeeded: limit < elements.count ? Int(elements[limit].textStart) : text.count)
        misnested.append(index)
    }

    mutating func start(_ name: UnsafePointer<xmlChar>, _ pairs: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard stack.count < maxElementDepth else {
            stop = .tooDeep
            if let context { xmlStopParser(context) }
            return
        }
        let endableKind = ImpliedEnd.endable(name)
        if openKinds.anyOpen, endableKind != .other || openKinds.paragraphs > 0 {
            let implied = ImpliedEnd.of(name)
            if openKinds.mayEnd(implied) { endImplied(by: implied) }
        }
        let kind = HTMLDocument.kind(name)
        let isScript = name[0] == UInt8(ascii: "s") && HTMLDocument.equals(name, "script")
        var marker = QuoteMarker.none
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
                            marker.merge(QuoteMarker.forID(attributeValue))
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
                    } else if name[0] == UInt8(ascii: "b"), let attributeValue, HTMLDocument.equals(attribute, "type"),
                        QuoteMarker.host(name) == .blockquote
                    {
                        marker.merge(QuoteMarker.forBlockquoteType(attributeValue))
                    }
                case UInt8(ascii: "c"), UInt8(ascii: "s"), UInt8(ascii: "d"):
                    if let attributeValue {
                        marker.merge(QuoteMarker.forAttribute(attribute, attributeValue, of: name))
                    }
                    if kind != .other, !has.value, HTMLDocument.isValueAttribute(attribute, of: kind) {
                        value = attributeValue
                        has.value = true
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
        switch marker {
        case .none: break
        case .element: if quoteDepth == nil { quoteDepth = open.count }
        case .rest: quotedFromHere = true
        }
        if quotedFromHere || quoteDepth != nil { flags.insert(.quoted) }
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
                attributeCount: UInt8(attributes.count - attributeStart), flags: flags, kind: kind, endable: endableKind
            ))
        open.append(index)
        openNames.append(name)
        stack.append(index)
        openKinds.opened(endableKind)
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

    /// Whether the `length` bytes at `bytes` are `literal` (which has that length).
    @inline(__always)
    static func equals(_ bytes: UnsafePointer<xmlChar>, _ literal: StaticString, length: Int) -> Bool {
        let expected = literal.utf8Start
        for offset in 0..<length where bytes[offset] != expected[offset] { return false }
        return true
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

    /// The void elements (HTML §13.1.2), which libxml2 ends right after their start tag.
    static func isVoid(_ name: UnsafePointer<xmlChar>) -> Bool {
        switch name[0] {
        case UInt8(ascii: "m"): equals(name, "meta")
        case UInt8(ascii: "l"): equals(name, "link")
        case UInt8(ascii: "i"): equals(name, "img") || equals(name, "input")
        case UInt8(ascii: "b"): equals(name, "br") || equals(name, "base")
        case UInt8(ascii: "h"): equals(name, "hr")
        case UInt8(ascii: "a"): equals(name, "area")
        case UInt8(ascii: "c"): equals(name, "col")
        case UInt8(ascii: "e"): equals(name, "embed")
        case UInt8(ascii: "p"): equals(name, "param")
        case UInt8(ascii: "s"): equals(name, "source")
        case UInt8(ascii: "t"): equals(name, "track")
        case UInt8(ascii: "w"): equals(name, "wbr")
        default: false
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
