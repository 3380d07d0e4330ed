internal import Glibc

/// Small socket helpers for fixtures that listen on 127.0.0.1.
enum Loopback {
    /// A socket bound to 127.0.0.1:`port` (0: the kernel picks a free port), or nil if the port is taken.
    static func bind(type: __socket_type, port: UInt16) throws(FixtureError) -> Int32? {
        let descriptor = socket(AF_INET, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw FixtureError("socket() failed: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            if code == EADDRINUSE { return nil }
            throw FixtureError("bind(127.0.0.1:\(port)) failed: \(String(cString: strerror(code)))")
        }
        return descriptor
    }

    /// The port a bound socket listens on.
    static func port(of descriptor: Int32) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// A UDP socket and a listening TCP socket on the same free port of 127.0.0.1.
    static func bindUDPAndTCP() throws(FixtureError) -> (udp: Int32, tcp: Int32, port: UInt16) {
        for _ in 0..<20 {
            guard let udp = try bind(type: SOCK_DGRAM, port: 0) else { continue }
            let port = port(of: udp)
            guard let tcp = try bind(type: SOCK_STREAM, port: port) else {
                close(udp)
                continue
            }
            guard listen(tcp, 16) == 0 else {
                close(udp)
                close(tcp)
                continue
            }
            return (udp, tcp, port)
        }
        throw FixtureError("found no port on 127.0.0.1 free for both UDP and TCP after 20 tries")
    }

    /// A port of 127.0.0.1 that is free for UDP and TCP right now (for a server started afterwards;
    /// another process may take it in between, so callers retry).
    static func freePort() throws(FixtureError) -> UInt16 {
        let (udp, tcp, port) = try bindUDPAndTCP()
        close(udp)
        close(tcp)
        return port
    }
}

/// A TCP and UDP port of 127.0.0.1 that nothing listens on right now (for a test that needs a refused connection).
package func unusedLoopbackPort() throws(FixtureError) -> Int {
    Int(try Loopback.freePort())
}
