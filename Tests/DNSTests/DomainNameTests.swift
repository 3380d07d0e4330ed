import Testing

@testable import DNS

@Suite struct DomainNameTests {
    @Test func validNameBecomesLowercasedWireForm() throws {
        let name = try DomainName(validating: "Sel._DomainKey.Example.COM")
        #expect(
            name.wire == [3] + bytes("sel") + [10] + bytes("_domainkey") + [7] + bytes("example") + [3] + bytes("com")
                + [0])
        #expect(name.description == "sel._domainkey.example.com")
    }

    @Test func trailingDotIsOptional() throws {
        #expect(try DomainName(validating: "example.com.") == DomainName(validating: "example.com"))
    }

    @Test func longestLabelAndNameAreAccepted() throws {
        let label63 = String(repeating: "a", count: 63)
        #expect(try DomainName(validating: "\(label63).example").wire.count == 1 + 63 + 1 + 7 + 1)
        // 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 characters: the longest name (RFC 1035 §2.3.4).
        let name253 = [label63, label63, label63, String(repeating: "b", count: 61)].joined(separator: ".")
        #expect(name253.utf8.count == 253)
        #expect(try DomainName(validating: name253).wire.count == 255)
    }

    @Test(arguments: [
        "", ".", "a..b", ".example.com", "example..com.", String(repeating: "a", count: 64) + ".com",
        [String](repeating: String(repeating: "a", count: 63), count: 4).joined(separator: "."),
        "a b.example", "tab\t.example", "bücher.example", "nul\u{0}.example",
    ])
    func invalidNamesAreRejected(_ text: String) {
        #expect(thrownError { try DomainName(validating: text) }?.code == .invalidName)
    }

    @Test func descriptionEscapesUnprintableBytes() {
        let name = DomainName(lowercasedWire: [3, 0x61, 0x2E, 0x00, 2, 0x62, 0x63, 0])
        #expect(name.description == "a\\046\\000.bc")
    }
}
