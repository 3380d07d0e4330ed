import Testing

@testable import GatewayServer

@Suite("LMTP delivery: the reply deadline")
struct LMTPDeliveryTests {
    @Test func aSlowDecisionIsLeftRunningAfterTheDeadline() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let slow = Task { () async throws -> Int in
            try await Task.sleep(for: .seconds(3))
            return 1
        }
        let outcome = await LMTPDelivery.first(slow, within: .milliseconds(50))
        #expect(outcome == nil)
        #expect(clock.now - start < .seconds(2))
        #expect(!slow.isCancelled)
        slow.cancel()
    }

    @Test func aQuickDecisionIsReturned() async throws {
        let quick = Task { () async throws -> Int in 42 }
        let outcome = await LMTPDelivery.first(quick, within: .seconds(5))
        #expect((try? outcome?.get()) == 42)
    }
}
