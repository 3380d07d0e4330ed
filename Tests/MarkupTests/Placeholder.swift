import Testing

@Test func MarkupTestsBuilds() { #expect(Bool(true)) }
