internal import Glibc

/// One non-blocking, close-on-exec socket; the descriptor is closed exactly once, when the value goes away.
struct Socket: ~Copyable {
    let descriptor: Int32

    /// - Parameter type: `SOCK_DGRAM` or `SOCK_STREAM`.
    init(family: NameserverAddress.Family, type: __socket_type, for server: NameserverAddress) throws(DNSError) {
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let flags = Int32(type.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(domain, flags, 0)
        guard descriptor >= 0 else {
            throw DNSError.network(errno, "could not open a socket for \(server)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

extension DNSError {
    /// A `.network` error naming the failed step and the system's words for `code`.
    static func network(_ code: Int32, _ context: String) -> DNSError {
        let explanation =
            code == ECONNREFUSED
            ? "connection refused (nothing listens on that port: is the DNS server running?)"
            : String(cString: strerror(code))
        return DNSError(code: .network, reason: "\(context): \(explanation)")
    }
}
