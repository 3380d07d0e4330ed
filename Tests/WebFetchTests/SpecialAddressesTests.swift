import Testing

@testable import WebFetch

@Suite("Special-purpose address table")
struct SpecialAddressesTests {
    /// One address inside each row of the table (and at its edges), with the category expected.
    @Test(arguments: [
        // IPv4 (RFC 6890 and the IANA registry)
        ("0.0.0.0", AddressCategory.unspecified), ("0.255.255.255", .unspecified),
        ("10.0.0.0", .privateNetwork), ("10.255.255.255", .privateNetwork),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("169.254.169.254", .linkLocal), ("169.254.0.0", .linkLocal),
        ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
        ("192.0.0.9", .protocolAssignments), ("192.0.2.1", .documentation),
        ("192.88.99.1", .reserved), ("192.168.1.1", .privateNetwork),
        ("198.18.0.1", .benchmarking), ("198.19.255.255", .benchmarking),
        ("198.51.100.7", .documentation), ("203.0.113.200", .documentation),
        ("224.0.0.1", .multicast), ("239.255.255.255", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.254", .reserved), ("255.255.255.255", .broadcast),
        // IPv6 (RFC 6890 and the IANA registry)
        ("::", .unspecified), ("::1", .loopback), ("::2", .reserved), ("::127.0.0.1", .reserved),
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.1.2.3", .privateNetwork), ("::ffff:169.254.169.254", .linkLocal),
        ("64:ff9b::7f00:1", .loopback), ("64:ff9b::a9fe:a9fe", .linkLocal), ("64:ff9b:1::1", .translation),
        ("100::1", .discardOnly), ("2001::1", .protocolAssignments), ("2001:2::1", .benchmarking),
        ("2001:1ff:ffff::1", .protocolAssignments), ("2001:db8::1", .documentation),
        ("2002:7f00:1::", .loopback), ("2002:c0a8:101::1", .privateNetwork), ("3fff::1", .documentation),
        ("fc00::1", .uniqueLocal), ("fd12:3456::1", .uniqueLocal), ("fe80::1", .linkLocal),
        ("febf:ffff::1", .linkLocal), ("fec0::1", .uniqueLocal), ("ff02::1", .multicast), ("ff0e::1", .multicast),
        ("4000::1", .reserved), ("1000::1", .reserved), ("5f00::1", .reserved),
    ])
    func specialAddress(text: String, expected: AddressCategory) throws {
        let address = try #require(IPAddress(text))
        #expect(SpecialAddresses.classify(address).category == expected)
        #expect(!AddressPolicy.publicOnly.permits(address))
    }

    /// Public unicast, including the addresses just outside special ranges and embedded public IPv4.
    @Test(arguments: [
        "1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
        "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.255",
        "192.0.3.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255",
        "2606:4700:4700::1111", "2a00:1450:4001::1", "2001:200::1", "2001:dc8::1",
        "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "3fff:1000::1",
    ])
    func publicAddress(text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(SpecialAddresses.classify(address).category == .publicUnicast)
        #expect(AddressPolicy.publicOnly.permits(address))
    }

    @Test func embeddedIPv4IsReported() throws {
        let classification = SpecialAddresses.classify(try #require(IPAddress("::ffff:192.168.0.1")))
        #expect(classification.embeddedIPv4 == IPAddress("192.168.0.1"))
        #expect(classification.range?.description == "192.168.0.0/16")
    }

    @Test func noRowIsShadowedByAnEarlierOne() {
        // A row shadowed by an earlier one would never apply. Probe each row with an address it
        // contains that no more specific row claims: its network address + 2 (or the address
        // itself for single-address rows). Embedded-IPv4 rows answer for the IPv4 inside.
        for row in SpecialAddresses.ipv4 + SpecialAddresses.ipv6 where row.embeddedIPv4Offset == nil {
            let probe: IPAddress
            switch row.network {
            case .v4(let value): probe = row.prefixLength == 32 ? row.network : .v4(value + 2)
            case .v6(let value): probe = row.prefixLength == 128 ? row.network : .v6(value + 2)
            }
            let classification = SpecialAddresses.classify(probe)
            #expect(classification.range?.description == row.description, "\(row) is shadowed")
            #expect(classification.category == row.category)
        }
    }

    @Test func policyAllowsOnlyWhatItLists() throws {
        let loopback = try #require(IPAddress("127.0.0.1"))
        let mappedLoopback = try #require(IPAddress("::ffff:127.0.0.1"))
        let privateAddress = try #require(IPAddress("10.0.0.1"))
        #expect(AddressPolicy.allowingLoopback.permits(loopback))
        #expect(AddressPolicy.allowingLoopback.permits(mappedLoopback))
        #expect(!AddressPolicy.allowingLoopback.permits(privateAddress))
        #expect(AddressPolicy(allowing: [.privateNetwork]).permits(privateAddress))
        #expect(!AddressPolicy(allowing: [.privateNetwork]).permits(loopback))
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("::ffff:10.0.0.1", "::ffff:10.0.0.1"), ("fe80::1:2:3:4", "fe80::1:2:3:4"),
    ])
    func addressesParseAndPrintCanonically(text: String, canonical: String) throws {
        #expect(try #require(IPAddress(text)).description == canonical)
    }

    @Test(arguments: [
        "", "localhost", "127.1", "0x7f.0.0.1", "2130706433", "1.2.3.4.5", "256.0.0.1", "fe80::1%eth0", "[::1]", ":::",
    ])
    func onlyStrictAddressFormsParse(text: String) {
        #expect(IPAddress(text) == nil)
    }
}
