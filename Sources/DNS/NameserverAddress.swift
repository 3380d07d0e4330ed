internal import Glibc

/// A nameserver's IP address (IPv4, or IPv6 with an optional zone) and port.
///
/// Nameservers are always IP literals: resolving a nameserver's host name would itself need DNS.
package struct NameserverAddress: Sendable, Hashable, CustomStringConvertible {
    package enum Family: Sendable, Hashable {
        case ipv4
        case ipv6
    }

    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    let addressBytes: [UInt8]
    /// The IPv6 zone (interface index) of a link-local address, else 0 (RFC 4007 §11).
    let scopeID: UInt32
    package let port: UInt16
    /// The address in its canonical text form (`192.0.2.1`, `2001:db8::1`, `fe80::1%2`).
    package let host: String

    package var family: Family { addressBytes.count == 4 ? .ipv4 : .ipv6 }

    /// `127.0.0.1:53`, what resolv.conf(5) falls back to when it names no nameserver.
    package static let localhost = NameserverAddress(bytes: [127, 0, 0, 1], scopeID: 0, port: 53)

    /// `192.0.2.1:53` or `[2001:db8::1]:53`.
    package var description: String { family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)" }

    /// An address from an IP literal and a port.
    ///
    /// - Parameters:
    ///   - ipAddress: dotted-quad IPv4 or IPv6 text (RFC 4291 §2.2), optionally with `%zone` (an interface
    ///     name or index) for a link-local IPv6 address.
    ///   - port: defaults to 53.
    /// - Throws: `DNSError.invalidNameserver` when `ipAddress` is not an IP literal or the zone is unknown.
    package init(ipAddress: String, port: UInt16 = 53) throws(DNSError) {
        guard port != 0 else {
            throw DNSError(code: .invalidNameserver, reason: "nameserver port 0 is not a port; DNS uses 53")
        }
        var address = ipAddress
        var scopeID: UInt32 = 0
        if let percent = ipAddress.firstIndex(of: "%") {
            address = String(ipAddress[..<percent])
            let zone = String(ipAddress[ipAddress.index(after: percent)...])
            if let index = UInt32(zone) {
                scopeID = index
            } else {
                scopeID = if_nametoindex(zone)
                guard scopeID != 0 else {
                    throw DNSError(
                        code: .invalidNameserver,
                        reason: "nameserver '\(ipAddress)': no network interface is called '\(zone)'")
                }
            }
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        if !ipAddress.contains("%"), inet_pton(AF_INET, address, &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v4) { Array($0) }, scopeID: 0, port: port)
        } else if inet_pton(AF_INET6, address, &v6) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) }, scopeID: scopeID, port: port)
        } else {
            throw DNSError(
                code: .invalidNameserver,
                reason: "nameserver '\(ipAddress)' is not an IP address; give an IPv4 or IPv6 literal such as "
                    + "127.0.0.1 or ::1 (a host name would need DNS to find the DNS server)")
        }
    }

    /// Parses the `--nameserver` option: `HOST`, `HOST:PORT`, `[IPV6]`, `[IPV6]:PORT` or a bare IPv6 address.
    ///
    /// `1.2.3.4:5353`, `[::1]:53`, `::1` and `1.2.3.4` (port 53) are accepted. A bare IPv6 address takes
    /// no port (its colons are the address's own); bracket it to give one (RFC 3986 §3.2.2).
    /// - Throws: `DNSError.invalidNameserver` for a host name, a bad port or a malformed literal.
    package init(parsing option: String) throws(DNSError) {
        let text = option.trimmingASCIIWhitespace()
        guard !text.isEmpty else {
            throw DNSError(
                code: .invalidNameserver, reason: "the nameserver is empty; give HOST[:PORT], e.g. 127.0.0.1:53")
        }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw DNSError(
                    code: .invalidNameserver,
                    reason: "nameserver '\(text)' opens '[' without a closing ']'; write [::1]:53")
            }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            var port: UInt16 = 53
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else {
                    throw DNSError(
                        code: .invalidNameserver,
                        reason: "nameserver '\(text)' has '\(rest)' after ']'; write [IPV6]:PORT")
                }
                port = try Self.port(String(rest.dropFirst()), in: text)
            }
            var probe = in6_addr()
            let address = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
            guard inet_pton(AF_INET6, address, &probe) == 1 else {
                throw DNSError(
                    code: .invalidNameserver,
                    reason: "nameserver '\(text)': brackets hold an IPv6 address, and '\(host)' is not one")
            }
            try self.init(ipAddress: host, port: port)
            return
        }
        let colons = text.utf8.count(where: { $0 == UInt8(ascii: ":") })
        if colons >= 2 {
            try self.init(ipAddress: text)
        } else if colons == 1, let colon = text.firstIndex(of: ":") {
            let host = String(text[..<colon])
            let port = try Self.port(String(text[text.index(after: colon)...]), in: text)
            try self.init(ipAddress: host, port: port)
        } else {
            try self.init(ipAddress: text)
        }
    }

    init(bytes: [UInt8], scopeID: UInt32, port: UInt16) {
        addressBytes = bytes
        self.scopeID = scopeID
        self.port = port
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) != nil }
        let characters = text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
        var host = ok ? String(decoding: characters, as: UTF8.self) : "?"
        if scopeID != 0 { host += "%\(scopeID)" }
        self.host = host
    }

    private static func port(_ text: String, in option: String) throws(DNSError) -> UInt16 {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let port = UInt16(text), port != 0
        else {
            throw DNSError(
                code: .invalidNameserver,
                reason: "nameserver '\(option)' has port '\(text)'; a port is a number from 1 to 65535")
        }
        return port
    }

    /// Calls `body` with this address as a `sockaddr_in` or `sockaddr_in6`.
    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        if addressBytes.count == 4 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: addressBytes) }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        address.sin6_scope_id = scopeID
        withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: addressBytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
    }
}

extension String {
    /// Drops spaces, tabs, CR and LF at both ends.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
