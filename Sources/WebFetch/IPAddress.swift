#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// An IPv4 or IPv6 address: what a name resolved to, what a URL spelled literally, or what a
/// host map says. Stored as the number the address is (network byte order read as an integer),
/// so range checks are integer comparisons.
package enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)
    case v6(UInt128)

    /// Parses the strict textual forms: dotted-quad IPv4 (RFC 791; no octal, hex or short forms)
    /// and IPv6 (RFC 4291 §2.2, including an embedded dotted quad), without brackets or zone.
    /// Returns nil for anything else, so a caller never confuses a name with an address.
    package init?(_ text: String) {
        guard text.utf8.count <= 45 else { return nil }  // INET6_ADDRSTRLEN - 1
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(Self.integer(v6))
            return
        }
        return nil
    }

    /// Reads the 16 bytes of an `in6_addr` as one big-endian integer.
    static func integer(_ address: in6_addr) -> UInt128 {
        withUnsafeBytes(of: address) { bytes in
            var value: UInt128 = 0
            for byte in bytes { value = value << 8 | UInt128(byte) }
            return value
        }
    }

    /// The address in the socket API's form.
    var in6: in6_addr? {
        guard case .v6(let value) = self else { return nil }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { bytes in
            for index in 0..<16 { bytes[index] = UInt8(truncatingIfNeeded: value >> (8 * (15 - index))) }
        }
        return address
    }

    /// The canonical text: dotted quad, or RFC 5952 IPv6 (what `inet_ntop` prints).
    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch self {
        case .v4(let value):
            var address = in_addr(s_addr: value.bigEndian)
            guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        case .v6:
            guard var address = in6 else { return "?" }
            guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address as it appears in a URL authority: IPv6 in brackets (RFC 3986 §3.2.2).
    package var uriHost: String {
        switch self {
        case .v4: description
        case .v6: "[\(description)]"
        }
    }

    /// True when this address lies in `network/prefixLength` of the same family.
    func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
        switch (self, network) {
        case (.v4(let address), .v4(let base)):
            let mask: UInt32 = prefixLength == 0 ? 0 : ~0 << (32 - prefixLength)
            return address & mask == base & mask
        case (.v6(let address), .v6(let base)):
            let mask: UInt128 = prefixLength == 0 ? 0 : ~0 << (128 - prefixLength)
            return address & mask == base & mask
        default:
            return false
        }
    }
}
