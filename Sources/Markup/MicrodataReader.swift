/// Reads Microdata items from an indexed HTML document, following the WHATWG HTML standard §5.2
/// "Microdata" (https://html.spec.whatwg.org/multipage/microdata.html):
///
/// - Top-level items are the elements with `itemscope` and no `itemprop` (§5.2.2), in tree order.
/// - "The properties of an item" (§5.2.5): crawl the item's children and the elements its `itemref`
///   names (by ID, the first in tree order), skipping elements already crawled (the cycle guard),
///   not descending into elements with `itemscope`, collecting elements with property names; then
///   sort them in tree order.
/// - Property names are the `itemprop` tokens, split on ASCII whitespace, duplicates removed; one
///   longer than `maxStringLength` is left out (`markup.string-too-long`).
/// - Property values (§5.2.4): an element with `itemscope` is a nested item; `meta` → `content`;
///   `audio embed iframe img source track video` → `src`; `a area link` → `href`; `object` → `data`;
///   `data meter` → `value`; `time` → `datetime` if present, else its child text content; any other
///   element → its `textContent`. URLs are kept as written (no base URL to resolve against).
/// - Types are the `itemtype` tokens as written; a token that is not an absolute URL is kept with a
///   `markup.microdata-bare-itemtype` warning. `itemid` is the id, trimmed.
/// - Elements are crawled as the sender nested them where libxml2's tree differs: an item or property
///   the parser ended early (a `<div>` inside `<p itemscope>`) but whose own end tag comes later holds
///   what was written up to that end tag (`HTMLDocument`, `markup.microdata-misnested`).
/// - A top-level item in a quoted or forwarded part of a message (`QuoteMarker`, `ForwardSeparator`) is
///   not read (`markup.quoted-part`); `microdata[N]` counts it all the same.
///
/// Text values are trimmed of ASCII whitespace and runs of it inside collapse to one space (HTML
/// whitespace is layout, not content); attribute values get the same treatment.
///
/// An item that is (through `itemref`) a property of itself is left out with a warning where the
/// cycle closes, as the standard's JSON conversion does with its "ERROR" string. Bounds: items nest
/// at most `maxItemDepth` deep; every element visited while crawling costs one step of
/// `maxMicrodataSteps`; every item counts against `maxItems`/`maxNodes`, once per property name it
/// is the value of.
struct MicrodataReader {
    private let document: HTMLDocument
    private var state: ExtractionState
    private var steps: Int
    private var stepsExhausted = false
    /// Per element, the number of the crawl that last visited it: the standard's "memory".
    private var visited: [UInt32]
    private var crawl: UInt32 = 0
    /// The items being read, innermost last: the cycle guard for nested items.
    private var itemStack: [Int] = []
    private var path: [String] = []
    /// ID → first element with it, built at the first `itemref`.
    private var ids: [String: Int]?

    private init(document: HTMLDocument, state: ExtractionState) {
        self.document = document
        self.state = state
        self.steps = state.configuration.maxMicrodataSteps
        self.visited = [UInt32](repeating: 0, count: document.elements.count)
    }

    /// The top-level items of `document`, in tree order, reporting into `state`.
    static func read(_ document: HTMLDocument, state: inout ExtractionState) -> [SchemaNode] {
        guard document.hasItemscope else { return [] }
        var reader = MicrodataReader(document: document, state: state)
        var items: [SchemaNode] = []
        var number = 0
        for (index, element) in document.elements.enumerated()
        where element.flags.contains(.itemscope) && !element.flags.contains(.itemprop) {
            number += 1
            let path = "microdata[\(number)]"
            guard !element.flags.contains(.quoted) else {
                reader.state.warning(.quotedPart, path: path, MarkupExtractor.quotedMessage("Microdata item"))
                continue
            }
            guard !reader.stepsExhausted, reader.state.admitTopLevelItem(path: path) else { break }
            reader.path = [path]
            items.append(reader.item(at: index))
        }
        state = reader.state
        return items
    }

    private var currentPath: String { path.joined() }

    // MARK: Items

    /// The item whose element is `index` (which has `itemscope`).
    private mutating func item(at index: Int) -> SchemaNode {
        itemStack.append(index)
        defer { itemStack.removeLast() }
        reportMisnesting(index)
        var node = SchemaNode(types: [], syntax: .microdata)
        if let itemtype = document.attribute(index, .itemtype) {
            node.types = tokens(itemtype)
            for type in node.types where !type.contains(":") {
                state.warning(
                    .microdataBareItemtype, path: currentPath,
                    "itemtype '\(type.prefix(80))' is not an absolute URL; use https://schema.org/\(type.prefix(80))"
                )
            }
        }
        if let itemid = document.attribute(index, .itemid) {
            node.id = normalized(itemid)
        }
        // Name → index in `node.properties`: `SchemaNode.append`'s linear search is quadratic in an
        // item with many property names (300,000 took minutes).
        var positions: [String: Int] = [:]
        for property in properties(of: index) {
            guard let itemprop = document.attribute(property, .itemprop) else { continue }
            let names = propertyNames(itemprop)
            guard !names.isEmpty else { continue }
            path.append("." + names[0])
            defer { path.removeLast() }
            let nodesBefore = state.nodes
            guard let value = value(of: property) else { continue }
            // An item under several names is written out once per name, so each copy counts against
            // maxNodes: otherwise `itemprop="a b"` at each of k nesting levels makes 2^k nodes.
            let nodesInValue = state.nodes - nodesBefore
            for (number, name) in names.enumerated() {
                if number > 0 && nodesInValue > 0 {
                    let here = currentPath
                    guard state.admitNodes(nodesInValue, path: here) else { break }
                }
                if let position = positions[name] {
                    node.properties[position].values.append(value)
                } else {
                    positions[name] = node.properties.count
                    node.properties.append(SchemaProperty(name: name, values: [value]))
                }
            }
            if state.isFull || stepsExhausted { break }
        }
        return node
    }

    /// The value of property element `index`, or nil when it is left out (reported).
    private mutating func value(of index: Int) -> SchemaValue? {
        let element = document.elements[index]
        if element.flags.contains(.itemscope) {
            if itemStack.contains(index) {
                state.warning(
                    .microdataItemCycle, path: currentPath,
                    "this item is, through itemref, a property of itself; the repeated value was left out"
                )
                return nil
            }
            guard itemStack.count < state.configuration.maxItemDepth else {
                state.error(
                    .microdataTooDeep, path: currentPath,
                    "items nest deeper than \(state.configuration.maxItemDepth); the deeper item was left out"
                )
                return nil
            }
            let path = path  // made into text only if a limit is reached
            guard state.admitNode(path: path.joined()) else { return nil }
            return .node(item(at: index))
        }
        let text: ArraySlice<UInt8>
        if element.kind == .other { reportMisnesting(index) }
        switch element.kind {
        case .meta, .source, .link, .object, .value:
            text = document.attribute(index, .value) ?? []
        case .time:
            text = document.attribute(index, .value) ?? document.childText(index)[...]
        case .other:
            text = document.textContent(index)
        }
        let limit = state.configuration.maxStringLength
        guard text.count <= limit else {
            state.error(
                .stringTooLong, path: currentPath,
                "the value has \(text.count) bytes, more than the limit of \(limit); it was left out"
            )
            return nil
        }
        return .text(normalized(text))
    }

    /// Reports that element `index` was read as the sender nested it, not as libxml2 did (`HTMLDocument`).
    private mutating func reportMisnesting(_ index: Int) {
        guard !document.misnested.isEmpty, document.misnested.contains(index) else { return }
        state.warning(
            .microdataMisnested, path: currentPath,
            "the HTML parser ended this element before its end tag (a block such as <div> or <table> inside <p>, "
                + "<p> inside <b>, …); what was written up to its end tag was read as part of it, as written. "
                + "Nest the HTML validly")
    }

    // MARK: The properties of an item (§5.2.5)

    /// The elements that are properties of the item at `root`, in tree order.
    private mutating func properties(of root: Int) -> [Int] {
        crawl &+= 1
        if crawl == 0 {  // wrapped around: forget all earlier crawls
            for index in visited.indices { visited[index] = 0 }
            crawl = 1
        }
        visited[root] = crawl
        var pending: [Int] = []
        appendChildren(of: root, to: &pending)
        if document.elements[root].flags.contains(.itemref), let itemref = document.attribute(root, .itemref) {
            for id in tokens(itemref) {
                if let target = elementWithID(id) { pending.append(target) }
            }
        }
        var results: [Int] = []
        let elements = document.elements
        while let candidate = pending.popLast() {
            guard steps > 0 else {
                exhaustSteps()
                break
            }
            steps -= 1
            guard visited[candidate] != crawl else { continue }  // a microdata error: crawled already
            visited[candidate] = crawl
            let flags = elements[candidate].flags
            if !flags.contains(.itemscope) { appendChildren(of: candidate, to: &pending) }
            if flags.contains(.itemprop) { results.append(candidate) }
        }
        results.sort()
        return results
    }

    private func appendChildren(of index: Int, to pending: inout [Int]) {
        let elements = document.elements
        let end = Int(elements[index].end)
        var child = index + 1
        while child < end {
            pending.append(child)
            child = Int(elements[child].end)
        }
    }

    private mutating func elementWithID(_ id: String) -> Int? {
        if ids == nil {
            var table: [String: Int] = [:]
            for (index, element) in document.elements.enumerated() where element.flags.contains(.id) {
                guard let value = document.attribute(index, .id), !value.isEmpty else { continue }
                let key = String(decoding: value, as: UTF8.self)
                if table[key] == nil { table[key] = index }
            }
            ids = table
        }
        return ids?[id]
    }

    private mutating func exhaustSteps() {
        guard !stepsExhausted else { return }
        stepsExhausted = true
        state.error(
            .microdataTooComplex, path: currentPath,
            "reading the items took more than \(state.configuration.maxMicrodataSteps) element visits "
                + "(itemref fan-out); the rest was not read"
        )
    }

    // MARK: Text

    /// The unique tokens of an attribute value split on ASCII whitespace, in order.
    private func tokens(_ value: ArraySlice<UInt8>) -> [String] {
        var result: [String] = []
        var seen = Set<String>()  // a linear search per token is quadratic in a long attribute value
        var index = value.startIndex
        while index < value.endIndex {
            while index < value.endIndex, value[index].isASCIIWhitespace { index += 1 }
            let start = index
            while index < value.endIndex, !value[index].isASCIIWhitespace { index += 1 }
            if index > start {
                let token = String(decoding: value[start..<index], as: UTF8.self)
                if seen.insert(token).inserted { result.append(token) }
            }
        }
        return result
    }

    /// The property names of an `itemprop` value: its tokens, less those longer than
    /// `maxStringLength`, which are left out with `markup.string-too-long` as long text values are.
    private mutating func propertyNames(_ itemprop: ArraySlice<UInt8>) -> [String] {
        let limit = state.configuration.maxStringLength
        var names = tokens(itemprop)
        names.removeAll { name in
            let count = name.utf8.count
            guard count > limit else { return false }
            state.error(
                .stringTooLong, path: currentPath,
                "a property name has \(count) bytes, more than the limit of \(limit); it was left out")
            return true
        }
        return names
    }

    /// Trims ASCII whitespace and collapses each run of it inside to one space.
    private func normalized(_ bytes: ArraySlice<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var pendingSpace = false
        for byte in bytes {
            if byte.isASCIIWhitespace {
                pendingSpace = !output.isEmpty
            } else {
                if pendingSpace {
                    output.append(0x20)
                    pendingSpace = false
                }
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
