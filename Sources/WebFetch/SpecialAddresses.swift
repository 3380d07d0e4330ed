/// The one table of special-purpose address ranges, and the classification of an address by it.
///
/// Sources: RFC 6890 and the IANA IPv4/IPv6 Special-Purpose Address Registries, plus the
/// multicast (RFC 5771, RFC 4291 §2.7) and reserved ranges. Ranges that carry an IPv4 address
/// inside an IPv6 one (IPv4-mapped, NAT64, 6to4) are classified by the embedded IPv4 address,
/// so `::ffff:127.0.0.1` is loopback and `2002:a00:1::` is private, exactly like `127.0.0.1`
/// and `10.0.0.1`. Every entry is unit-tested in `SpecialAddressesTests`.
package enum SpecialAddresses {
    /// One row: a prefix, what it is, and where that is defined.
    package struct Range: Sendable, CustomStringConvertible {
        package let network: IPAddress
        package let prefixLength: Int
        package let category: AddressCategory
        /// For IPv6 prefixes that embed an IPv4 address: the bit offset of the 32-bit IPv4
        /// address counted from the most significant bit; the address is classified by it.
        package let embeddedIPv4Offset: Int?
        package let reference: String

        package var description: String { "\(network)/\(prefixLength)" }

        init(
            _ network: String, _ prefixLength: Int, _ category: AddressCategory, _ reference: String,
            embeddedIPv4At offset: Int? = nil
        ) {
            guard let address = IPAddress(network) else { preconditionFailure("bad table entry \(network)") }
            self.network = address
            self.prefixLength = prefixLength
            self.category = category
            self.embeddedIPv4Offset = offset
            self.reference = reference
        }
    }

    /// IPv4 (RFC 6890 §2.2.2 and registry). The first matching row wins; only `255.255.255.255`
    /// overlaps another row (`240.0.0.0/4`) and comes first.
    /// Globally reachable entries of the registry (192.31.196/24 AS112, 192.52.193/24 AMT,
    /// 192.175.48/24 AS112) are ordinary public unicast and are not listed.
    package static let ipv4: [Range] = [
        Range("255.255.255.255", 32, .broadcast, "RFC 919 §7, RFC 8190"),
        Range("0.0.0.0", 8, .unspecified, "RFC 1122 §3.2.1.3 (\"this network\")"),
        Range("10.0.0.0", 8, .privateNetwork, "RFC 1918"),
        Range("100.64.0.0", 10, .sharedAddressSpace, "RFC 6598"),
        Range("127.0.0.0", 8, .loopback, "RFC 1122 §3.2.1.3"),
        Range("169.254.0.0", 16, .linkLocal, "RFC 3927"),
        Range("172.16.0.0", 12, .privateNetwork, "RFC 1918"),
        Range("192.0.0.0", 24, .protocolAssignments, "RFC 6890 §2.2.2"),
        Range("192.0.2.0", 24, .documentation, "RFC 5737 (TEST-NET-1)"),
        Range("192.88.99.0", 24, .reserved, "RFC 7526 (deprecated 6to4 relay anycast)"),
        Range("192.168.0.0", 16, .privateNetwork, "RFC 1918"),
        Range("198.18.0.0", 15, .benchmarking, "RFC 2544"),
        Range("198.51.100.0", 24, .documentation, "RFC 5737 (TEST-NET-2)"),
        Range("203.0.113.0", 24, .documentation, "RFC 5737 (TEST-NET-3)"),
        Range("224.0.0.0", 4, .multicast, "RFC 5771"),
        Range("240.0.0.0", 4, .reserved, "RFC 1112 §4 (class E)"),
    ]

    /// IPv6 (RFC 6890 §2.2.3 and registry). The first matching row wins, so more specific rows
    /// come before the prefixes that contain them. An address no row matches is public only
    /// inside `2000::/3`, the only block IANA allocates for global unicast (RFC 4291 §2.4).
    package static let ipv6: [Range] = [
        Range("::", 128, .unspecified, "RFC 4291 §2.5.2"),
        Range("::1", 128, .loopback, "RFC 4291 §2.5.3"),
        Range("::ffff:0:0", 96, .publicUnicast, "RFC 4291 §2.5.5.2 (IPv4-mapped)", embeddedIPv4At: 96),
        // The NAT64 prefixes lie inside ::/8 (0064:ff9b::), so they come before it.
        Range("64:ff9b::", 96, .publicUnicast, "RFC 6052 §2.1 (well-known NAT64)", embeddedIPv4At: 96),
        Range("64:ff9b:1::", 48, .translation, "RFC 8215 (local-use NAT64)"),
        Range("::", 8, .reserved, "RFC 4291 §2.4 (incl. deprecated IPv4-compatible ::/96, RFC 4291 §2.5.5.1)"),
        Range("100::", 64, .discardOnly, "RFC 6666"),
        Range("2001:2::", 48, .benchmarking, "RFC 5180"),
        Range("2001::", 23, .protocolAssignments, "RFC 2928 (Teredo RFC 4380, ORCHIDv2 RFC 7343, ...)"),
        Range("2001:db8::", 32, .documentation, "RFC 3849"),
        Range("2002::", 16, .publicUnicast, "RFC 3056 §2 (6to4)", embeddedIPv4At: 16),
        Range("3fff::", 20, .documentation, "RFC 9637"),
        Range("fc00::", 7, .uniqueLocal, "RFC 4193"),
        Range("fe80::", 10, .linkLocal, "RFC 4291 §2.5.6"),
        Range("fec0::", 10, .uniqueLocal, "RFC 3879 (deprecated site-local)"),
        Range("ff00::", 8, .multicast, "RFC 4291 §2.7"),
    ]

    /// Global unicast: `2000::/3` (RFC 4291 §2.4, IANA IPv6 Address Space registry).
    static let globalUnicast = IPAddress.v6(UInt128(0x2000) << 112)

    /// What an address is, and the row that said so (nil for plain public unicast).
    package struct Classification: Sendable {
        package let category: AddressCategory
        package let range: Range?
        /// Where the address embeds an IPv4 address (IPv4-mapped, NAT64, 6to4), that address.
        package let embeddedIPv4: IPAddress?
    }

    /// Classifies an address by the tables above.
    package static func classify(_ address: IPAddress) -> Classification {
        switch address {
        case .v4:
            guard let row = ipv4.first(where: { address.isIn($0.network, prefixLength: $0.prefixLength) }) else {
                return Classification(category: .publicUnicast, range: nil, embeddedIPv4: nil)
            }
            return Classification(category: row.category, range: row, embeddedIPv4: nil)
        case .v6(let value):
            guard let row = ipv6.first(where: { address.isIn($0.network, prefixLength: $0.prefixLength) }) else {
                if address.isIn(globalUnicast, prefixLength: 3) {
                    return Classification(category: .publicUnicast, range: nil, embeddedIPv4: nil)
                }
                return Classification(category: .reserved, range: nil, embeddedIPv4: nil)
            }
            if let offset = row.embeddedIPv4Offset {
                let embedded = IPAddress.v4(UInt32(truncatingIfNeeded: value >> (96 - offset)))
                let inner = classify(embedded)
                return Classification(category: inner.category, range: inner.range ?? row, embeddedIPv4: embedded)
            }
            return Classification(category: row.category, range: row, embeddedIPv4: nil)
        }
    }
}
