import Foundation
internal import Glibc
import Synchronization

/// A port on 127.0.0.1 that was free a moment ago (bound to port 0, then released), and that
/// no other test of this process was handed: tests start their servers in parallel.
package func freePort() throws -> Int {
    while true {
        let socket = SocketDescriptor(family: AF_INET)
        defer { socket.close() }
        try socket.bind(port: 0)
        let port = try socket.port()
        if handedOutPorts.withLock({ $0.insert(port).inserted }) { return port }
    }
}

private let handedOutPorts = Mutex<Set<Int>>([])

/// A bare TCP socket on 127.0.0.1, for the servers that misbehave at the socket level.
package struct SocketDescriptor: Sendable {
    package let fd: Int32

    package init(family: Int32) {
        fd = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    package func bind(port: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    package func port() throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a TCP connection to 127.0.0.1:`port` succeeds right now.
    package static func canConnect(port: Int) -> Bool {
        let socket = SocketDescriptor(family: AF_INET)
        defer { socket.close() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket.fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    package func close() { _ = Glibc.close(fd) }
}

/// A server that accepts TCP connections into its backlog and never says a word: the "server
/// too slow" case, at every stage (no TLS handshake, no response). Closed when it goes away.
package struct SilentServer: ~Copyable {
    package let socket: SocketDescriptor
    package let port: Int

    package init() throws {
        socket = SocketDescriptor(family: AF_INET)
        do {
            try socket.bind(port: 0)
            guard listen(socket.fd, 16) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            port = try socket.port()
        } catch {
            socket.close()
            throw error
        }
    }

    deinit { socket.close() }
}
