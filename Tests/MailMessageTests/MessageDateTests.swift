import Foundation
import MailMessage
import Testing

/// The `Date:` field's date-time (RFC 5322 §3.3 and the obsolete forms of §4.3).
@Suite("Message dates")
struct MessageDateTests {
    @Test(arguments: [
        ("Wed, 04 Nov 2026 10:00:00 +0000", 1_793_786_400),
        ("Tue, 03 Nov 2026 18:02:11 -0800", 1_793_757_731),
        ("4 Nov 2026 10:00 +0100", 1_793_782_800),  // no day name, no seconds
        ("Wed,  4 Nov 2026\r\n 10:00:00 GMT", 1_793_786_400),  // folded, an obsolete zone name
        ("Wed, 04 Nov 26 05:00:00 EST (Eastern)", 1_793_786_400),  // two-digit year, a comment
        ("Wed, 04 Nov 2026 10:00:00 -0000", 1_793_786_400),  // -0000: the zone is unknown, read as UTC
    ])
    func datesRealMailUsesAreRead(text: String, seconds: Int) {
        #expect(MessageDate.parse(text) == Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    @Test(arguments: [
        "", "yesterday", "31 Feb 2026 10:00:00 +0000", "04 Nov 2026 25:00:00 +0000", "04 Nov 2026 10:00:00 +01",
        "04 Nov 2026 10:00:00 +0160", "04 Nov 2026 10:00:00 -0 0", "Mon, 04 Foo 2026 10:00:00 +0000",
    ])
    func whatIsNotADateIsNil(text: String) {
        #expect(MessageDate.parse(text) == nil)
    }
}
