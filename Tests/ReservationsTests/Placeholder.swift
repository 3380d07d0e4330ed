import Testing

@Test func ReservationsTestsBuilds() { #expect(Bool(true)) }
