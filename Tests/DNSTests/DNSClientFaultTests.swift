import DNS
import TestSupport
import Testing

/// The client against servers that misbehave on purpose (FakeDNSResponder on 127.0.0.1).
@Suite struct DNSClientFaultTests {
    static let name = "sel._domainkey.example.test"
    static let key = [TXTRecord(strings: [bytes("v=DKIM1; "), bytes("p=MIGf")], ttl: 600)]

    @Test(arguments: [
        (UInt8(2), DNSError.Code.serverFailure, true), (5, .refused, true), (3, .nameNotFound, false),
        (4, .malformedResponse, true), (9, .malformedResponse, true),
    ])
    func responseCodesBecomeErrors(rcode: UInt8, code: DNSError.Code, temporary: Bool) async throws {
        try await withFakeDNSResponder(.responseCode(rcode)) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration(attempts: 2))
            let error = await lookupError { try await client.txtRecords(for: Self.name) }
            #expect(error?.code == code)
            #expect(error?.isTemporary == temporary)
            // A server that answered is not asked again in the next round.
            #expect(responder.statistics.udpQueries == 1)
        }
    }

    @Test func silenceTimesOutWithinTheDeadline() async throws {
        try await withFakeDNSResponder(.silence) { responder async throws in
            let client = DNSClient(
                configuration: responder.clientConfiguration(timeout: .milliseconds(200), attempts: 2))
            let start = ContinuousClock.now
            let error = await lookupError { try await client.txtRecords(for: Self.name) }
            let elapsed = ContinuousClock.now - start
            #expect(error?.code == .timeout)
            #expect(error?.isTemporary == true)
            #expect(elapsed >= .milliseconds(390))
            #expect(elapsed < .milliseconds(1500))
            #expect(responder.statistics.udpQueries == 2)
        }
    }

    @Test func truncatedAnswerIsAskedAgainOverTCP() async throws {
        try await withFakeDNSResponder(.truncatedOverUDP(Self.key)) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration())
            #expect(try await client.txtRecords(for: Self.name) == Self.key)
            #expect(responder.statistics.udpQueries == 1)
            #expect(responder.statistics.tcpQueries == 1)
        }
    }

    @Test func answerWithTheWrongIDIsIgnored() async throws {
        try await withFakeDNSResponder(.mismatchedIDFirst(Self.key)) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration())
            #expect(try await client.txtRecords(for: Self.name) == Self.key)
            #expect(responder.statistics.udpQueries == 1)
        }
    }

    @Test func answerToAnotherQuestionIsIgnored() async throws {
        try await withFakeDNSResponder(.mismatchedQuestionFirst(Self.key)) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration())
            #expect(try await client.txtRecords(for: Self.name) == Self.key)
            #expect(responder.statistics.udpQueries == 1)
        }
    }

    @Test func formatErrorToEDNSIsRetriedWithoutIt() async throws {
        try await withFakeDNSResponder(.formatErrorForEDNS(Self.key)) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration())
            #expect(try await client.txtRecords(for: Self.name) == Self.key)
            #expect(responder.statistics.udpQueries == 2)
            #expect(responder.statistics.queriesWithEDNS == 1)
        }
    }

    @Test func sendsEDNSByDefaultAndNotWhenDisabled() async throws {
        try await withFakeDNSResponder(.answer(Self.key)) { responder async throws in
            var configuration = responder.clientConfiguration()
            _ = try await DNSClient(configuration: configuration).txtRecords(for: Self.name)
            configuration.ednsPayloadSize = nil
            _ = try await DNSClient(configuration: configuration).txtRecords(for: Self.name)
            #expect(responder.statistics.udpQueries == 2)
            #expect(responder.statistics.queriesWithEDNS == 1)
        }
    }

    @Test func movesOnToTheNextNameserver() async throws {
        try await withFakeDNSResponder(.silence) { silent async throws in
            try await withFakeDNSResponder(.responseCode(2)) { failing async throws in
                try await withFakeDNSResponder(.answer(Self.key)) { answering async throws in
                    let configuration = DNSClient.Configuration(
                        nameservers: [silent.nameserver, failing.nameserver, answering.nameserver],
                        timeout: .milliseconds(200), attempts: 1)
                    #expect(try await DNSClient(configuration: configuration).txtRecords(for: Self.name) == Self.key)
                    #expect(silent.statistics.udpQueries == 1)
                    #expect(failing.statistics.udpQueries == 1)
                }
            }
        }
    }

    @Test func roundsRotateThroughTheNameservers() async throws {
        try await withFakeDNSResponder(.silence) { first async throws in
            try await withFakeDNSResponder(.silence) { second async throws in
                let configuration = DNSClient.Configuration(
                    nameservers: [first.nameserver, second.nameserver], timeout: .milliseconds(100), attempts: 2)
                let error = await lookupError {
                    try await DNSClient(configuration: configuration).txtRecords(for: Self.name)
                }
                #expect(error?.code == .timeout)
                #expect(first.statistics.udpQueries == 2)
                #expect(second.statistics.udpQueries == 2)
            }
        }
    }

    @Test func aServerErrorOutranksATimeoutFromAnotherServer() async throws {
        try await withFakeDNSResponder(.responseCode(2)) { failing async throws in
            try await withFakeDNSResponder(.silence) { silent async throws in
                let configuration = DNSClient.Configuration(
                    nameservers: [failing.nameserver, silent.nameserver], timeout: .milliseconds(100), attempts: 2)
                let error = await lookupError {
                    try await DNSClient(configuration: configuration).txtRecords(for: Self.name)
                }
                #expect(error?.code == .serverFailure)
                #expect(failing.statistics.udpQueries == 1)
                #expect(silent.statistics.udpQueries == 2)
            }
        }
    }

    @Test func aStoppedResponderIsAPromptNetworkError() async throws {
        let responder = try FakeDNSResponder(.answer(Self.key))
        let configuration = responder.clientConfiguration(timeout: .seconds(2), attempts: 2)
        responder.stop()
        let start = ContinuousClock.now
        let error = await lookupError { try await DNSClient(configuration: configuration).txtRecords(for: Self.name) }
        // The connected socket sees ICMP port-unreachable at once rather than waiting 2 × 2 s.
        #expect(error?.code == .network)
        #expect(error?.isTemporary == true)
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func anIPv6NameserverIsAskedOverIPv6() async throws {
        // Nothing listens on ::1 at the responder's port (it binds 127.0.0.1 only): ICMPv6 unreachable,
        // or no IPv6 loopback at all, is a prompt temporary failure of the IPv6 socket path.
        try await withFakeDNSResponder(.answer(Self.key)) { responder async throws in
            let configuration = DNSClient.Configuration(
                nameservers: [try NameserverAddress(ipAddress: "::1", port: responder.nameserver.port)],
                timeout: .milliseconds(300), attempts: 1)
            let error = await lookupError {
                try await DNSClient(configuration: configuration).txtRecords(for: Self.name)
            }
            #expect(error?.code == .network || error?.code == .timeout)
            #expect(error?.isTemporary == true)
            #expect(responder.statistics.udpQueries == 0)
        }
    }

    @Test func invalidNamesAreRejectedBeforeAnythingIsSent() async throws {
        try await withFakeDNSResponder(.answer(Self.key)) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration())
            for name in ["", "a..b", String(repeating: "x", count: 64) + ".test"] {
                #expect(await lookupError { try await client.txtRecords(for: name) }?.code == .invalidName)
            }
            #expect(responder.statistics.udpQueries == 0)
        }
    }

    @Test func noNameserversIsAnError() async {
        let client = DNSClient(configuration: DNSClient.Configuration(nameservers: []))
        #expect(await lookupError { try await client.txtRecords(for: Self.name) }?.code == .network)
    }

    @Test func cancellationEndsAWaitingLookup() async throws {
        try await withFakeDNSResponder(.silence) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration(timeout: .seconds(10)))
            let start = ContinuousClock.now
            let task = Task { await lookupError { try await client.txtRecords(for: Self.name) } }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            let error = await task.value
            #expect(error?.code == .cancelled)
            #expect(error?.isTemporary == true)
            #expect(ContinuousClock.now - start < .seconds(2))
        }
    }

    @Test func aCNAMEChainFromTheServerIsFollowed() async throws {
        // sel._domainkey.example.test CNAME sel.keys.test; sel.keys.test TXT "v=DKIM1".
        let reply: @Sendable ([UInt8], Bool) -> [[UInt8]] = { query, _ in
            guard var message = TestDNSMessage.response(to: query) else { return [] }
            message[7] = 2  // ANCOUNT
            let target: [UInt8] =
                [3] + Array("sel".utf8) + [4] + Array("keys".utf8) + [0xC0, 12 + 1 + 3 + 1 + 10 + 1 + 7]
            message += [0xC0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, UInt8(target.count)] + target
            let targetOffset = UInt8(message.count - target.count)
            message += [0xC0, targetOffset, 0, 16, 0, 1, 0, 0, 1, 0, 0, 8, 7] + Array("v=DKIM1".utf8)
            return [message]
        }
        try await withFakeDNSResponder(.custom(reply)) { responder async throws in
            let client = DNSClient(configuration: responder.clientConfiguration())
            let records = try await client.txtRecords(for: Self.name)
            #expect(records == [TXTRecord(strings: [bytes("v=DKIM1")], ttl: 60)])
        }
    }
}
