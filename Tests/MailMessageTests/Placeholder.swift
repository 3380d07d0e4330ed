import Testing

@Test func MailMessageTestsBuilds() { #expect(Bool(true)) }
