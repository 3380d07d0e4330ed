import DNS
import Testing

@Suite struct NameserverAddressTests {
    @Test(arguments: [
        ("1.2.3.4:5353", "1.2.3.4", UInt16(5353), NameserverAddress.Family.ipv4, "1.2.3.4:5353"),
        ("1.2.3.4", "1.2.3.4", 53, .ipv4, "1.2.3.4:53"),
        ("[::1]:53", "::1", 53, .ipv6, "[::1]:53"),
        ("[::1]:5300", "::1", 5300, .ipv6, "[::1]:5300"),
        ("[2001:db8::1]", "2001:db8::1", 53, .ipv6, "[2001:db8::1]:53"),
        ("::1", "::1", 53, .ipv6, "[::1]:53"),
        ("2001:DB8:0:0::53", "2001:db8::53", 53, .ipv6, "[2001:db8::53]:53"),
        ("  127.0.0.1:53 \n", "127.0.0.1", 53, .ipv4, "127.0.0.1:53"),
        ("fe80::1%1", "fe80::1%1", 53, .ipv6, "[fe80::1%1]:53"),
    ])
    func parsesNameserverOption(
        _ option: String, host: String, port: UInt16, family: NameserverAddress.Family, description: String
    ) throws {
        let address = try NameserverAddress(parsing: option)
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.family == family)
        #expect(address.description == description)
    }

    @Test(arguments: [
        "localhost", "dns.example.com:53", "dns.example.com", "", "   ", "1.2.3.4:0", "1.2.3.4:65536", "1.2.3.4:",
        "1.2.3.4:abc", "1.2.3.4:+53", "1.2.3:53", "999.1.1.1", "[::1", "[::1]53", "[::1]:", "[1.2.3.4]:53",
        "[localhost]:53", "fe80::1%no-such-interface0", "1.2.3.4%lo",
    ])
    func rejectsWhatIsNotAnIPLiteralWithPort(_ option: String) {
        #expect(thrownError { try NameserverAddress(parsing: option) }?.code == .invalidNameserver)
    }

    @Test func hostNameErrorSaysWhy() throws {
        let error = try #require(thrownError { try NameserverAddress(parsing: "dns.example.com:53") })
        #expect(error.code == .invalidNameserver)
        #expect(!error.isTemporary)
    }

    @Test func equalAddressesCompareEqual() throws {
        #expect(try NameserverAddress(parsing: "127.0.0.1") == .localhost)
        #expect(try NameserverAddress(parsing: "[::1]:53") == NameserverAddress(parsing: "::1"))
        #expect(try NameserverAddress(parsing: "127.0.0.1:54") != .localhost)
    }
}
