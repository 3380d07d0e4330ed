import Foundation
import Testing

@testable import Markup

/// Markup in the quoted or forwarded part of a reply is not this message's (MARKUP.md "What is not a
/// reservation"). Each client marks that part its own way; the fixtures are replies and forwards as
/// each client writes them (quoted-printable HTML), with the restaurant's new booking KOK-5120 above
/// and the earlier confirmation KOK-4711 (JSON-LD and Microdata) quoted below.
@Suite("Quoted and forwarded parts of a message")
struct QuotedPartTests {
    static let clients = [
        "reply-gmail.eml", "forward-gmail.eml", "reply-apple-mail.eml", "reply-thunderbird.eml",
        "forward-thunderbird.eml", "reply-outlook-web.eml", "reply-outlook-desktop.eml", "reply-outlook-mac.eml",
        "reply-yahoo.eml", "reply-zimbra.eml", "forward-original-message-line.eml",
    ]

    @Test(arguments: clients)
    func onlyTheMessagesOwnMarkupIsRead(fixture: String) throws {
        let graph = try MarkupTestSupport.extract(message: try MarkupTestSupport.mail(fixture))
        #expect(graph.nodes.map { $0.text("reservationNumber") } == ["KOK-5120"])
        let quoted = graph.diagnostics.filter { $0.code == .quotedPart }
        #expect(Set(quoted.map(\.path)) == ["script[1]", "microdata[2]"], "\(graph.diagnostics)")
        #expect(quoted.allSatisfy { $0.severity == .warning })
        #expect(graph.diagnostics.count == quoted.count)
    }

    static func page(_ body: String) -> MarkupGraph {
        MarkupTestSupport.extract("<html><body>\(body)</body></html>")
    }

    static let item = #"<div itemscope itemtype="http://schema.org/Thing"><meta itemprop="name" content="x"></div>"#

    @Test(arguments: [
        #"<blockquote type="cite">ITEM</blockquote>"#,
        #"<BLOCKQUOTE TYPE="CITE">ITEM</BLOCKQUOTE>"#,
        #"<div class="a gmail_quote b">ITEM</div>"#,
        #"<div class="moz-forward-container">ITEM</div>"#,
        #"<div id="yahoo_quoted_1" class="yahoo_quoted">ITEM</div>"#,
        #"<div class="protonmail_quote">ITEM</div>"#,
        #"<div id="mail-editor-reference-message-container">ITEM</div>"#,
        #"<div id="divRplyFwdMsg">From: x</div><div>ITEM</div>"#,
        #"<div style="border:none; border-top:solid #B5C4DF 1.0pt; padding:3.0pt 0cm 0cm 0cm">From</div>ITEM"#,
        #"<div class="OutlookMessageHeader">From</div><table><tr><td>ITEM</td></tr></table>"#,
        "<p>---------- Forwarded message ---------</p>ITEM",
        "<p>-------- Ursprüngliche Nachricht --------</p>ITEM",
        "<p>----- original message -----</p><div><div>ITEM</div></div>",
    ])
    func eachMarker(body: String) {
        let graph = Self.page("<p>Hi</p>" + body.replacingOccurrences(of: "ITEM", with: Self.item))
        #expect(graph.nodes.isEmpty)
        #expect(graph.codes == ["markup.quoted-part"])
    }

    /// What only looks like a quote is the sender's own content.
    @Test(arguments: [
        "<blockquote>ITEM</blockquote>",  // a plain blockquote for layout
        #"<blockquote type="note">ITEM</blockquote>"#,
        #"<div class="quote gmail_quotes">ITEM</div>"#,
        "<p>----- Your booking -----</p>ITEM",
        "<p>Original Message</p>ITEM",
        #"<div style="border-top:solid #E1E1E1 1.0pt">ITEM</div>"#,
    ])
    func lookalikesAreRead(body: String) {
        let graph = Self.page(body.replacingOccurrences(of: "ITEM", with: Self.item))
        #expect(graph.nodes.count == 1)
        #expect(graph.diagnostics.isEmpty)
    }

    @Test func longRunsOfHyphensAreReadOnce() {
        // Layout rules of hyphens, and a 2 MB hostile run: each run is passed over once.
        let rule = String(repeating: "-", count: 70)
        let graph = Self.page(
            "<p>\(rule)</p>" + Self.item + "<p>\(String(repeating: "-", count: 2_000_000)) Original Message --</p>" + Self.item)
        #expect(graph.nodes.count == 1)
        #expect(graph.diagnostics.map(\.path) == ["microdata[2]"])
    }

    @Test func theQuoteEndsWithItsElement() {
        let graph = Self.page(#"<blockquote type="cite">\#(Self.item)</blockquote><p>Thanks!</p>\#(Self.item)"#)
        #expect(graph.nodes.count == 1)
        #expect(graph.diagnostics.map(\.path) == ["microdata[1]"])
    }

    @Test func numberingCountsTheQuotedItems() {
        let graph = Self.page(Self.item + #"<blockquote type="cite">\#(Self.item)</blockquote>"# + Self.item)
        #expect(graph.nodes.count == 2)
        #expect(graph.diagnostics.map(\.path) == ["microdata[2]"])
    }
}
