internal import CLibXML2

/// How mail clients mark the earlier message in a reply or a forward, so that markup there is not read
/// as this message's (MARKUP.md "What is not a reservation"): the quoted part is someone's earlier
/// message, not the sender's assertion about this one.
///
/// - The element and what it contains (`element`): Apple Mail's and Thunderbird's
///   `<blockquote type="cite">`; the classes `gmail_quote` and `gmail_quote_container` (Gmail),
///   `moz-cite-prefix` and `moz-forward-container` (Thunderbird), `yahoo_quoted` (Yahoo), and
///   `protonmail_quote` (Proton Mail); the ids `OLK_SRC_BODY_SECTION` (Outlook for Mac) and
///   `mail-editor-reference-message-container` (the new Outlook).
/// - The element and everything after it in the document (`rest`), where the client puts a header
///   block above the earlier message rather than around it: the id `divRplyFwdMsg` (Outlook on the
///   web and Outlook 365), the class `OutlookMessageHeader` (older Outlook), Outlook's separator
///   `<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0in 0in 0in">`, and
///   Zimbra's `<hr data-marker="__DIVIDER__">`. `ForwardSeparator` adds the text lines.
enum QuoteMarker: Equatable {
    case none
    case element
    case rest

    /// The elements whose other attributes can mark a quote.
    enum Host {
        case other, div, hr, blockquote
    }

    static func host(_ name: UnsafePointer<xmlChar>) -> Host {
        switch name[0] {
        case UInt8(ascii: "d"): HTMLDocument.equals(name, "div") ? .div : .other
        case UInt8(ascii: "h"): HTMLDocument.equals(name, "hr") ? .hr : .other
        case UInt8(ascii: "b"): HTMLDocument.equals(name, "blockquote") ? .blockquote : .other
        default: .other
        }
    }

    /// Keeps the stronger of two markers (`rest` over `element` over `none`).
    mutating func merge(_ other: QuoteMarker) {
        if other == .rest || (other == .element && self == .none) { self = other }
    }

    static func forID(_ value: UnsafePointer<xmlChar>) -> QuoteMarker {
        switch value[0] {
        case UInt8(ascii: "d"): return HTMLDocument.equals(value, "divRplyFwdMsg") ? .rest : .none
        case UInt8(ascii: "O"): return HTMLDocument.equals(value, "OLK_SRC_BODY_SECTION") ? .element : .none
        case UInt8(ascii: "m"):
            return HTMLDocument.equals(value, "mail-editor-reference-message-container") ? .element : .none
        default: return .none
        }
    }

    /// `type="cite"` on a `blockquote`, in any case.
    static func forBlockquoteType(_ value: UnsafePointer<xmlChar>) -> QuoteMarker {
        let cite: StaticString = "cite"
        for offset in 0..<4 where value[offset] | 0x20 != cite.utf8Start[offset] { return .none }
        return value[4] == 0 ? .element : .none
    }

    /// `class` on any element, `style` on a `div`, `data-marker` on an `hr` (names starting c, s, d).
    static func forAttribute(_ name: UnsafePointer<xmlChar>, _ value: UnsafePointer<xmlChar>, host: Host) -> QuoteMarker {
        switch name[0] {
        case UInt8(ascii: "c"):
            return HTMLDocument.equals(name, "class") ? forClass(value) : .none
        case UInt8(ascii: "s"):
            return host == .div && HTMLDocument.equals(name, "style") && isOutlookSeparator(value) ? .rest : .none
        default:
            return host == .hr && HTMLDocument.equals(name, "data-marker") && HTMLDocument.equals(value, "__DIVIDER__")
                ? .rest : .none
        }
    }

    private static let elementClasses: [[UInt8]] = [
        "gmail_quote", "gmail_quote_container", "moz-cite-prefix", "moz-forward-container", "yahoo_quoted",
        "protonmail_quote",
    ].map { Array($0.utf8) }
    private static let restClasses: [[UInt8]] = [Array("OutlookMessageHeader".utf8)]

    /// The strongest marker among the class tokens (split on ASCII whitespace).
    private static func forClass(_ value: UnsafePointer<xmlChar>) -> QuoteMarker {
        var marker = QuoteMarker.none
        var index = 0
        while value[index] != 0 {
            while value[index] != 0, value[index].isASCIIWhitespace { index += 1 }
            let start = index
            while value[index] != 0, !value[index].isASCIIWhitespace { index += 1 }
            let first = value[start]
            // Most class tokens start with another letter: one comparison rules them out.
            guard first == UInt8(ascii: "g") || first == UInt8(ascii: "m") || first == UInt8(ascii: "y")
                || first == UInt8(ascii: "p") || first == UInt8(ascii: "O")
            else { continue }
            let token = UnsafeBufferPointer(start: value + start, count: index - start)
            if elementClasses.contains(where: { $0.elementsEqual(token) }) { marker.merge(.element) }
            if restClasses.contains(where: { $0.elementsEqual(token) }) { marker.merge(.rest) }
        }
        return marker
    }

    /// Outlook's (2007 and later, Windows Mail) reply separator: `border:none;border-top:solid <colour>
    /// 1.0pt;padding:3.0pt 0in 0in 0in`, compared without spaces and case.
    private static func isOutlookSeparator(_ value: UnsafePointer<xmlChar>) -> Bool {
        var index = 0
        while value[index] == 0x20 { index += 1 }
        guard value[index] | 0x20 == UInt8(ascii: "b") else { return false }  // most styles stop here
        var compact: [UInt8] = []
        while value[index] != 0, compact.count < 200 {
            if !value[index].isASCIIWhitespace { compact.append(value[index] | (value[index] >= 0x41 && value[index] <= 0x5A ? 0x20 : 0)) }
            index += 1
        }
        let prefix = Array("border:none;border-top:solid".utf8)
        let padding = Array("padding:3.0pt0".utf8)
        guard compact.starts(with: prefix), compact.count >= padding.count else { return false }
        for start in prefix.count...(compact.count - padding.count) where compact[start..<start + padding.count].elementsEqual(padding) {
            return true
        }
        return false
    }
}
