internal import CLibXML2

/// Where the HTML standard ends an element that its sender left open, and libxml2 2.9 does not
/// (HTML §13.2.6.4.7 "in body", §13.2.6.4.13–15 "in table body", "in row", "in cell"): a new `<li>`
/// ends an open `<li>`, a `<dt>`/`<dd>` an open `<dt>`/`<dd>`, a `<td>`/`<th>` the open cell of its
/// row, a `<tr>` the open row, a `<tbody>`/`<thead>`/`<tfoot>` the open section, and a block start tag
/// an open `<p>` — whatever inline elements were left open inside them (`<li><b>Ann<li>`).
///
/// libxml2 ends an element at such a start tag only when it is the innermost open element, so an
/// unclosed `<span>` in a cell makes every later row a descendant of that cell, and of an item the cell
/// may be. `HTMLDocument` ends them in its index where the standard does (libxml2's own tree is not
/// changed: the elements libxml2 ends later are already ended in the index).
struct ImpliedEnd {
    /// What an element is for these rules.
    enum Kind: UInt8 {
        case other, li, dt, dd, tr, cell, section, table, p, div, address
        /// A boundary of the standard's "button scope" besides `table` and the cells (applet, button,
        /// caption, html, marquee, object, template).
        case buttonScope
    }

    var kind: Kind
    /// In the standard's "special" category (§13.2.4.2), which stops the search for an open `<li>`.
    var isSpecial: Bool
    /// A start tag that ends an open `<p>` in button scope.
    var endsParagraph: Bool

    static let other = ImpliedEnd(kind: .other, isSpecial: false, endsParagraph: false)

    /// How many elements of the kinds a start tag can end are open, so that a search runs only when
    /// one is.
    struct OpenCounts {
        private var li = 0, definition = 0, tr = 0, cell = 0, section = 0
        private(set) var paragraphs = 0

        /// Whether any element a start tag can end is open.
        var anyOpen: Bool { li + definition + tr + cell + section + paragraphs > 0 }

        mutating func opened(_ kind: Kind) { add(kind, 1) }
        mutating func closed(_ kind: Kind) { add(kind, -1) }

        private mutating func add(_ kind: Kind, _ delta: Int) {
            switch kind {
            case .li: li += delta
            case .dt, .dd: definition += delta
            case .tr: tr += delta
            case .cell: cell += delta
            case .section: section += delta
            case .p: paragraphs += delta
            default: break
            }
        }

        /// Whether an element the start tag of `implied` ends may be open.
        func mayEnd(_ implied: ImpliedEnd) -> Bool {
            if implied.endsParagraph, paragraphs > 0 { return true }
            switch implied.kind {
            case .li: return li > 0
            case .dt, .dd: return definition > 0
            case .tr: return tr > 0
            case .cell: return cell > 0
            case .section: return section > 0
            default: return false
            }
        }
    }

    /// The kind of an element a start tag can end (`li`, `dt`, `dd`, `tr`, a cell, a table section, `p`),
    /// `.other` for every other element: cheap, as it runs for every element.
    static func endable(_ name: UnsafePointer<xmlChar>) -> Kind {
        switch name[0] {
        case UInt8(ascii: "p"): return name[1] == 0 ? .p : .other
        case UInt8(ascii: "l"): return name[1] == UInt8(ascii: "i") && name[2] == 0 ? .li : .other
        // `name[2]` only once `name[1]` is no NUL: a one-letter name ("d", "t") ends at `name[1]`, and the index scan
        // interns names with nothing after their NUL (a read past it was found by fuzz-markup under AddressSanitizer).
        case UInt8(ascii: "d"):
            guard name[1] != 0, name[2] == 0 else { return .other }
            return name[1] == UInt8(ascii: "t") ? .dt : name[1] == UInt8(ascii: "d") ? .dd : .other
        case UInt8(ascii: "t"):
            if name[1] != 0, name[2] == 0 {
                switch name[1] {
                case UInt8(ascii: "d"), UInt8(ascii: "h"): return .cell
                case UInt8(ascii: "r"): return .tr
                default: return .other
                }
            }
            return HTMLDocument.equals(name, "tbody") || HTMLDocument.equals(name, "thead")
                || HTMLDocument.equals(name, "tfoot") ? .section : .other
        default:
            return .other
        }
    }

    /// The position among the open elements (their `names`, innermost last) of the element `self`'s
    /// start tag ends, with everything open inside it; nil when it ends none.
    func endedElement(in names: [UnsafePointer<xmlChar>]) -> Int? {
        let open = names
        func kindAt(_ position: Int) -> ImpliedEnd { ImpliedEnd.of(names[position]) }
        switch kind {
        case .li, .dt, .dd:
            var position = open.count - 1
            while position >= 0 {
                let other = kindAt(position)
                let matches = kind == .li ? other.kind == .li : other.kind == .dt || other.kind == .dd
                if matches { return position }
                if other.isSpecial, other.kind != .address, other.kind != .div, other.kind != .p { break }
                position -= 1
            }
        case .tr, .cell, .section:
            var position = open.count - 1
            while position >= 0 {
                let other = kindAt(position).kind
                switch (kind, other) {
                case (.tr, .tr), (.cell, .cell), (.section, .section): return position
                case (_, .table), (.cell, .tr), (.tr, .section): return nil
                default: position -= 1
                }
            }
        default:
            break
        }
        guard endsParagraph else { return nil }
        var position = open.count - 1
        while position >= 0 {
            switch kindAt(position).kind {
            case .p: return position
            case .table, .cell, .buttonScope: return nil
            default: position -= 1
            }
        }
        return nil
    }

    /// Classifies an element by its (lowercase, NUL-terminated) name.
    static func of(_ name: UnsafePointer<xmlChar>) -> ImpliedEnd {
        func named(_ literal: StaticString) -> Bool { HTMLDocument.equals(name, literal) }
        func special(_ kind: Kind = .other, endsParagraph: Bool = false) -> ImpliedEnd {
            ImpliedEnd(kind: kind, isSpecial: true, endsParagraph: endsParagraph)
        }
        let block = special(endsParagraph: true)
        switch name[0] {
        case UInt8(ascii: "a"):
            if named("a") || named("abbr") { return .other }
            if named("address") { return special(.address, endsParagraph: true) }
            if named("article") || named("aside") { return block }
            if named("applet") { return special(.buttonScope) }
            if named("area") { return special() }
        case UInt8(ascii: "b"):
            if named("b") || named("big") { return .other }
            if named("br") || named("body") || named("base") || named("basefont") || named("bgsound") { return special() }
            if named("blockquote") { return block }
            if named("button") { return special(.buttonScope) }
        case UInt8(ascii: "c"):
            if named("caption") { return special(.buttonScope) }
            if named("center") { return block }
            if named("col") || named("colgroup") { return special() }
        case UInt8(ascii: "d"):
            if named("div") { return special(.div, endsParagraph: true) }
            if named("dd") { return special(.dd, endsParagraph: true) }
            if named("dt") { return special(.dt, endsParagraph: true) }
            if named("dl") || named("dir") || named("details") || named("dialog") { return block }
        case UInt8(ascii: "f"):
            if named("font") { return .other }
            if named("form") || named("footer") || named("fieldset") || named("figure") || named("figcaption") {
                return block
            }
            if named("frame") || named("frameset") { return special() }
        case UInt8(ascii: "h"):
            if name[1] >= UInt8(ascii: "1"), name[1] <= UInt8(ascii: "6"), name[2] == 0 { return block }
            if named("hr") || named("header") || named("hgroup") { return block }
            if named("head") { return special() }
            if named("html") { return special(.buttonScope) }
        case UInt8(ascii: "i"):
            if named("i") { return .other }
            if named("img") || named("input") || named("iframe") { return special() }
        case UInt8(ascii: "k"):
            if named("keygen") { return special() }
        case UInt8(ascii: "l"):
            if named("li") { return special(.li, endsParagraph: true) }
            if named("listing") { return block }
            if named("link") { return special() }
        case UInt8(ascii: "m"):
            if named("main") || named("menu") { return block }
            if named("meta") { return special() }
            if named("marquee") { return special(.buttonScope) }
        case UInt8(ascii: "n"):
            if named("nav") { return block }
            if named("noscript") || named("noembed") || named("noframes") { return special() }
        case UInt8(ascii: "o"):
            if named("ol") { return block }
            if named("object") { return special(.buttonScope) }
        case UInt8(ascii: "p"):
            if named("p") { return special(.p, endsParagraph: true) }
            if named("pre") || named("plaintext") { return block }
            if named("param") { return special() }
        case UInt8(ascii: "s"):
            if named("span") || named("strong") || named("small") || named("s") || named("sup") || named("sub") {
                return .other
            }
            if named("section") || named("summary") || named("search") { return block }
            if named("script") || named("style") || named("select") || named("source") { return special() }
        case UInt8(ascii: "t"):
            if named("td") || named("th") { return special(.cell) }
            if named("tr") { return special(.tr) }
            if named("table") { return special(.table) }
            if named("tbody") || named("thead") || named("tfoot") { return special(.section) }
            if named("template") { return special(.buttonScope) }
            if named("textarea") || named("title") || named("track") { return special() }
        case UInt8(ascii: "u"):
            if named("ul") { return block }
        case UInt8(ascii: "w"):
            if named("wbr") { return special() }
        case UInt8(ascii: "x"):
            if named("xmp") { return block }
        default:
            break
        }
        return .other
    }
}
