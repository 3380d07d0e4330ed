import DNS
import TestSupport
import Testing

/// The client against a real DNS server (dnsmasq on 127.0.0.1).
@Suite struct DNSClientDNSMasqTests {
    static let shortKey =
        "v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDwIRP/UC3SBsEmGqZ9ZJW3/DkMoGeLnQg1fWn7/zYt"
    /// Base64 of a 3072-bit key is about 560 characters: more than two 255-byte strings.
    static let longKey =
        "v=DKIM1; k=rsa; p=" + String(repeating: "MIIBojANBgkqhkiG9w0BAQEFAAOCAY8AMIIBigKCAYEA", count: 13)

    @Test func readsASingleStringRecord() async throws {
        try await withDNSMasq(records: [.txt("sel._domainkey.example.test", Self.shortKey)]) { dnsmasq async throws in
            let client = DNSClient(configuration: dnsmasq.clientConfiguration())
            let records = try await client.txtRecords(for: "sel._domainkey.example.test")
            #expect(records.count == 1)
            #expect(records.first?.strings == [bytes(Self.shortKey)])
            #expect(records.first?.ttl == 300)
        }
    }

    @Test func joinsAMultiStringRecordLongerThan255Bytes() async throws {
        #expect(Self.longKey.utf8.count > 510)
        try await withDNSMasq(records: [.txt("big._domainkey.example.test", Self.longKey)]) { dnsmasq async throws in
            let client = DNSClient(configuration: dnsmasq.clientConfiguration())
            let record = try #require(try await client.txtRecords(for: "big._domainkey.example.test").first)
            #expect(record.strings.map(\.count) == [255, 255, Self.longKey.utf8.count - 510])
            #expect(record.text == Self.longKey)
        }
    }

    @Test func keepsExplicitStringsAndSeveralRecords() async throws {
        let records: [DNSMasq.Record] = [
            .txt(
                "multi.example.test",
                strings: ["v=DKIM1; ", "k=ed25519; ", "p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="]),
            .txt("multi.example.test", strings: ["second"]),
        ]
        try await withDNSMasq(records: records) { dnsmasq async throws in
            let client = DNSClient(configuration: dnsmasq.clientConfiguration())
            let found = try await client.txtRecords(for: "MULTI.Example.Test.")
            #expect(
                Set(found.map(\.strings)) == [
                    [
                        bytes("v=DKIM1; "), bytes("k=ed25519; "),
                        bytes("p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="),
                    ],
                    [bytes("second")],
                ])
        }
    }

    @Test func fallsBackToTCPWhenTheAnswerDoesNotFitUDP() async throws {
        // Without EDNS a UDP answer holds 512 bytes; dnsmasq truncates and the client must ask over TCP.
        try await withDNSMasq(records: [.txt("big._domainkey.example.test", Self.longKey)]) { dnsmasq async throws in
            var configuration = dnsmasq.clientConfiguration()
            configuration.ednsPayloadSize = nil
            let client = DNSClient(configuration: configuration)
            let records = try await client.txtRecords(for: "big._domainkey.example.test")
            #expect(records.map(\.text) == [Self.longKey])
        }
    }

    @Test func unknownNameIsNXDOMAINAndNameWithoutTXTIsNoData() async throws {
        let records: [DNSMasq.Record] = [
            .txt("sel._domainkey.example.test", "v=DKIM1"), .existing("host.example.test"),
        ]
        try await withDNSMasq(records: records) { dnsmasq async throws in
            let client = DNSClient(configuration: dnsmasq.clientConfiguration())
            let missing = await lookupError { try await client.txtRecords(for: "nope._domainkey.example.test") }
            #expect(missing?.code == .nameNotFound)
            #expect(missing?.isTemporary == false)
            let noData = await lookupError { try await client.txtRecords(for: "host.example.test") }
            #expect(noData?.code == .noData)
            #expect(noData?.isTemporary == false)
        }
    }

    @Test func cachedAnswersOutliveTheServer() async throws {
        let dnsmasq = try await DNSMasq.start(records: [.txt("sel._domainkey.example.test", "v=DKIM1; p=abc")])
        let cache = CachingResolver(
            upstream: DNSClient(configuration: dnsmasq.clientConfiguration(timeout: .milliseconds(300))))
        #expect(try await cache.txtRecords(for: "sel._domainkey.example.test").map(\.text) == ["v=DKIM1; p=abc"])
        dnsmasq.stop()
        #expect(try await cache.txtRecords(for: "sel._domainkey.example.test").map(\.text) == ["v=DKIM1; p=abc"])
        let uncached = await lookupError { try await cache.txtRecords(for: "other._domainkey.example.test") }
        #expect(uncached?.isTemporary == true)
    }

    @Test func aStoppedServerIsATemporaryFailure() async throws {
        let dnsmasq = try await DNSMasq.start(records: [])
        let configuration = dnsmasq.clientConfiguration(timeout: .milliseconds(300))
        dnsmasq.stop()
        let start = ContinuousClock.now
        let error = await lookupError {
            try await DNSClient(configuration: configuration).txtRecords(for: "a.example.test")
        }
        #expect(error?.code == .network || error?.code == .timeout)
        #expect(error?.isTemporary == true)
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func manyConcurrentLookupsAllSucceed() async throws {
        let records = (0..<20).map { DNSMasq.Record.txt("k\($0)._domainkey.example.test", "v=DKIM1; n=\($0)") }
        try await withDNSMasq(records: records) { dnsmasq async throws in
            let client = DNSClient(configuration: dnsmasq.clientConfiguration())
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let n = index % 20
                        return try await client.txtRecords(for: "k\(n)._domainkey.example.test").map(\.text) == [
                            "v=DKIM1; n=\(n)"
                        ]
                    }
                }
                var correct = 0
                for try await ok in group where ok { correct += 1 }
                #expect(correct == 100)
            }
        }
    }

    @Test func fixtureRejectsWhatDnsmasqCannotServe() async {
        await #expect(throws: FixtureError.self) {
            try await DNSMasq.start(records: [.txt("q.example.test", strings: ["has \"quotes\""])])
        }
        await #expect(throws: FixtureError.self) {
            try await DNSMasq.start(records: [.txt("q.example.test", strings: [String(repeating: "x", count: 256)])])
        }
    }
}
