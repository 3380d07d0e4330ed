import Testing

@Test func DKIMTestsBuilds() { #expect(Bool(true)) }
