import Testing

@Test func GatewayIntegrationTestsBuilds() { #expect(Bool(true)) }
