import Foundation
import Reservations
import TestSupport
import Testing

@Suite("The corpus comparison rules themselves (corpus/README.md, How to compare)")
struct CorpusComparisonTests {
    @Test(arguments: [
        ("2027-03-04T20:15:00-08:00", "2027-03-05T04:15:00Z", true),  // same instant
        ("2027-03-04T20:15:00-08:00", "2027-03-04T20:15:00-07:00", false),
        ("2027-03-04T20:15:00", "2027-03-04T20:15:00-07:00", true),  // wall clock
        ("2027-03-04T20:15", "2027-03-04T20:15:00+01:00", true),
        ("2027-03-04T20:15:00", "2027-03-04T20:16:00", false),
        ("2027-03-04", "2027-03-04T23:59:00-08:00", true),  // a date alone matches that day
        ("2027-03-04", "2027-03-05T00:00:00-08:00", false),
    ])
    func times(expected: String, actual: String, same: Bool) {
        #expect(CorpusComparison.sameTime(expected: expected, actual: actual) == same)
    }

    @Test func textIsUnescapedAndCaseFolded() {
        #expect(CorpusComparison.folded("AT&amp;T  Park") == CorpusComparison.folded("at&t park"))
        #expect(CorpusComparison.folded("O&#39;Farrell &#x26; co") == "o'farrell & co")
        #expect(CorpusComparison.folded("A & B") == "a & b")
    }

    @Test func nullFieldsAreIgnoredAndExtrasCount() {
        let expected = [CorpusComparison.expected(["type": "train", "reservationId": "AB", "underName": NSNull()])]
        let found: [(flat: CorpusComparison.Flat, syntax: String)] = [
            (["type": "train", "reservationId": "AB", "underName": "Eva"], "json-ld"),
            (["type": "train", "reservationId": "AB", "underName": "Eva"], "microdata"),  // same in both: once
            (["type": "train", "reservationId": "CD"], "json-ld"),
        ]
        let (missing, extra) = CorpusComparison.compare(expected: expected, found: found)
        #expect(missing.isEmpty)
        #expect(extra.count == 1)
        let (nothingMissing, nothingExtra) = CorpusComparison.compare(expected: [], found: [])
        #expect(nothingMissing.isEmpty && nothingExtra.isEmpty)
        #expect(CorpusComparison.compare(expected: expected, found: []).missing.count == 1)
    }

    @Test func addressesCompareStreetAndLocality() {
        let expected = CorpusComparison.expected([
            "type": "lodging",
            "address": ["streetAddress": "333 O'Farrell St", "addressLocality": "San Francisco", "postalCode": "1"],
        ])
        let actual: CorpusComparison.Flat = [
            "type": "lodging", "address.streetAddress": "333 o'farrell st", "address.addressLocality": "SAN FRANCISCO",
        ]
        #expect(CorpusComparison.mismatches(expected: expected, actual: actual).isEmpty)
    }
}
