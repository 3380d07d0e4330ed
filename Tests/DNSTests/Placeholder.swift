import Testing

@Test func DNSTestsBuilds() { #expect(Bool(true)) }
