internal import CLibXML2

/// How mail clients mark the earlier message in a reply or a forward, so that markup there is not read
/// as this message's (MARKUP.md "What is not a reservation"): the quoted part is someone's earlier
/// message, not the sender's assertion about this one.
///
/// - The element and what it contains (`element`): Apple Mail's and Thunderbird's
///   `<blockquote type="cite">`; on a `div` or `blockquote`, the classes `gmail_quote` and `gmail_quote_container` (Gmail),
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

    /// `class` on any element, `style` on a `div`, `data-marker` on an `hr` (attribute names starting
    /// c, s, d) of the element `element`.
    static func forAttribute(
        _ name: UnsafePointer<xmlChar>, _ value: UnsafePointer<xmlChar>, of element: UnsafePointer<xmlChar>
    ) -> QuoteMarker {
        switch name[0] {
        case UInt8(ascii: "c"):
            // The clients put their classes on a div or a blockquote (Outlook's header is a div too).
            guard element[0] == UInt8(ascii: "d") || element[0] == UInt8(ascii: "b"), HTMLDocument.equals(name, "class")
            else { return .none }
            let host = host(element)
            return host == .div || host == .blockquote ? forClass(value) : .none
        case UInt8(ascii: "s"):
            return value[0] != 0 && HTMLDocument.equals(name, "style") && host(element) == .div && isOutlookSeparator(value)
                ? .rest : .none
        default:
            return HTMLDocument.equals(name, "data-marker") && host(element) == .hr
                && HTMLDocument.equals(value, "__DIVIDER__") ? .rest : .none
        }
    }

    /// The strongest marker among the class tokens (split on ASCII whitespace). Every class attribute
    /// of every document comes here: a token is compared only when its length is one of the markers'.
    private static func forClass(_ value: UnsafePointer<xmlChar>) -> QuoteMarker {
        var marker = QuoteMarker.none
        var index = 0
        while value[index] != 0 {
            while value[index] != 0, value[index].isASCIIWhitespace { index += 1 }
            let start = index
            while value[index] != 0, !value[index].isASCIIWhitespace { index += 1 }
            let token = value + start
            switch index - start {
            case 11: if HTMLDocument.equals(token, "gmail_quote", length: 11) { marker.merge(.element) }
            case 12: if HTMLDocument.equals(token, "yahoo_quoted", length: 12) { marker.merge(.element) }
            case 15: if HTMLDocument.equals(token, "moz-cite-prefix", length: 15) { marker.merge(.element) }
            case 16: if HTMLDocument.equals(token, "protonmail_quote", length: 16) { marker.merge(.element) }
            case 20: if HTMLDocument.equals(token, "OutlookMessageHeader", length: 20) { marker.merge(.rest) }
            case 21:
                if HTMLDocument.equals(token, "gmail_quote_container", length: 21)
                    || HTMLDocument.equals(token, "moz-forward-container", length: 21)
                {
                    marker.merge(.element)
                }
            default: break
            }
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
