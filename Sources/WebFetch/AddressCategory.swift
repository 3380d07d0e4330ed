/// What kind of address an IP address is, by the IANA special-purpose registries
/// (RFC 6890; IPv4 and IPv6 Special-Purpose Address Registries). Only `publicUnicast` is
/// globally reachable unicast; an ``AddressPolicy`` may allow some of the others.
package enum AddressCategory: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Globally routable unicast: the only category the production policy connects to.
    case publicUnicast = "public"
    /// `0.0.0.0/8`, `::/128`: "this host on this network"; connecting to it reaches the local host.
    case unspecified
    /// `127.0.0.0/8`, `::1/128`.
    case loopback
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    case privateNetwork = "private"
    /// RFC 6598 carrier-grade NAT: `100.64/10`.
    case sharedAddressSpace = "shared-address-space"
    /// `169.254/16` (cloud metadata services live here), `fe80::/10`.
    case linkLocal = "link-local"
    /// RFC 4193 `fc00::/7`, and the deprecated site-local `fec0::/10` (RFC 3879) that played its role.
    case uniqueLocal = "unique-local"
    /// TEST-NET-1/2/3 (RFC 5737), `2001:db8::/32` (RFC 3849), `3fff::/20` (RFC 9637).
    case documentation
    /// `198.18/15` (RFC 2544), `2001:2::/48` (RFC 5180).
    case benchmarking
    /// `224/4` (RFC 5771), `ff00::/8` (RFC 4291 §2.7).
    case multicast
    /// `255.255.255.255` (RFC 919).
    case broadcast
    /// `192.0.0/24` (RFC 6890 §2.2.2), `2001::/23` (RFC 2928; Teredo, ORCHID, ...).
    case protocolAssignments = "protocol-assignments"
    /// Local-use IPv4/IPv6 translation `64:ff9b:1::/48` (RFC 8215).
    case translation
    /// The discard-only prefix `100::/64` (RFC 6666).
    case discardOnly = "discard-only"
    /// Reserved or unallocated: `240/4` (RFC 1112), the 6to4 relay anycast `192.88.99/24`
    /// (RFC 7526), the rest of `::/8`, and all IPv6 outside `2000::/3` not listed otherwise.
    case reserved

    package var description: String { rawValue }
}
